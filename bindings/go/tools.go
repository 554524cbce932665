// SPDX-License-Identifier: MIT

package idem

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var errBadConn = driver.ErrBadConn

// note is s as the package writes a note (the tool's error): at most
// idem_limits()'s note_max bytes, shortened.
func (c *Calls) note(s string) string {
	if len(s) <= c.noteMax {
		return s
	}
	return s[:c.noteMax-3] + "..."
}

// prepared is a call checked and keyed before anything is claimed.
type prepared struct {
	who, conv, tool, args string
	key, header           string
}

func (c *Calls) prepare(ctx context.Context, tool, who, conv string, args any) (prepared, error) {
	p := prepared{who: who, conv: conv, tool: tool}
	b, err := marshal(args, "the arguments of "+tool+" are", "args")
	if err != nil {
		return p, err
	}
	p.args = string(b)
	// The key and its header are the extension's (idem_key, idem_header).
	err = c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
		return cn.QueryRowContext(ctx, "SELECT k, idem_header(k) FROM (SELECT idem_key(?, ?, ?, ?) AS k)",
			who, conv, tool, p.args).Scan(&p.key, &p.header)
	})
	if err != nil {
		return p, fmt.Errorf("idem: the key of %s: %w", tool, refused(err))
	}
	if i := strings.Index(p.header, ": "); i >= 0 {
		p.header = p.header[i+2:]
	}
	return p, nil
}

func idOf(v any) any {
	if i, ok := v.(IDer); ok {
		return i.IdemID()
	}
	return nil
}

// transient: an error worth another attempt within the deadline (the
// database busy or unreachable, a lost COMMIT answer), as opposed to a
// refusal of the extension or the end of the deadline.
func transient(ctx context.Context, err error) bool {
	// An attempt's own deadline (AttemptTimeout) is transient: the
	// call's context decides.
	var ce *CallError
	if errors.As(err, &ce) || errors.Is(err, ErrLost) || errors.Is(err, ErrNotSent) || errors.Is(err, ErrFenced) {
		return false // the call's own outcome, not the database's trouble
	}
	return err != nil && ctx.Err() == nil && !isIdemError(err)
}

// ---- local tools --------------------------------------------------------

// LocalFunc is a local tool: a write into the same database, run inside
// the claim's transaction tx (it must not commit or roll it back).
type LocalFunc[A, R any] func(ctx context.Context, tx *sql.Tx, args A) (R, error)

// LocalTool is a local tool made idempotent: Call claims, runs the tool
// and records its result in one transaction.
type LocalTool[A, R any] struct {
	calls *Calls
	name  string
	fn    LocalFunc[A, R]
}

// Local makes fn an idempotent tool named name of the table c.
func Local[A, R any](c *Calls, name string, fn LocalFunc[A, R]) *LocalTool[A, R] {
	return &LocalTool[A, R]{calls: c, name: name, fn: fn}
}

// Call runs the tool once per (who, conv, args): the first arrival claims
// the call, runs fn and records its result, all in one transaction, and
// a duplicate gets that result back (Replayed) without running fn.  ctx's
// deadline bounds every statement, COMMIT included.
//
// If fn returns an error, its writes are rolled back and the call is
// recorded failed (released, so that a retry runs again; or kept, with
// the table option local_failure=keep): a *CallError with fn's error as
// its cause.  A COMMIT whose answer is lost is tried again within the
// deadline: the claim decides (its own earlier COMMIT shows as this
// arrival's outcome); past the deadline it is ErrCommitUnknown.  A COMMIT
// that the database keeps busy past the connection's busy timeout
// (_busy_timeout) is rolled back, with the tool's writes: a *CallError,
// Status "released", with the database's error as its cause.  A
// duplicate of a call not done gets a *CallError: errors.Is(err,
// ErrInProgress), ErrFailed.
func (t *LocalTool[A, R]) Call(ctx context.Context, who, conv string, args A) (Outcome[R], error) {
	if t == nil {
		return Outcome[R]{}, errors.New("idem: Call on a nil *LocalTool: make it with Local(calls, name, fn)")
	}
	return run(ctx, t.calls, t.name, t.fn == nil, "Local", who, conv, func() (Outcome[R], error) {
		return t.call(ctx, who, conv, args)
	})
}

