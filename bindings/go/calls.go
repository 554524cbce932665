// SPDX-License-Identifier: MIT

package idem

// The protocol of doc/contract.md as a library over database/sql: the
// claim, the act and the record of a local tool in one transaction; the
// claim, the request and the record of an external one.  Every decision
// (may this call be recorded, released, reconciled, resent; is it stale;
// what does a duplicate get back) is the extension's: this file reads its
// answers (changes(), the reply column, its refusals) and orchestrates Go's
// transactions, contexts and errors around them.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// HeaderName is the header an external tool sends its key in.
const HeaderName = "Idempotency-Key"

// Calls is an idem claim table of one database, and the tools that use it.
// It is safe for concurrent use.  Close it to finish what it still owes
// its calls (records left for the background, see ErrNotRecorded).
type Calls struct {
	db    *sql.DB
	table string // as given
	q     string // quoted for SQL: "main"."name", never a temp table of that name

	// Owner prefixes every owner token of this Calls: "<Owner>/<random>/<n>".
	// By default the host name and process id.  A node of a cluster sets
	// its name here: Owned matches it exactly.
	owner string
	boot  string
	seq   atomic.Int64

	heartbeat time.Duration // see Heartbeat
	beat      time.Duration // the table's heartbeat (idem_options()); 0: none
	attempt   time.Duration // see AttemptTimeout
	onStep    func(context.Context, Step)

	// The limits the package keeps, read from the extension
	// (idem_limits()): the longest note it writes, in bytes, and how many
	// refused resends end a call's wait for its resend.
	noteMax, resendRefusals int
	// The statuses a call can have (idem_statuses()), in the order an
	// operator reads them: those List accepts.
	statuses []string

	ownCommits, ownClaims, ownRecords atomic.Int64

	mu      sync.Mutex
	owed    map[string]*owed // what this process still owes its calls
	waiting int              // tools whose answer is not back yet
	active  int              // tools' calls in flight (enter, leave)
	wake    chan struct{}
	closed  chan struct{}
	done    chan struct{}
}

// Option configures Open.
type Option func(*openOpts)

type openOpts struct {
	table     string
	names     []string // the options given, in lower case
	options   []string // each as name=value, as CREATE takes it
	owner     string
	heartbeat time.Duration
	attempt   time.Duration
	onStep    func(context.Context, Step)
}

// AttemptTimeout bounds each transaction attempt (and each connection
// made for it) within the call's context, so that one attempt stuck on a
// lost leader leaves time for another through the next one: a cluster's
// setting (doc/cluster.md).  0, the default: the call's context only.
func AttemptTimeout(d time.Duration) Option { return func(o *openOpts) { o.attempt = d } }

// Step is a point of a call's protocol, told to an OnStep function.
type Step string

// The steps, in the order a call meets them.
const (
	StepLocalCommit    Step = "local-before-commit"     // a local call's COMMIT is next
	StepLocalCommitted Step = "local-after-commit"      // it committed
	StepClaimCommit    Step = "ext-before-claim-commit" // an external claim's COMMIT is next
	StepClaimed        Step = "ext-after-claim-commit"  // it committed; the request is next
	StepRecord         Step = "ext-before-record"       // the tool answered; its record is next
)

// OnStep calls f at each Step of every call (tracing, or a test's fault
// injection), with the call's context: CallKey and CallOwner read it.
func OnStep(f func(ctx context.Context, step Step)) Option {
	return func(o *openOpts) { o.onStep = f }
}

type ctxKey int

const (
	keyCallKey ctxKey = iota
	keyCallOwner
)

func withCall(ctx context.Context, key, owner string) context.Context {
	return context.WithValue(context.WithValue(ctx, keyCallKey, key), keyCallOwner, owner)
}

// CallKey is the key of the call whose tool runs with ctx ("" outside a
// tool): a local tool may store it with its row.
func CallKey(ctx context.Context) string { s, _ := ctx.Value(keyCallKey).(string); return s }

