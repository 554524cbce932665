// SPDX-License-Identifier: MIT

package idem

// The operator's side: reading calls, reconciling them, and taking over
// the calls of an owner whose lease lapsed.  Every rule is the
// extension's: which verdict applies to which call, what is stale, what
// is released; this file only writes the UPDATEs and reads the answers.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Verdict is what is known of an open call's request, from the target's
// records (the table's reconcile column, doc/contract.md §5).
type Verdict struct {
	word   string
	id     any
	result json.RawMessage
	note   *string
}

// Arrived: the target's records show the request: the call becomes done
// with id and result (any JSON-able value; nil keeps the column).
func Arrived(id any, result any) (Verdict, error) {
	v := Verdict{word: "arrived"}
	id, err := sqlID(id, "the id given to Arrived")
	if err != nil {
		return v, err
	}
	v.id = id
	if result != nil {
		b, err := marshal(result, "the result given to Arrived is", "result")
		if err != nil {
			return v, err
		}
		v.result = b
	}
	return v, nil
}

// NotArrived: the target's records show that the request never came,
// and that it never will: say it only of a target that has fenced the
// key (it refuses the key from now on), since a request may still be on
// its way.  An unknown call is released; a pending one only if it is
// stale (the extension decides).
var NotArrived = Verdict{word: "not_arrived"}

// NotSentVerdict: the request of a pending call never left (an operator
// who knows): released.  Refused on an unknown call.
var NotSentVerdict = Verdict{word: "not_sent"}

// WithNote sets the note recorded with an Arrived verdict (the extension
// refuses it with a release, which keeps nothing: Reconcile's error then
// matches ErrRefused).
func (v Verdict) WithNote(note string) Verdict { v.note = &note; return v }

// String is the verdict's word in the table.
func (v Verdict) String() string { return v.word }

// Reconcile records v on the call key, in a transaction bounded by ctx,
// once: a database busy past the connection's busy timeout
// (_busy_timeout) is its error, nothing written (doc/contract.md §5).
// ErrNoCall when no such call is claimed; the extension's refusal (a
// decided call, a pending call not stale, not_sent on an unknown call, a
// note with a release) as an error that matches ErrRefused, in its words.
func (c *Calls) Reconcile(ctx context.Context, key string, v Verdict) error {
	if v.word == "" {
		return errors.New("idem: Reconcile: the verdict is empty: use Arrived(...), NotArrived or NotSentVerdict")
	}
	// What the verdict holds goes to the table as it is: the extension
	// refuses a note with a release (doc/contract.md §5), in its words.
	set, args := "reconcile = ?", []any{v.word}
	if v.id != nil {
		set, args = set+", id = ?", append(args, v.id)
	}
	if v.result != nil {
		set, args = set+", result = ?", append(args, string(v.result))
	}
	if v.note != nil {
		set, args = set+", note = ?", append(args, *v.note)
	}
	var n int64
	err := c.inTxBusy(ctx, func(cn *sql.Conn) error {
		res, err := cn.ExecContext(ctx, "UPDATE "+c.q+" SET "+set+" WHERE key = ? AND member = 0", append(args, key)...)
		if err != nil {
			return refused(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w: %s in %s", ErrNoCall, key, c.table)
	}
	return nil
}

// Call is a call's main row, as an operator reads it.
type Call struct {
	Key, Who, Conv, Tool, Kind, Status, Owner, Note, Created, Updated string
	Args, Result, Reply                                               json.RawMessage
	ID                                                                any
	Stale                                                             bool
}

const callColumns = "key, who, conv, tool, kind, status, owner, note, created, updated, args, result, reply, id, stale"

func scanCall(s interface{ Scan(...any) error }) (Call, error) {
	var k Call
	var owner, note, result sql.NullString
	var args, reply string
	err := s.Scan(&k.Key, &k.Who, &k.Conv, &k.Tool, &k.Kind, &k.Status, &owner, &note,
		&k.Created, &k.Updated, &args, &result, &reply, &k.ID, &k.Stale)
	k.Owner, k.Note = owner.String, note.String
	k.Args, k.Reply = json.RawMessage(args), json.RawMessage(reply)
	if result.Valid {
		k.Result = json.RawMessage(result.String)
	}
	if b, ok := k.ID.([]byte); ok {
		k.ID = string(b)
	}
	return k, err
}

// Get reads the call key; ErrNoCall when there is none.
func (c *Calls) Get(ctx context.Context, key string) (Call, error) {
	var k Call
	err := c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
		var err error
		k, err = scanCall(cn.QueryRowContext(ctx, "SELECT "+callColumns+" FROM "+c.q+" WHERE key = ? AND member = 0", key))
		return err
	})
	if err == sql.ErrNoRows {
		return k, fmt.Errorf("%w: %s in %s", ErrNoCall, key, c.table)
	}
	return k, err
}

// List reads the calls with status ("" for any), only the stale ones if
// stale (pending calls whose owner has been quiet for the table's
// stale_after), oldest first, at most limit (0: all).
func (c *Calls) List(ctx context.Context, status string, stale bool, limit int) ([]Call, error) {
	// The statuses are the extension's (idem_statuses(), read by Open).
	if status != "" && !slices.Contains(c.statuses, status) {
		return nil, fmt.Errorf(`idem: List: the status %q is none of %s (or "": any)`, status, strings.Join(c.statuses, ", "))
	}
	if limit < 0 {
		return nil, fmt.Errorf("idem: List: the limit is %d: 0 (all) or more", limit)
	}
	q := "SELECT " + callColumns + " FROM " + c.q + " WHERE member = 0"
	var args []any
	if status != "" {
		q += " AND status = ?"
		args = append(args, status)
	}
	if stale {
		q += " AND stale = 1"
	}
	q += " ORDER BY updated"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	var out []Call
	err := c.onConn(ctx, func(ctx context.Context, cn *sql.Conn) error {
		out = nil
		rows, err := cn.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanCall(rows)
			if err != nil {
				return err
			}
			out = append(out, k)
		}
		return rows.Err()
	})
	return out, err
}