// usable: what a tool's call needs before anything is claimed (a table,
// a function, a name; who, conv and the name as text, as Python and Node
// refuse a lone surrogate: stored as text that is not UTF-8, they break
// every reader that decodes it), or the mistake, in words that say which.
func usable(c *Calls, name string, noFn bool, made, who, conv string) error {
	const notText = "holds bytes that are not UTF-8, which is not text"
	switch {
	case name == "":
		return errors.New(`idem: a tool's name is a non-empty string, not ""`)
	case !utf8.ValidString(name):
		return fmt.Errorf("idem: the tool %q: its name %s", name, notText)
	case c == nil:
		return fmt.Errorf("idem: the tool %s has no table: %s(nil, ...)", name, made)
	case noFn:
		return fmt.Errorf("idem: the tool %s has no function: %s(calls, %q, nil)", name, made, name)
	case !utf8.ValidString(who):
		return fmt.Errorf("idem: %s: who %s", name, notText)
	case !utf8.ValidString(conv):
		return fmt.Errorf("idem: %s: conv %s", name, notText)
	}
	return nil
}

// run is the body of a tool's Call: what the call needs (usable), then f
// counted among the table's calls in flight (enter, leave: Close waits
// for them), answered by ctx's deadline (guard).
func run[R any](ctx context.Context, c *Calls, name string, noFn bool, made, who, conv string,
	f func() (Outcome[R], error)) (Outcome[R], error) {
	if err := usable(c, name, noFn, made, who, conv); err != nil {
		return Outcome[R]{}, err
	}
	if err := c.enter(); err != nil {
		return Outcome[R]{}, err
	}
	return guard(ctx, func() (Outcome[R], error) {
		defer c.leave()
		return f()
	})
}

// guard answers by ctx's deadline whatever a driver does past it (a
// connect loop, a Tx that ignores its context): f goes on in the
// background, and the answer is ErrCommitUnknown: its outcome is not
// known yet; call again, and the claim decides.
func guard[R any](ctx context.Context, f func() (Outcome[R], error)) (Outcome[R], error) {
	type res struct {
		o        Outcome[R]
		err      error
		panicked bool
		p        any
	}
	ch := make(chan res, 1)
	go func() {
		// A panic of the tool's (or of anything f calls) is carried to
		// the caller's goroutine, as if fn had been called there: in this
		// goroutine no recover() of the caller's could stop it from
		// ending the process.  f's defers have run by then (a local
		// call's transaction rolled back; an external call recorded).
		done := false
		defer func() {
			if !done {
				ch <- res{panicked: true, p: recover()}
			}
		}()
		o, err := f()
		done = true
		ch <- res{o: o, err: err}
	}()
	answer := func(r res) (Outcome[R], error) {
		if r.panicked {
			panic(r.p)
		}
		return r.o, r.err
	}
	select {
	case r := <-ch:
		return answer(r)
	case <-ctx.Done():
	}
	t := time.NewTimer(100 * time.Millisecond) // what is about to end, ends
	defer t.Stop()
	select {
	case r := <-ch:
		return answer(r)
	case <-t.C:
		return Outcome[R]{}, &sentinelWrap{ErrCommitUnknown, fmt.Errorf("the deadline passed before the outcome was known: %w", ctx.Err())}
	}
}

func (t *LocalTool[A, R]) call(ctx context.Context, who, conv string, args A) (Outcome[R], error) {
	c := t.calls
	p, err := c.prepare(ctx, t.name, who, conv, args)
	if err != nil {
		return Outcome[R]{}, err
	}
	token := c.token()
	for n := 0; ; n++ {
		out, err := t.attempt(ctx, p, token, args)
		if err == nil || !transient(ctx, err) || !pause(ctx, n) {
			if err != nil && ctx.Err() != nil && !errors.Is(err, ErrCommitUnknown) && n > 0 {
				err = fmt.Errorf("%w (the deadline ended the retries: %v)", ErrCommitUnknown, err)
			}
			return out, err
		}
	}
}

