// SPDX-License-Identifier: MIT

package main

// The protocol of doc/contract.md, run by a service against a go-dqlite
// cluster, with the rules that a cluster adds (doc/cluster.md):
//
//   - every statement of an attempt runs on one *sql.Conn under the
//     attempt's deadline; COMMIT and ROLLBACK are plain ExecContext calls
//     (go-dqlite 1.11's Tx.Commit and Tx.Rollback ignore every deadline,
//     which is how a client waits forever on a partitioned leader);
//   - a connection that saw any error is discarded, never reused;
//   - every claim carries an owner token unique to this call's handler
//     (node:boot:seq), and every record is guarded by it (changes() == 1);
//   - a call that this process claimed and still holds when its handler
//     gives up is handed to the process's own queue (settle), which keeps
//     trying to record or release it: a pending call always has a live
//     owner, or its owner's node marks it unknown when it restarts (sweep).

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	dqdriver "github.com/canonical/go-dqlite/driver"
)

// Call is one tool call as the model sends it.
type Call struct {
	Who  string          `json:"who"`
	Conv string          `json:"conv"`
	Tool string          `json:"tool"` // "order" (local) or "ship" (external)
	Args json.RawMessage `json:"args"`
}

func (c Call) params() []interface{} {
	return []interface{}{c.Who, c.Conv, c.Tool, string(c.Args)}
}

// Outcome is what the service answers.
type Outcome struct {
	Status   string          `json:"status"` // won, replayed, pending, unknown, error
	Reply    json.RawMessage `json:"reply,omitempty"`
	Own      bool            `json:"own,omitempty"` // a replay of our own lost COMMIT
	Sent     bool            `json:"sent,omitempty"`
	Attempts int             `json:"attempts"`
	Error    string          `json:"error,omitempty"`
	Owner    string          `json:"owner,omitempty"`
}

// Service runs tool calls through idem on db.
type Service struct {
	DB             *sql.DB
	Target         string // the outside target's base URL (ship)
	Node           string // this node's name: the owner tokens' prefix
	Boot           string // this process's run: node:boot is a live owner
	AttemptTimeout time.Duration
	Faults         bool // honour X-Crash-At (the tests' kill points)
	Log            func(format string, a ...interface{})

	seq int64
	// Lost COMMIT answers this process recovered from, by what the
	// retry found: its own pending claim, its own record already there.
	OwnClaims, OwnRecords int64

	mu      sync.Mutex
	settles []settle // calls this process still owns (see settleLoop)
}

func (s *Service) token() string {
	return fmt.Sprintf("%s:%s:%d", s.Node, s.Boot, atomic.AddInt64(&s.seq, 1))
}