// TakeOver fences the pending external calls whose owner's lease has
// lapsed (stale: quiet for the table's stale_after; the extension
// computes it at the UPDATE itself) and that this Calls does not own:
// each becomes unknown (its request may have left), in one UPDATE that
// names the old owner, so that the old owner's late record lands nowhere.
// Unknown calls are then for Reconcile, ReconcileAll, or a resend when
// their target honours the key.  It returns the keys taken over.
func (c *Calls) TakeOver(ctx context.Context) ([]string, error) {
	return c.fenceAll(ctx, true, func(k Call) (string, bool) {
		return "its owner's lease lapsed (owner " + k.Owner + ")", !c.owns(k.Owner)
	})
}

// Abandon fences the pending external calls of an earlier run of this
// owner (the same Owner name, another process): a restarted node's calls
// whose request may have left.  The owner name is matched exactly (the
// token's prefix up to its '/'), never by a pattern.
func (c *Calls) Abandon(ctx context.Context) ([]string, error) {
	mine := c.OwnerPrefix()
	return c.fenceAll(ctx, false, func(k Call) (string, bool) {
		earlier := len(k.Owner) > len(mine) && k.Owner[:len(mine)] == mine && !c.owns(k.Owner)
		return "its owner (" + k.Owner + ") restarted while the request may have been out", earlier
	})
}

// fenceAll fences the pending external calls (only the stale ones, still
// stale at the UPDATE, when stale) that pick takes, with the reason pick
// gives; it returns the keys fenced.  TakeOver and Abandon differ only in
// these.
func (c *Calls) fenceAll(ctx context.Context, stale bool, pick func(Call) (string, bool)) ([]string, error) {
	pending, err := c.List(ctx, "pending", stale, 0)
	if err != nil {
		return nil, err
	}
	cond := "1"
	if stale {
		cond = "stale = 1"
	}
	var keys []string
	for _, k := range pending {
		why, ok := pick(k)
		if k.Kind != "external" || !ok {
			continue
		}
		ok, err := c.fence(ctx, k, cond, why)
		if err != nil {
			return keys, err
		}
		if ok {
			keys = append(keys, k.Key)
		}
	}
	return keys, nil
}

// owns: the token is one of this Calls' (this process, this run).
func (c *Calls) owns(token string) bool {
	p := c.OwnerPrefix() + c.boot + "/"
	return len(token) > len(p) && token[:len(p)] == p
}

func (c *Calls) fence(ctx context.Context, k Call, cond, why string) (bool, error) {
	var n int64
	err := c.inTx(ctx, func(cn *sql.Conn) error {
		res, err := cn.ExecContext(ctx, "UPDATE "+c.q+" SET status = 'failed', note = ?"+
			" WHERE key = ? AND member = 0 AND owner = ? AND status = 'pending' AND "+cond,
			c.note(why+": the request may have left"), k.Key, k.Owner)
		if err != nil {
			return refused(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// ReconcileAll asks ask about every unknown call (oldest first, at most
// limit; 0: all) and records its verdict: Arrived when the target has the
// key, NotArrived only when the target fenced the key (it refuses it from
// now on); ok false keeps the call unknown.  It returns the verdicts
// recorded by key; a refusal of one call does not stop the others.
func (c *Calls) ReconcileAll(ctx context.Context, limit int, ask func(context.Context, Call) (v Verdict, ok bool, err error)) (map[string]string, error) {
	if ask == nil {
		return nil, errors.New("idem: ReconcileAll: ask is nil")
	}
	unknown, err := c.List(ctx, "unknown", false, limit)
	if err != nil {
		return nil, err
	}
	done := map[string]string{}
	var errs []error
	for _, k := range unknown {
		v, ok, err := ask(ctx, k)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Key, err))
			continue
		}
		if !ok {
			continue
		}
		if err := c.Reconcile(ctx, k.Key, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Key, err))
			continue
		}
		done[k.Key] = v.word
	}
	return done, errors.Join(errs...)
}