func (t *LocalTool[A, R]) attempt(pctx context.Context, p prepared, token string, args A) (Outcome[R], error) {
	c := t.calls
	var zero Outcome[R]
	ctx, cancel := c.attemptCtx(withCall(pctx, p.key, token))
	defer cancel()
	cn, err := c.db.Conn(ctx)
	if err != nil {
		return zero, err
	}
	tx, err := cn.BeginTx(ctx, nil)
	if err != nil {
		discard(cn)
		return zero, err
	}
	bad := true
	defer func() {
		// The Tx ends (ROLLBACK: nothing to undo after our COMMIT), then
		// its connection: discarded if it saw an error.  In the
		// background: a driver's Rollback may ignore every deadline.
		go func() {
			tx.Rollback()
			if bad {
				discard(cn)
			} else {
				cn.Close()
			}
		}()
	}()
	res, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO "+c.q+
		"(who, conv, tool, args, owner) VALUES(?, ?, ?, ?, ?)", p.who, p.conv, p.tool, p.args, token)
	if err != nil {
		return zero, refused(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return zero, err
	} else if n == 0 {
		r, ok, err := c.read(ctx, tx, p.key)
		if err != nil {
			return zero, err
		}
		bad = false
		if !ok {
			return zero, fmt.Errorf("%w: it was released meanwhile: try again", ErrNoCall)
		}
		out, err := replay[R](p.key, r)
		if r.owner == token { // our own COMMIT, whose answer was lost
			c.ownCommits.Add(1)
			out.Replayed = false
			if ce, isCE := err.(*CallError); isCE {
				ce.Replayed = false
			}
		}
		return out, err
	}
	exec := func(q string, a ...any) (int64, error) {
		r, err := tx.ExecContext(ctx, q, a...)
		if err != nil {
			return 0, err
		}
		return r.RowsAffected()
	}
	if _, err := exec("SAVEPOINT idem_tool"); err != nil {
		return zero, err
	}
	v, ferr := t.fn(ctx, tx, args)
	var text []byte
	var id any
	if ferr == nil {
		text, ferr = marshal(v, "the result of "+t.name+" is", "result")
	}
	if ferr == nil {
		id, ferr = sqlID(idOf(v), "the id of "+t.name)
	}
	if ferr != nil {
		if ctx.Err() != nil {
			return zero, ferr // all of it rolls back: released
		}
		if _, err := exec("ROLLBACK TO idem_tool"); err != nil {
			return zero, errors.Join(ferr, err)
		}
		if _, err := exec("RELEASE idem_tool"); err != nil {
			return zero, errors.Join(ferr, err)
		}
		m, err := exec("UPDATE "+c.q+" SET status = 'failed', note = ? WHERE key = ? AND member = 0 AND owner = ?",
			t.calls.note(ferr.Error()), p.key, token)
		if err != nil || m != 1 {
			return zero, errors.Join(ferr, refused(err), lostIf(m != 1 && err == nil))
		}
		r, kept, err := c.read(ctx, tx, p.key)
		if err != nil {
			return zero, errors.Join(ferr, err)
		}
		if err := commitLocal(ctx, tx, p.key, ferr); err != nil {
			return zero, err
		}
		bad = false
		if kept {
			return zero, callError(p.key, r, false, ferr)
		}
		return zero, &CallError{Key: p.key, Status: "released", Message: "the tool failed; its writes were rolled back and the call released: a retry runs again", Err: ferr}
	}
	m, err := exec("UPDATE "+c.q+" SET status = 'done', id = ?, result = ? WHERE key = ? AND member = 0 AND owner = ?",
		id, string(text), p.key, token)
	if err != nil {
		return zero, refused(err)
	}
	if m != 1 {
		return zero, ErrLost
	}
	if _, err := exec("RELEASE idem_tool"); err != nil {
		return zero, err
	}
	c.step(ctx, StepLocalCommit)
	if err := commitLocal(ctx, tx, p.key, nil); err != nil {
		return zero, err
	}
	bad = false
	c.step(ctx, StepLocalCommitted)
	return Outcome[R]{Result: v, ID: id, Key: p.key}, nil
}

// commitLocal ends a local call's transaction tx with a COMMIT statement
// under ctx (database/sql's Tx.Commit takes no context, and some drivers'
// wait forever on a lost leader); the caller then releases the Tx (its
// ROLLBACK finds nothing to undo).  A COMMIT
// that leaves its transaction open did not commit: SQLite keeps the
// transaction when the database stays busy past the connection's busy
// timeout (a reader of a rollback journal), which is all the wait there
// is, as in Python and Node (doc/contract.md §5).  It is rolled back
// here, the call released, and the answer is final: no other attempt
// runs the tool again.  Any other error (the transaction over: a lost
// answer) is the COMMIT's unknown outcome, which the next attempt's
// claim decides.  ferr: the tool's own error, when it failed.
func commitLocal(ctx context.Context, tx *sql.Tx, key string, ferr error) error {
	_, err := tx.ExecContext(ctx, "COMMIT")
	if err == nil {
		return nil
	}
	if _, rerr := tx.ExecContext(ctx, "ROLLBACK"); rerr != nil {
		return &sentinelWrap{ErrCommitUnknown, err}
	}
	return &CallError{Key: key, Status: "released",
		Message: "its COMMIT failed, and its writes and claim were rolled back: a retry runs it anew",
		Err:     errors.Join(ferr, err)}
}