// CallOwner is the owner token of the call whose tool runs with ctx.
func CallOwner(ctx context.Context) string { s, _ := ctx.Value(keyCallOwner).(string); return s }

func (c *Calls) step(ctx context.Context, s Step) {
	if c.onStep != nil {
		c.onStep(ctx, s)
	}
}

// attemptCtx is ctx bounded by the attempt timeout, if any.
func (c *Calls) attemptCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.attempt > 0 {
		return context.WithTimeout(ctx, c.attempt)
	}
	return context.WithCancel(ctx)
}

// Stats counts what this Calls recovered from lost COMMIT answers: local
// calls whose retry found their own COMMIT done, external claims found
// pending under their own token, records found already landed.
type Stats struct{ OwnCommits, OwnClaims, OwnRecords int64 }

// Stats returns the counters.
func (c *Calls) Stats() Stats {
	return Stats{c.ownCommits.Load(), c.ownClaims.Load(), c.ownRecords.Load()}
}

// Heartbeat sets how often the owner of a pending external call touches
// it (its `updated` column) while its request is out: its lease.  With
// the table option stale_after (which the extension reads to compute the
// stale column), a call whose owner stopped for stale_after is stale, and
// TakeOver hands it on.  The default is the extension's, the table's
// heartbeat in idem_options() (a third of stale_after, at least 100 ms;
// none without stale_after, where a call never goes stale, whatever is
// given here); a value given here overrides it (keep stale_after several
// heartbeats long), and a negative value turns the heartbeat off.
func Heartbeat(d time.Duration) Option { return func(o *openOpts) { o.heartbeat = d } }

// Table names the claim table (default "calls").
func Table(name string) Option { return func(o *openOpts) { o.table = name } }

// TableOption adds name=value to the CREATE VIRTUAL TABLE statement that
// makes the table when it is missing: TableOption("stale_after", "30
// seconds").  The extension checks the options before anything is made
// (idem_parse_options()) and Open refuses a bad one with its words, those
// of CREATE VIRTUAL TABLE (errors.Is ErrRefused).  A table that exists keeps
// the options it was created with: each option given must be its value
// there, as the extension parses both (the default, for an option its
// statement does not name), or Open fails with ErrTableOptions.
func TableOption(name, value string) Option {
	return func(o *openOpts) {
		o.names = append(o.names, strings.ToLower(name))
		o.options = append(o.options, name+"="+sqlString(value))
	}
}

// parsedOptions is the JSON of idem_parse_options() and idem_options().
type parsedOptions struct {
	Options   map[string]any    `json:"options"`
	Shown     map[string]string `json:"shown"`
	Heartbeat int64             `json:"heartbeat"` // ms; null (0): none
}

// optionError is an error of the table's options: its message as it is
// (the extension's own, or the comparison's), matching its sentinel.
type optionError struct {
	msg      string
	sentinel error
	err      error
}

func (e *optionError) Error() string        { return e.msg }
func (e *optionError) Is(target error) bool { return target == e.sentinel }
func (e *optionError) Unwrap() error        { return e.err }

// parseOptions: the options as CREATE VIRTUAL TABLE table USING
// idem(options) parses them, or its error (ErrRefused).
func parseOptions(ctx context.Context, db *sql.DB, table string, options []string) (parsedOptions, error) {
	var p parsedOptions
	args := []any{table}
	for _, o := range options {
		args = append(args, o)
	}
	var text string
	err := db.QueryRowContext(ctx, "SELECT idem_parse_options(?"+strings.Repeat(", ?", len(options))+")",
		args...).Scan(&text)
	if err != nil {
		if isIdemError(err) {
			return p, &optionError{msg: innermost(err).Error(), sentinel: ErrRefused, err: err}
		}
		return p, err
	}
	return p, json.Unmarshal([]byte(text), &p)
}