// crash: SIGKILL this process at a test's kill point.
func (s *Service) crash(want, point string) {
	if s.Faults && want == point {
		s.Log("crash point %s: SIGKILL", point)
		syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// sqliteCode is the primary SQLite result code of err, or -1.
func sqliteCode(err error) int {
	var e dqdriver.Error
	if errors.As(err, &e) {
		return e.Code & 0xff
	}
	return -1
}

func isClaimed(err error) bool {
	return sqliteCode(err) == 19 && strings.Contains(err.Error(), ": call already claimed")
}

// errLost: the record changed no row: the call is no longer ours.
var errLost = errors.New("idem: the call is no longer ours (released or re-claimed): not recorded")

// attempt runs f on one connection under the attempt deadline; a
// connection that saw an error is discarded.
func (s *Service) attempt(ctx context.Context, f func(ctx context.Context, c *sql.Conn) error) error {
	actx, cancel := context.WithTimeout(ctx, s.AttemptTimeout)
	defer cancel()
	c, err := s.DB.Conn(actx)
	if err != nil {
		return err
	}
	if err = f(actx, c); err != nil {
		c.Raw(func(interface{}) error { return driver.ErrBadConn }) // discard
		return err
	}
	return c.Close()
}

func exec(ctx context.Context, c *sql.Conn, q string, a ...interface{}) (int64, error) {
	r, err := c.ExecContext(ctx, q, a...)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return n, err
}

// inTx runs body between BEGIN and COMMIT; ctx bounds every statement,
// COMMIT included.  commitErr tells whether it was the COMMIT that failed
// (its outcome is then unknown: the retry tells).
func inTx(ctx context.Context, c *sql.Conn, body func() error) (commitErr bool, err error) {
	if _, err = exec(ctx, c, "BEGIN"); err != nil {
		return false, err
	}
	if err = body(); err != nil {
		return false, err
	}
	if _, err = exec(ctx, c, "COMMIT"); err != nil {
		return true, err
	}
	return false, nil
}

const keyOf = "key = idem_key(?, ?, ?, ?) AND member = 0"

// state reads the call's main row: status, owner, reply ("" when absent).
func state(ctx context.Context, c *sql.Conn, call Call) (status, owner string, reply json.RawMessage, err error) {
	var r sql.NullString
	var o sql.NullString
	err = c.QueryRowContext(ctx, "SELECT status, owner, reply FROM calls WHERE "+keyOf, call.params()...).
		Scan(&status, &o, &r)
	if err == sql.ErrNoRows {
		return "", "", nil, nil
	}
	return status, o.String, json.RawMessage(r.String), err
}

// byOf is the "by" of a recorded result, inside idem's reply.
func byOf(reply json.RawMessage) string {
	var r struct {
		Result struct {
			By string `json:"by"`
		} `json:"result"`
	}
	json.Unmarshal(reply, &r)
	return r.Result.By
}

// replay: the outcome of a call that someone holds.  ownPending: it is
// pending under our own token (our claim's COMMIT took effect, its answer
// was lost).
func (s *Service) replay(ctx context.Context, c *sql.Conn, call Call, token string) (o Outcome, ownPending bool, err error) {
	st, owner, reply, err := state(ctx, c, call)
	if err != nil {
		return o, false, err
	}
	switch st {
	case "":
		return o, false, errors.New("the call was released meanwhile: try again")
	case "pending":
		if owner == token {
			return o, true, nil
		}
		return Outcome{Status: "pending", Reply: reply, Owner: owner}, false, nil
	case "done":
		return Outcome{Status: "replayed", Reply: reply, Own: byOf(reply) == token}, false, nil
	default:
		return Outcome{Status: st, Reply: reply, Owner: owner}, false, nil
	}
}

// backoff before the next attempt, or false when ctx is done.
func backoff(ctx context.Context, err error) bool {
	d := 50*time.Millisecond + time.Duration(rand.Intn(150))*time.Millisecond
	if c := sqliteCode(err); c == 5 || c == 6 { // busy, locked: another writer
		d = time.Duration(1+rand.Intn(10)) * time.Millisecond
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Local is a tool whose effect is a row of this database (an order): the
// claim, the act and the record in one transaction, retried whole.
func (s *Service) Local(ctx context.Context, call Call, crashAt string) Outcome {
	token := s.token()
	var last error
	for n := 1; ; n++ {
		var out Outcome
		err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
			var claimed bool
			_, err := inTx(ctx, c, func() error {
				_, err := exec(ctx, c, "INSERT INTO calls(who, conv, tool, args, owner) VALUES(?, ?, ?, ?, ?)",
					append(call.params(), token)...)
				if isClaimed(err) {
					claimed = true
					return err
				}
				if err != nil {
					return err
				}
				r, err := c.ExecContext(ctx, "INSERT INTO orders(k, owner) VALUES(idem_key(?, ?, ?, ?), ?)",
					append(call.params(), token)...)
				if err != nil {
					return err
				}
				id, err := r.LastInsertId()
				if err != nil {
					return err
				}
				m, err := exec(ctx, c, "UPDATE calls SET status = 'done', id = ?, result = json_object('order', ?, 'by', ?)"+
					" WHERE "+keyOf+" AND owner = ?",
					append(append([]interface{}{id, id, token}, call.params()...), token)...)
				if err == nil && m != 1 {
					err = errLost
				}
				if err == nil {
					s.crash(crashAt, "local-before-commit")
				}
				return err
			})
			if claimed {
				if _, err := exec(ctx, c, "ROLLBACK"); err != nil {
					return err
				}
				var err error
				out, _, err = s.replay(ctx, c, call, token)
				return err
			}
			if err != nil {
				return err
			}
			s.crash(crashAt, "local-after-commit")
			var reply string
			err = c.QueryRowContext(ctx, "SELECT json_object('order', id, 'by', ?) FROM orders WHERE owner = ?",
				token, token).Scan(&reply)
			out = Outcome{Status: "won", Reply: json.RawMessage(reply)}
			return err
		})
		if err == nil {
			out.Attempts = n
			return out
		}
		last = err
		if errors.Is(err, errLost) || (sqliteCode(err) == 19 && !isClaimed(err)) || !backoff(ctx, err) {
			return Outcome{Status: "error", Attempts: n, Error: fmt.Sprintf("gave up: %v", last)}
		}
	}
}

// External is a tool whose effect is elsewhere (an HTTP target that
// honours Idempotency-Key): the claim commits alone, the request leaves,
// the result is recorded.
func (s *Service) External(ctx context.Context, call Call, crashAt string) Outcome {
	token := s.token()
	n := 0
	var key string
	// 1. The claim, committed (through Raft: on a quorum) before anything
	// leaves.
	for {
		n++
		var out Outcome
		var mine, recovered bool
		err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
			if err := c.QueryRowContext(ctx, "SELECT idem_key(?, ?, ?, ?)", call.params()...).Scan(&key); err != nil {
				return err
			}
			claimed := false
			_, err := inTx(ctx, c, func() error {
				_, err := exec(ctx, c, "INSERT INTO calls(who, conv, tool, args, kind, owner) VALUES(?, ?, ?, ?, 'external', ?)",
					append(call.params(), token)...)
				claimed = isClaimed(err)
				if err == nil {
					s.crash(crashAt, "ext-before-claim-commit")
				}
				return err
			})
			if claimed {
				if _, err := exec(ctx, c, "ROLLBACK"); err != nil {
					return err
				}
				var err error
				out, mine, err = s.replay(ctx, c, call, token)
				recovered = mine // pending under our token: our claim's answer was lost
				return err
			}
			mine = err == nil
			return err
		})
		if err == nil && !mine {
			out.Attempts = n
			return out
		}
		if err == nil {
			if recovered {
				atomic.AddInt64(&s.OwnClaims, 1)
			}
			break
		}
		if (sqliteCode(err) == 19 && !isClaimed(err)) || !backoff(ctx, err) {
			if key != "" {
				// Our claim may have committed with its answer lost: it is
				// ours, and nothing was sent.  The queue releases it.
				s.queue(settle{call: call, token: token, verdict: "not_sent"})
			}
			return Outcome{Status: "error", Attempts: n, Error: fmt.Sprintf("claim not confirmed: %v", err)}
		}
	}
	s.crash(crashAt, "ext-after-claim-commit")

	// 2. The request.
	result, sent, err := s.send(ctx, key, token, call, crashAt)
	if errors.Is(err, errFencedKey) {
		// The target refuses the key for ever: no request of it can take
		// effect, so the call is released; the caller is told, for good.
		s.queue(settle{call: call, token: token, verdict: "not_sent"})
		s.drain(ctx)
		return Outcome{Status: "fenced", Attempts: n, Sent: true, Error: err.Error()}
	}
	if err != nil && !sent {
		s.queue(settle{call: call, token: token, verdict: "not_sent"})
		s.drain(ctx)
		return Outcome{Status: "error", Attempts: n, Error: fmt.Sprintf("not sent: %v", err)}
	}
	if err != nil {
		s.queue(settle{call: call, token: token, status: "failed",
			note: fmt.Sprintf("the request may have reached the target: %v", err)})
		s.drain(ctx)
		return Outcome{Status: "unknown", Attempts: n, Sent: true, Error: err.Error()}
	}
	s.crash(crashAt, "ext-before-record")

	// 3. The record, guarded by the owner token.
	s.queue(settle{call: call, token: token, status: "done", result: result})
	if s.drain(ctx) {
		return Outcome{Status: "won", Attempts: n, Sent: true, Reply: result}
	}
	return Outcome{Status: "pending", Attempts: n, Sent: true, Error: "sent; the record is queued in this process"}
}