func lostIf(b bool) error {
	if b {
		return ErrLost
	}
	return nil
}

// ---- external tools -------------------------------------------------------

// ExternalFunc is an external tool: a request to another system, sent
// with the header Idempotency-Key: idemKey (the value to send as it is).
// Return NotSent(err) when the request cannot have left, Fenced(err) when
// the target answered that it refuses the key for good; any other error
// leaves the call unknown.  fn must honour ctx.
type ExternalFunc[A, R any] func(ctx context.Context, idemKey string, args A) (R, error)

// ExternalTool is an external tool made idempotent: Call claims and
// commits, sends with the key, and records.
type ExternalTool[A, R any] struct {
	calls *Calls
	name  string
	fn    ExternalFunc[A, R]
	// HonoursKey declares that the target honours Idempotency-Key (it acts
	// on a key once, and answers a repeat with its first answer): the
	// claim sets honours_key = 1, and a call whose outcome is unknown (or
	// pending under an owner gone stale) is sent again with the same key
	// and the same request while the extension allows it (its resend_at,
	// max_sends, resend_after: contract §14), by this call or a duplicate,
	// within their deadline.  Left false, the table's option honours_key
	// decides.
	HonoursKey bool
}

// External makes fn an idempotent external tool named name of table c.
func External[A, R any](c *Calls, name string, fn ExternalFunc[A, R]) *ExternalTool[A, R] {
	return &ExternalTool[A, R]{calls: c, name: name, fn: fn}
}

// Call claims the call and commits the claim (durable before anything
// leaves), runs fn with the key, and records its result.  A duplicate
// never runs fn: it gets the first result (Replayed), or a *CallError
// (ErrInProgress, ErrUnknown).  ctx bounds every statement and the wait
// for fn; what is still owed past it (fn's answer, the record) is done in
// the background by this process, which stays the call's live owner:
// the answer is then ErrNotRecorded (pending).  A claim whose COMMIT
// answer was lost and cannot be confirmed before the deadline is
// answered ErrNotSent: nothing was sent (its release is queued).
func (t *ExternalTool[A, R]) Call(ctx context.Context, who, conv string, args A) (Outcome[R], error) {
	if t == nil {
		return Outcome[R]{}, errors.New("idem: Call on a nil *ExternalTool: make it with External(calls, name, fn)")
	}
	return run(ctx, t.calls, t.name, t.fn == nil, "External", who, conv, func() (Outcome[R], error) {
		return t.call(ctx, who, conv, args)
	})
}

func (t *ExternalTool[A, R]) call(ctx context.Context, who, conv string, args A) (Outcome[R], error) {
	c := t.calls
	var zero Outcome[R]
	p, err := c.prepare(ctx, t.name, who, conv, args)
	if err != nil {
		return zero, err
	}
	token := c.token()
	claimed := false // our claim may have committed
	for n := 0; ; n++ {
		out, mine, err := t.claim(ctx, p, token)
		if err == nil && !mine {
			return out, nil
		}
		if err == nil {
			break
		}
		if errors.Is(err, errResend) {
			return t.resend(ctx, p, args)
		}
		var ce *CallError
		if errors.As(err, &ce) {
			return out, err
		}
		if errors.Is(err, ErrCommitUnknown) {
			claimed = true
		}
		if !transient(ctx, err) || !pause(ctx, n) {
			if claimed && !isIdemError(err) {
				// Our claim may stand, and nothing was sent: release it.
				c.owe(&owed{key: p.key, token: token, release: true})
				return zero, NotSent(fmt.Errorf("the claim of %s was not confirmed before the deadline: %w", p.key, err))
			}
			return zero, hint(err)
		}
	}
	out, err := t.send(ctx, p, token, args, 1)
	if errors.Is(err, ErrUnknown) {
		if o, rerr := t.resend(ctx, p, args); rerr == nil || !errors.Is(rerr, ErrUnknown) {
			return o, rerr
		}
	}
	return out, err
}