// checkOptions: each option given (names) has, in the table that exists
// (have, its idem_options()), the value the same parse gave it (given), or
// ErrTableOptions.
func (c *Calls) checkOptions(names, texts []string, given, have parsedOptions) error {
	for i, n := range names {
		if have.Options[n] != given.Options[n] {
			return &optionError{sentinel: ErrTableOptions, msg: fmt.Sprintf("idem: the table %s exists with %s,"+
				" not %s: a table's options are set when it is created; leave the option out to use the"+
				" table as it is, or use another table", quoteIdent(c.table), have.Shown[n], texts[i])}
		}
	}
	return nil
}

// Owner sets the prefix of this Calls' owner tokens (a node's name).  It
// may not contain '/'.
func Owner(name string) Option { return func(o *openOpts) { o.owner = name } }

// Open returns the claim table of db, created when missing.  Register must
// have run before db's first connection opened.
func Open(ctx context.Context, db *sql.DB, opts ...Option) (*Calls, error) {
	if db == nil {
		return nil, errors.New("idem: Open: the *sql.DB is nil")
	}
	o := openOpts{table: "calls"}
	for _, f := range opts {
		f(&o)
	}
	if o.table == "" {
		return nil, errors.New("idem: the table name is empty")
	}
	if o.owner == "" {
		h, _ := os.Hostname()
		o.owner = fmt.Sprintf("%s:%d", strings.ReplaceAll(h, "/", "_"), os.Getpid())
	}
	if !utf8.ValidString(o.owner) {
		return nil, fmt.Errorf("idem: the owner name %q holds bytes that are not UTF-8, which is not text", o.owner)
	}
	if strings.Contains(o.owner, "/") {
		return nil, fmt.Errorf("idem: the owner name %q contains '/', which separates the parts of an owner token", o.owner)
	}
	c := &Calls{db: db, table: o.table, q: `"main".` + quoteIdent(o.table), owner: o.owner, heartbeat: o.heartbeat, attempt: o.attempt, onStep: o.onStep,
		boot: randomHex(4), owed: map[string]*owed{},
		wake: make(chan struct{}, 1), closed: make(chan struct{}), done: make(chan struct{})}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT idem_version()").Scan(&v); err != nil {
		return nil, fmt.Errorf("idem: this database's connections lack idem (call idem.Register() first thing in main, before the first connection opens): %w", err)
	}
	var limits struct {
		NoteMax        int `json:"note_max"`
		ResendRefusals int `json:"resend_refusals"`
	}
	if err := db.QueryRowContext(ctx, "SELECT idem_limits()").Scan(&v); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(v), &limits); err != nil {
		return nil, err
	}
	if err := db.QueryRowContext(ctx, "SELECT idem_statuses()").Scan(&v); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(v), &c.statuses); err != nil {
		return nil, err
	}
	c.noteMax, c.resendRefusals = limits.NoteMax, limits.ResendRefusals
	given, err := parseOptions(ctx, db, o.table, o.options)
	if err != nil {
		return nil, err
	}
	stmt := "CREATE VIRTUAL TABLE IF NOT EXISTS " + c.q + " USING idem"
	if len(o.options) > 0 {
		stmt += "(" + strings.Join(o.options, ", ") + ")"
	}
	// Only when missing, in a transaction (a node of a replicated engine
	// keeps only what a transaction wrote: doc/cluster.md), and a COMMIT
	// whose answer was lost is judged by whether the table is there.
	exists := func() (bool, error) {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND lower(name) = lower(?)",
			o.table).Scan(&n)
		return n > 0, err
	}
	there, err := exists()
	if err == nil && !there {
		err = c.inTx(ctx, func(cn *sql.Conn) error {
			_, err := cn.ExecContext(ctx, stmt)
			return err
		})
		if errors.Is(err, ErrCommitUnknown) {
			if there, _ = exists(); there {
				err = nil
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("idem: %s: %w", stmt, err)
	}
	// The table's options, read once: made here, or by another connection
	// first with other options, its own are compared with those given;
	// its heartbeat is the extension's decision (doc/contract.md §11).
	var have parsedOptions
	if err := db.QueryRowContext(ctx, "SELECT idem_options(?, 'main')", o.table).Scan(&v); err != nil {
		return nil, refused(err)
	}
	if err := json.Unmarshal([]byte(v), &have); err != nil {
		return nil, err
	}
	if len(o.names) > 0 {
		if err := c.checkOptions(o.names, o.options, given, have); err != nil {
			return nil, err
		}
	}
	c.beat = time.Duration(have.Heartbeat) * time.Millisecond
	go c.settleLoop()
	return c, nil
}

// Name is the table's name.
func (c *Calls) Name() string { return c.table }

// DB is the database the table lives in.
func (c *Calls) DB() *sql.DB { return c.db }

// token is a new owner token: <owner>/<boot>/<n>.
func (c *Calls) token() string {
	return fmt.Sprintf("%s/%s/%d", c.owner, c.boot, c.seq.Add(1))
}

// OwnerPrefix is what every owner token of this Calls begins with.
func (c *Calls) OwnerPrefix() string { return c.owner + "/" }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func sqlString(s string) string  { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// ---- outcomes and errors ------------------------------------------------

// Outcome is what a tool call returns: the recorded result, the call's id
// column, its key, and Replayed: false for the arrival that ran the tool,
// true for a duplicate that got the first arrival's result without
// running it (the reply's "idempotent": true).  Sends is how many times
// the request of an external call was sent (0 for a local call, and for
// a replay).
type Outcome[R any] struct {
	Result   R
	ID       any
	Key      string
	Replayed bool
	Sends    int
}

// IDer is implemented by a tool's result that sets the call's id column
// (an order's row id, a target's charge id).
type IDer interface{ IdemID() any }

var (
	// ErrInProgress: the call is pending: its first arrival (or this one,
	// whose request is still out) has not recorded it yet.  Do not act;
	// call again later: a replay tells.
	ErrInProgress = errors.New("idem: the call is in progress")
	// ErrUnknown: an external call whose request may have reached the
	// target, and whose outcome is not known.  It is never sent again
	// unless its target honours the key; the target's records decide
	// (Reconcile).
	ErrUnknown = errors.New("idem: the call's outcome is unknown")
	// ErrFailed: a local call that failed and was kept as failed (the
	// table option local_failure=keep).
	ErrFailed = errors.New("idem: the call failed")
	// ErrNotSent: an external tool's word that its request did not leave
	// (wrap it: NotSent(err)).  The call is released: a retry runs.
	ErrNotSent = errors.New("idem: the request was not sent")
	// ErrFenced: the target's answer that it refuses the key from now on
	// (wrap it: Fenced(err)): no request with the key can take effect any
	// more, so the call is released as not sent.
	ErrFenced = errors.New("idem: the target fenced the key")
	// ErrCommitUnknown: a COMMIT whose answer was lost (an error, or the
	// deadline): it may have happened.  Call again with the same
	// arguments: the claim decides, and a replay shows the first result.
	// It is never "not done: send again".
	ErrCommitUnknown = errors.New("idem: the COMMIT's outcome is unknown: call again, the claim decides")
	// ErrLost: the call was no longer this arrival's when it came to
	// record its outcome (released, reconciled or taken over meanwhile):
	// nothing was recorded.
	ErrLost = errors.New("idem: the call is no longer this arrival's: its outcome was not recorded")
	// ErrNotRecorded: the outcome could not be recorded before the
	// deadline; this process keeps trying in the background (Close waits
	// for it).  The call stays pending under this process meanwhile.
	ErrNotRecorded = errors.New("idem: the outcome is not recorded yet: this process records it in the background")
	// ErrNoCall: no such call is claimed (never claimed, released, purged).
	ErrNoCall = errors.New("idem: no such call is claimed")
	// ErrClosed: a tool's call on a Calls after its Close, refused
	// before anything is claimed.
	ErrClosed = errors.New("idem: closed")
	// ErrRefused: the extension refused an operation; the error's text is
	// its message.
	ErrRefused = errors.New("idem: refused by the extension")
	// ErrTableOptions: Open was given a TableOption whose value is not the
	// table's: a table's options are set when it is created.
	ErrTableOptions = errors.New("idem: the table exists with other options")
)

// CallError is a call that did not end done: its key, status ("pending",
// "unknown", "failed"), the reply the extension hands a duplicate (a JSON
// object with the status and its message), whether it was a replay (a
// duplicate arrival) or this arrival's own outcome, and the cause (the
// tool's error, a database error).  errors.Is matches ErrInProgress,
// ErrUnknown or ErrFailed by its status, and its cause's sentinels.
type CallError struct {
	Key      string
	Status   string
	Message  string
	Reply    json.RawMessage
	Replayed bool
	Err      error
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("idem: call %s is %s", e.Key, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

func (e *CallError) Unwrap() error { return e.Err }

func (e *CallError) Is(target error) bool {
	switch e.Status {
	case "pending":
		return target == ErrInProgress
	case "unknown":
		return target == ErrUnknown
	case "failed":
		return target == ErrFailed
	}
	return false
}

type sentinelWrap struct {
	sentinel error
	err      error
}

func (w *sentinelWrap) Error() string {
	if w.err == nil {
		return w.sentinel.Error()
	}
	return w.sentinel.Error() + ": " + w.err.Error()
}
func (w *sentinelWrap) Unwrap() []error {
	if w.err == nil {
		return []error{w.sentinel}
	}
	return []error{w.sentinel, w.err}
}

// NotSent wraps err as the external tool's word that its request did not
// leave (a refused connection, a bad argument found before sending).
// Return it only when nothing can have left: a request that may have
// arrived must stay unknown.
func NotSent(err error) error { return &sentinelWrap{ErrNotSent, err} }

// Fenced wraps err as the target's answer that it refuses the call's key
// from now on (it had not seen it, and never will take it): the call is
// released as not sent.  A target that only says "not seen" has not
// fenced the key: a request may still be on its way.
func Fenced(err error) error { return &sentinelWrap{ErrFenced, err} }

// refused wraps an error of the extension (a refusal in its own words).
func refused(err error) error {
	if err == nil || !isIdemError(err) {
		return err
	}
	return &sentinelWrap{ErrRefused, err}
}

// isIdemError: the extension refused (its messages begin "idem: "), as
// opposed to the database being busy, unreachable or the deadline.
func isIdemError(err error) bool {
	if err == nil || errors.Is(err, ErrCommitUnknown) {
		return false // ours, around the database's error: not a refusal
	}
	if errors.Is(err, ErrRefused) {
		return true
	}
	// The database's own error, innermost: the package's wrappers begin
	// "idem: " too, around errors that are not refusals.
	return strings.Contains(innermost(err).Error(), "idem: ")
}

// innermost is the error err wraps, innermost (the database's own).
func innermost(err error) error {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err
}

// ---- the call's row -------------------------------------------------------

type row struct {
	status, owner string
	reply         string
	id            any
	result        sql.NullString
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read the call's main row; ok false when there is none.
func (c *Calls) read(ctx context.Context, q querier, key string) (r row, ok bool, err error) {
	var owner sql.NullString
	err = q.QueryRowContext(ctx, "SELECT status, owner, reply, id, result FROM "+c.q+
		" WHERE key = ? AND member = 0", key).Scan(&r.status, &owner, &r.reply, &r.id, &r.result)
	if err == sql.ErrNoRows {
		return r, false, nil
	}
	r.owner = owner.String
	if b, isBytes := r.id.([]byte); isBytes {
		r.id = string(b)
	}
	return r, err == nil, err
}

// replay makes a row into what a duplicate gets: its Outcome (done) or a
// CallError with the status and the extension's message.
func replay[R any](key string, r row) (Outcome[R], error) {
	var out Outcome[R]
	out.Key, out.Replayed = key, true
	if r.status == "done" {
		out.ID = r.id
		if r.result.Valid {
			if err := json.Unmarshal([]byte(r.result.String), &out.Result); err != nil {
				return out, fmt.Errorf("idem: call %s: its recorded result does not decode into %T: %w", key, out.Result, err)
			}
		}
		return out, nil
	}
	return out, callError(key, r, true, nil)
}

func callError(key string, r row, replayed bool, cause error) *CallError {
	var m struct {
		Message string `json:"message"`
	}
	json.Unmarshal([]byte(r.reply), &m)
	return &CallError{Key: key, Status: r.status, Message: m.Message,
		Reply: json.RawMessage(r.reply), Replayed: replayed, Err: cause}
}

// ---- transactions whose every statement has the deadline ------------------

// inTx runs body between BEGIN and COMMIT on one connection; ctx bounds
// every statement, COMMIT included (as plain statements: some drivers'
// Tx.Commit ignores every deadline).  A connection that saw an error is
// discarded.  An error of the COMMIT itself is ErrCommitUnknown.
func (c *Calls) inTx(ctx context.Context, body func(*sql.Conn) error) error {
	return c.inTxHook(ctx, body, nil)
}

func (c *Calls) inTxHook(pctx context.Context, body func(*sql.Conn) error, beforeCommit func()) error {
	return c.tx(pctx, body, beforeCommit, false)
}

// inTxBusy is inTx for a write whose caller retries nothing (an
// operator's verdict): a COMMIT that leaves its transaction open did not
// commit (the database kept busy past the connection's busy timeout, a
// reader of a rollback journal): it is rolled back and the database's
// error returned as it is, as Python and Node do (doc/contract.md §5),
// not ErrCommitUnknown.
func (c *Calls) inTxBusy(ctx context.Context, body func(*sql.Conn) error) error {
	return c.tx(ctx, body, nil, true)
}

func (c *Calls) tx(pctx context.Context, body func(*sql.Conn) error, beforeCommit func(), busyFinal bool) error {
	ctx, cancel := c.attemptCtx(pctx)
	defer cancel()
	cn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	bad := true
	defer func() {
		if bad {
			discard(cn)
		} else {
			cn.Close()
		}
	}()
	// IMMEDIATE: the write lock first, so that SQLite's busy handler waits
	// for it, instead of a read upgraded to a write failing at once.
	if _, err := cn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err := body(cn); err != nil {
		rollback(cn)
		return err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	if _, err := cn.ExecContext(ctx, "COMMIT"); err != nil {
		if busyFinal {
			if _, rerr := cn.ExecContext(ctx, "ROLLBACK"); rerr == nil {
				return err // still open: nothing was committed
			}
		}
		return &sentinelWrap{ErrCommitUnknown, err}
	}
	bad = false
	return nil
}

// onConn runs f on a connection of its own under the attempt deadline,
// again while its error is transient and ctx lasts; a connection that saw
// an error is discarded (on a cluster it may lead to a deposed leader).
func (c *Calls) onConn(ctx context.Context, f func(ctx context.Context, cn *sql.Conn) error) error {
	for n := 0; ; n++ {
		err := func() error {
			actx, cancel := c.attemptCtx(ctx)
			defer cancel()
			cn, err := c.db.Conn(actx)
			if err != nil {
				return err
			}
			if err := f(actx, cn); err != nil {
				discard(cn)
				return err
			}
			return cn.Close()
		}()
		if err == nil || err == sql.ErrNoRows || !transient(ctx, err) || !pause(ctx, n) {
			return err
		}
	}
}

// readFresh reads the call's main row on a connection of its own.
func (c *Calls) readFresh(ctx context.Context, key string) (r row, ok bool, err error) {
	err = c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
		var err error
		r, ok, err = c.read(ctx, cn, key)
		return err
	})
	return r, ok, err
}

func rollback(cn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cn.ExecContext(ctx, "ROLLBACK")
}

// discard closes cn and keeps it out of the pool.
func discard(cn *sql.Conn) {
	cn.Raw(func(any) error { return errBadConn })
	cn.Close()
}

// pause before another attempt; false when ctx ends first.
func pause(ctx context.Context, n int) bool {
	d := time.Duration(5<<min(n, 6)) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