// send makes the request with the call's Idempotency-Key.  sent is false
// only when the request cannot have left (no connection was made).
func (s *Service) send(ctx context.Context, key, token string, call Call, crashAt string) (json.RawMessage, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, s.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "POST", s.Target+"/ship", bytes.NewReader(call.Args))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Idempotency-Key", `"`+key+`"`)
	req.Header.Set("X-Idem-Send", "first")
	req.Header.Set("X-Idem-Owner", token)
	client := sendClient
	if s.Faults && crashAt == "ext-during-request" {
		// The kill point: the request's bytes are in the kernel (they
		// leave even as the process dies), its answer is not read.
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return killAfterWrite{c, func() { s.crash(crashAt, crashAt) }}, nil
			}}}
	}
	resp, err := client.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, false, err
		}
		return nil, true, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, true, err
	}
	if resp.StatusCode == http.StatusConflict && bytes.HasPrefix(body, []byte("fenced")) {
		return nil, true, fmt.Errorf("%w: %s", errFencedKey, bytes.TrimSpace(body))
	}
	if resp.StatusCode/100 != 2 {
		return nil, true, fmt.Errorf("target: %s: %s", resp.Status, body)
	}
	var r struct {
		Shipment int64 `json:"shipment"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, true, fmt.Errorf("target: %v", err)
	}
	return json.RawMessage(fmt.Sprintf(`{"shipment":%d,"by":%q}`, r.Shipment, token)), true, nil
}

// errFencedKey: the target's answer that it refuses the key for ever.
var errFencedKey = errors.New("the target fenced the key")

// killAfterWrite: a connection that runs kill once a write has returned.
type killAfterWrite struct {
	net.Conn
	kill func()
}

func (k killAfterWrite) Write(b []byte) (int, error) {
	n, err := k.Conn.Write(b)
	k.kill()
	return n, err
}

// One HTTP client, no connection reuse: a kept-alive connection to a
// target would hide whether a request left.
var sendClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// ---- what this process still owes its pending calls -----------------------

// settle: a call this process owns, and what to write: status done with
// result, status failed (external: unknown), or a release (verdict).
type settle struct {
	call    Call
	token   string
	status  string
	result  json.RawMessage
	note    string
	verdict string
}

func (s *Service) queue(st settle) {
	s.mu.Lock()
	s.settles = append(s.settles, st)
	s.mu.Unlock()
}

// drain settles what is queued, within ctx; true if nothing is left.
func (s *Service) drain(ctx context.Context) bool {
	for {
		if s.settleOnce(ctx) {
			return true
		}
		if !backoff(ctx, nil) {
			return false
		}
	}
}

// releaseVerdict: 'not_sent' (the owner's word that its request never left,
// doc/contract.md §5), or 'not_arrived' with an idem that predates it.
var releaseVerdict atomic.Value

func (s *Service) settleOnce(ctx context.Context) bool {
	s.mu.Lock()
	todo := append([]settle(nil), s.settles...)
	s.mu.Unlock()
	left := map[string]bool{}
	for _, st := range todo {
		err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
			_, err := inTx(ctx, c, func() error {
				var n int64
				var err error
				switch {
				case st.verdict != "":
					v, _ := releaseVerdict.Load().(string)
					if v == "" {
						v = "not_sent"
					}
					n, err = exec(ctx, c, "UPDATE calls SET reconcile = ?, note = 'released by its owner: the request never left'"+
						" WHERE "+keyOf+" AND owner = ?", append(append([]interface{}{v}, st.call.params()...), st.token)...)
					if err != nil && v == "not_sent" && strings.Contains(err.Error(), "reconcile must be") {
						releaseVerdict.Store("not_arrived")
						return err
					}
				case st.status == "done":
					n, err = exec(ctx, c, "UPDATE calls SET status = 'done', id = json_extract(?, '$.shipment'), result = ?"+
						" WHERE "+keyOf+" AND owner = ?", append(append([]interface{}{string(st.result), string(st.result)}, st.call.params()...), st.token)...)
				default:
					n, err = exec(ctx, c, "UPDATE calls SET status = 'failed', note = ? WHERE "+keyOf+" AND owner = ?",
						append(append([]interface{}{st.note}, st.call.params()...), st.token)...)
				}
				if err == nil && n == 0 {
					return errGone
				}
				return err
			})
			return err
		})
		switch {
		case err == nil:
		case errors.Is(err, errGone) || strings.Contains(errString(err), "is already decided"):
			// Not (or no longer) ours: nothing was claimed under this
			// token, or a lost COMMIT answer hid our own earlier write.
			// Either way nothing is left to do.
			settled, own := s.check(ctx, st)
			if !settled {
				left[st.token] = true
			} else if own {
				atomic.AddInt64(&s.OwnRecords, 1)
			}
		default:
			left[st.token] = true
		}
	}
	s.mu.Lock()
	keep := s.settles[:0]
	for _, st := range s.settles {
		if left[st.token] || !contains(todo, st.token) {
			keep = append(keep, st)
		}
	}
	s.settles = keep
	empty := len(keep) == 0
	s.mu.Unlock()
	return empty
}

var errGone = errors.New("no row under this owner")

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// check: after a record or release that found no row of ours, is the call
// settled, or must we try again?  It is settled when the call is absent,
// decided, unknown or owned by someone else.  own: it is done with our
// own record (the record's COMMIT took effect, its answer was lost).
func (s *Service) check(ctx context.Context, st settle) (settled, own bool) {
	s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
		status, owner, reply, err := state(ctx, c, st.call)
		if err != nil {
			return err
		}
		settled = status != "pending" || owner != st.token
		own = status == "done" && st.status == "done" && byOf(reply) == st.token
		return nil
	})
	return settled, own
}

func contains(l []settle, token string) bool {
	for _, st := range l {
		if st.token == token {
			return true
		}
	}
	return false
}

// Pending is how many calls this process still owes a record or release.
func (s *Service) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.settles)
}