// claim: (a replay, false), (_, true) when the call is this arrival's to
// send, or an error.
func (t *ExternalTool[A, R]) claim(ctx context.Context, p prepared, token string) (out Outcome[R], mine bool, err error) {
	c := t.calls
	honours := 0
	if t.HonoursKey {
		honours = 1
	}
	var r row
	var held bool
	cctx := withCall(ctx, p.key, token)
	err = c.inTxHook(ctx, func(cn *sql.Conn) error {
		q := "INSERT OR IGNORE INTO " + c.q + "(who, conv, tool, args, kind, owner) VALUES(?, ?, ?, ?, 'external', ?)"
		a := []any{p.who, p.conv, p.tool, p.args, token}
		if honours == 1 {
			q = "INSERT OR IGNORE INTO " + c.q + "(who, conv, tool, args, kind, owner, honours_key) VALUES(?, ?, ?, ?, 'external', ?, 1)"
		}
		res, err := cn.ExecContext(ctx, q, a...)
		if err != nil {
			return refused(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		held = true
		r, _, err = c.read(ctx, cn, p.key)
		return err
	}, func() {
		if !held {
			c.step(cctx, StepClaimCommit)
		}
	})
	if err != nil {
		return out, false, err
	}
	if !held {
		return out, true, nil
	}
	if r.status == "" {
		return out, false, fmt.Errorf("%w: it was released meanwhile: try again", ErrNoCall)
	}
	if r.status == "pending" && r.owner == token {
		c.ownClaims.Add(1)
		return out, true, nil // our claim's COMMIT took effect; its answer was lost
	}
	if r.status == "unknown" || r.status == "pending" {
		// A target that honours the key: the extension says whether, and
		// when, it may be sent again (resend_at; NULL: it may not).
		return out, false, errResend
	}
	out, err = replay[R](p.key, r)
	return out, false, err
}

var errResend = errors.New("idem: resend")

// resend takes a call of a target that honours the key for sending
// again, when and while the extension allows it: its resend_at (NULL when
// it may not be resent: not declared, sends exhausted per max_sends, or a
// pending call that is not stale) says when; the wait for it must fit in
// ctx.  Taking it is one UPDATE (reconcile = 'resend') under a new owner
// token, which fences every earlier owner: their records name their
// token.  The request is the identical one, with the identical key.  A
// refusal leaves the call as it is, and the answer is its replay
// (ErrUnknown, ErrInProgress) with the extension's refusal as the cause.
func (t *ExternalTool[A, R]) resend(ctx context.Context, p prepared, args A) (Outcome[R], error) {
	c := t.calls
	var last error
	for refusals := 0; ; {
		var r row
		var wait sql.NullFloat64
		var owner sql.NullString
		err := c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
			return cn.QueryRowContext(ctx, "SELECT status, owner, reply, id, result,"+
				" (julianday(resend_at) - julianday('now')) * 86400.0 FROM "+c.q+
				" WHERE key = ? AND member = 0", p.key).Scan(&r.status, &owner, &r.reply, &r.id, &r.result, &wait)
		})
		if err == sql.ErrNoRows {
			return Outcome[R]{Key: p.key}, fmt.Errorf("%w: it was released meanwhile: call again", ErrNoCall)
		}
		if err != nil {
			return Outcome[R]{Key: p.key}, err
		}
		r.owner = owner.String
		// resend_at is NULL for every call that may not be resent, a
		// decided one among them: the extension's word alone.
		if !wait.Valid || refusals >= c.resendRefusals {
			out, err := replay[R](p.key, r)
			if ce, ok := err.(*CallError); ok && last != nil {
				ce.Err = last
			}
			return out, err
		}
		if d := time.Duration(wait.Float64*float64(time.Second)) + 2*time.Millisecond; d > 0 {
			if dl, ok := ctx.Deadline(); ok && time.Now().Add(d).After(dl) {
				return replay[R](p.key, r) // not within this call's deadline
			}
			tm := time.NewTimer(d)
			select {
			case <-ctx.Done():
				tm.Stop()
				return replay[R](p.key, r)
			case <-tm.C:
			}
		}
		token := c.token()
		var n int64
		var sends int
		err = c.inTx(ctx, func(cn *sql.Conn) error {
			res, err := cn.ExecContext(ctx, "UPDATE "+c.q+" SET reconcile = 'resend', owner = ? WHERE key = ? AND member = 0",
				token, p.key)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil || n != 1 {
				return err
			}
			return cn.QueryRowContext(ctx, "SELECT sends FROM "+c.q+" WHERE key = ? AND member = 0", p.key).Scan(&sends)
		})
		if errors.Is(err, ErrCommitUnknown) {
			// Ours if the row is pending under our token: nothing sent yet.
			r2, ok, rerr := c.readFresh(ctx, p.key)
			if rerr == nil && ok && r2.status == "pending" && r2.owner == token {
				err = c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
					return cn.QueryRowContext(ctx, "SELECT sends FROM "+c.q+" WHERE key = ? AND member = 0", p.key).Scan(&sends)
				})
				n = 1
			}
		}
		if err != nil || n != 1 {
			if err != nil && !isIdemError(err) && !transient(ctx, err) {
				return replay[R](p.key, r)
			}
			last = refused(err)
			refusals++
			if !pause(ctx, refusals) {
				return replay[R](p.key, r)
			}
			continue
		}
		out, err := t.send(ctx, p, token, args, sends)
		if !errors.Is(err, ErrUnknown) {
			return out, err
		}
		last = err // unknown again: resend while the extension allows it
	}
}

// hint adds to a refusal of an external claim what a Go user needs to
// know about go-sqlite3's default.
func hint(err error) error {
	if err != nil && strings.Contains(err.Error(), "synchronous=NORMAL") {
		return fmt.Errorf("%w (github.com/mattn/go-sqlite3 opens every connection with synchronous=NORMAL"+
			" unless the DSN says otherwise: add _sync=FULL, e.g. \"file:app.db?_journal_mode=WAL&_sync=FULL\")", err)
	}
	return err
}

type answer[R any] struct {
	v   R
	err error
	p   *toolPanic // fn panicked: recorded unknown, then panicked again
}

// toolPanic is an external tool's panic, as the error that its call is
// recorded unknown with: the request may have left before it.
type toolPanic struct{ v any }

func (p *toolPanic) Error() string { return fmt.Sprintf("panic: %v", p.v) }

// send runs fn and records what it answered; sends counts the sends made.
func (t *ExternalTool[A, R]) send(ctx context.Context, p prepared, token string, args A, sends int) (Outcome[R], error) {
	c := t.calls
	if ctx.Err() != nil {
		// The deadline passed before anything left: release the call.
		c.owe(&owed{key: p.key, token: token, release: true})
		return Outcome[R]{Key: p.key}, NotSent(ctx.Err())
	}
	ch := make(chan answer[R], 1)
	stop := c.heartbeatWhile(p.key, token)
	cctx := withCall(ctx, p.key, token)
	c.step(cctx, StepClaimed)
	go func() {
		done := false
		defer func() {
			if !done {
				tp := &toolPanic{recover()}
				ch <- answer[R]{err: tp, p: tp}
			}
		}()
		v, err := t.fn(cctx, p.header, args)
		done = true
		ch <- answer[R]{v: v, err: err}
	}()
	var a answer[R]
	select {
	case a = <-ch:
	case <-ctx.Done():
		// The request may be out: this process stays its owner, waits for
		// fn's answer and records it in the background.
		c.later(func() *owed {
			o := t.outcome(p, token, <-ch)
			o.stop = stop
			return o
		})
		return Outcome[R]{Key: p.key}, &CallError{Key: p.key, Status: "pending", Err: ErrNotRecorded,
			Message: "the request is out and its answer not back by the deadline: this process records it"}
	}
	o := t.outcome(p, token, a)
	o.stop = stop
	if o.cause != nil {
		a.err = o.cause // the caller's cause: errors.Is ErrNotJSON
	}
	c.step(cctx, StepRecord)
	var err error
	for n := 0; ; n++ {
		if err = c.settle(ctx, o); err == nil || !transient(ctx, err) || !pause(ctx, n) {
			break
		}
	}
	if a.p != nil {
		if err != nil && !errors.Is(err, ErrLost) && !(!transient(ctx, err) && isIdemError(err)) {
			c.owe(o) // recorded later, as any answer not recorded now
		}
		panic(a.p.v) // to the caller (guard), once the call is recorded unknown
	}
	out := Outcome[R]{Key: p.key, Sends: sends}
	switch {
	case err == nil:
	case errors.Is(err, ErrLost):
		return out, errors.Join(err, a.err)
	case !transient(ctx, err) && isIdemError(err):
		if o.done {
			// The table refused the result: the request was made.
			o.done, o.status, o.note = false, "failed", t.calls.note("the tool returned, so its request was made, but its result could not be recorded: "+err.Error())
			c.owe(o)
		}
		return out, err
	default:
		c.owe(o)
		if o.done {
			out.Result, out.ID = a.v, o.id
			return out, &sentinelWrap{ErrNotRecorded, err}
		}
		return out, &CallError{Key: p.key, Status: "pending", Err: errors.Join(ErrNotRecorded, a.err)}
	}
	if o.release {
		return out, a.err // ErrNotSent or ErrFenced, with the tool's error
	}
	if !o.done {
		r, _, rerr := c.readFresh(ctx, p.key)
		if rerr != nil || r.status == "" {
			return out, &CallError{Key: p.key, Status: "unknown", Err: a.err}
		}
		return out, callError(p.key, r, false, a.err)
	}
	out.Result, out.ID = a.v, o.id
	return out, nil
}

// outcome is the record that fn's answer calls for.
func (t *ExternalTool[A, R]) outcome(p prepared, token string, a answer[R]) *owed {
	o := &owed{key: p.key, token: token}
	switch {
	case a.err == nil:
		text, err := marshal(a.v, "the result of "+t.name+" is", "result")
		var id any
		if err == nil {
			id, err = sqlID(idOf(a.v), "the id of "+t.name)
		}
		if err != nil {
			o.status, o.note = "failed", t.calls.note("the tool returned, so its request was made, but "+strings.TrimPrefix(err.Error(), "idem: "))
			o.cause = err
			return o
		}
		o.done, o.status, o.id, o.result = true, "done", id, string(text)
	case errors.Is(a.err, ErrFenced), errors.Is(a.err, ErrNotSent):
		o.release = true // the call's rows go: a release keeps no note
	default:
		o.status, o.note = "failed", t.calls.note(a.err.Error())
	}
	return o
}

// ---- what this process owes its calls -------------------------------------

// owed is a write this process owes a call it owns: a record (done, or
// failed: unknown) or a release, under its owner token.
type owed struct {
	key, token string
	done       bool
	status     string // done, failed
	id         any
	result     string
	note       string
	release    bool
	cause      error  // a result not JSON (ErrNotJSON)
	stop       func() // end the heartbeat once settled
}

// settle writes o once, within ctx: nil when it landed (now, or by an
// earlier attempt whose COMMIT answer was lost), ErrLost when the call is
// no longer ours, or the error to try again on.
func (c *Calls) settle(ctx context.Context, o *owed) error {
	var n int64
	err := c.inTx(ctx, func(cn *sql.Conn) error {
		var res sql.Result
		var err error
		switch {
		case o.release:
			// A release keeps nothing: the call's rows go (no note).
			res, err = cn.ExecContext(ctx, "UPDATE "+c.q+" SET reconcile = 'not_sent' WHERE key = ? AND member = 0 AND owner = ?",
				o.key, o.token)
		case o.done:
			res, err = cn.ExecContext(ctx, "UPDATE "+c.q+" SET status = 'done', id = ?, result = ? WHERE key = ? AND member = 0 AND owner = ?",
				o.id, o.result, o.key, o.token)
		default:
			res, err = cn.ExecContext(ctx, "UPDATE "+c.q+" SET status = 'failed', note = ? WHERE key = ? AND member = 0 AND owner = ?",
				o.note, o.key, o.token)
		}
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil && n == 1 {
		if o.stop != nil {
			o.stop()
		}
		return nil
	}
	if err != nil && !isIdemError(err) {
		return err // busy, unreachable, a lost COMMIT answer: try again
	}
	// No row of ours, or a refusal ("already decided", "unknown outcome"):
	// an earlier attempt of ours may have landed.  The row tells.
	r, ok, rerr := c.readFresh(ctx, o.key)
	if rerr != nil {
		return rerr
	}
	landed := false
	switch {
	case o.release:
		landed = !ok || r.owner != o.token
	case o.done:
		landed = ok && r.status == "done" && r.owner == o.token
	default:
		landed = ok && r.status == "unknown" && r.owner == o.token
	}
	if o.stop != nil && (landed || !ok || r.owner != o.token || r.status != "pending") {
		o.stop()
	}
	if landed {
		if err != nil || n != 1 {
			c.ownRecords.Add(1)
		}
		return nil
	}
	if ok && r.status == "pending" && r.owner == o.token {
		if err != nil {
			return refused(err)
		}
		return errors.New("idem: the record changed no row: try again")
	}
	return ErrLost
}

// owe hands o to the background, which retries it until it lands.
func (c *Calls) owe(o *owed) {
	c.mu.Lock()
	c.owed[o.key+"\x00"+o.token] = o
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// enter: a tool's call begins, or ErrClosed once Close was called (under
// mu, as Close closes: no call begins once Close waits for the others).
func (c *Calls) enter() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return closedError(c.table)
	default:
	}
	c.active++
	return nil
}

// closedError is ErrClosed, naming the table.
type closedError string

func (e closedError) Error() string {
	return "idem: the table " + string(e) + " is closed (Close was called): open it again with Open"
}
func (e closedError) Is(target error) bool { return target == ErrClosed }

// leave: a tool's call has ended (its goroutine, past any deadline).
func (c *Calls) leave() {
	c.mu.Lock()
	c.active--
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Owed is how many calls this process still owes a record or a release.
func (c *Calls) Owed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.owed) + c.waiting
}

func (c *Calls) settleLoop() {
	defer close(c.done)
	n := 0
	for {
		c.mu.Lock()
		todo := make(map[string]*owed, len(c.owed))
		for k, o := range c.owed {
			todo[k] = o
		}
		c.mu.Unlock()
		for k, o := range todo {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := c.settle(ctx, o)
			cancel()
			if err == nil || errors.Is(err, ErrLost) {
				c.mu.Lock()
				if c.owed[k] == o {
					delete(c.owed, k)
				}
				c.mu.Unlock()
			}
		}
		c.mu.Lock()
		left := len(c.owed) + c.waiting + c.active
		c.mu.Unlock()
		if left == 0 {
			n = 0
			select {
			case <-c.closed:
				return
			default:
			}
		}
		t := time.NewTimer(time.Duration(20<<min(n, 5)) * time.Millisecond)
		select {
		case <-c.wake:
		case <-t.C:
		case <-c.closed:
		}
		t.Stop()
		n++
	}
}

// later: fn's answer is not back by the deadline; this process waits
// for it and owes its record.
func (c *Calls) later(wait func() *owed) {
	c.mu.Lock()
	c.waiting++
	c.mu.Unlock()
	go func() {
		o := wait()
		c.mu.Lock()
		c.waiting--
		c.mu.Unlock()
		c.owe(o)
	}()
}

// Close waits until the tools' calls in flight have ended and this
// process has recorded or released every call it still owes (or ctx
// ends: then the calls stay pending under its tokens, and another
// process takes them over once their lease lapses).  A tool's call
// after Close is refused (ErrClosed); reading and reconciling go on.
func (c *Calls) Close(ctx context.Context) error {
	c.mu.Lock()
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("idem: %d calls still owed a record: %w", c.Owed(), ctx.Err())
	}
}

// heartbeatWhile touches the pending call (its `updated`, which the
// table's stale column reads) every Heartbeat, by default the table's
// heartbeat, until stop is called: the owner's lease.  None in a table
// without stale_after (c.beat 0), whose calls never go stale.
func (c *Calls) heartbeatWhile(key, token string) (stop func()) {
	if c.beat <= 0 || c.heartbeat < 0 {
		return func() {}
	}
	every := c.heartbeat
	if every == 0 {
		every = c.beat
	}
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tk.C:
				ctx, cancel := context.WithTimeout(context.Background(), every)
				c.inTx(ctx, func(cn *sql.Conn) error {
					_, err := cn.ExecContext(ctx, "UPDATE "+c.q+" SET note = note WHERE key = ? AND member = 0 AND owner = ? AND status = 'pending'", key, token)
					return err
				})
				cancel()
			}
		}
	}()
	return func() { once.Do(func() { close(quit) }) }
}

// NotSentIfDialFailed returns NotSent(err) when err says that no
// connection was made (a dial that failed: refused, no route, its
// timeout), so that nothing can have left; any other error as it is (the
// request may have left: the call stays unknown).
func NotSentIfDialFailed(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return NotSent(err)
	}
	return err
}
