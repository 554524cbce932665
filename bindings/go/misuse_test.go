// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// id is a result whose IdemID is any value.
type id struct{ v any }

func (i id) IdemID() any { return i.v }

type orderID int32

// An id is one SQL value, as in Python and Node (doc/choices.md, "The
// packages"): nil, an integer, a float, a string or a []byte.  Any other
// is refused by the package, naming the tool, before it is recorded: a
// local call released at once (it was retried until the deadline and
// then called a COMMIT unknown), an external call unknown with why in
// its note (its record was retried in the background for ever).
// opaque is a type whose name is read after "an" (idem_test.opaque).
type opaque struct{}

func TestIDIsOneSQLValue(t *testing.T) {
	db, calls := open(t)
	refused := []struct {
		id  any
		why string
	}{
		{true, "id is a bool; an id is one SQL value: nil, an integer, a float, a string or a []byte"},
		{make(chan int), "id is a chan int; an id is one SQL value: nil, an integer, a float, a string or a []byte"},
		{map[string]int{}, "id is a map[string]int; an id is one SQL value: nil, an integer, a float, a string or a []byte"},
		{opaque{}, "id is an idem_test.opaque; an id is one SQL value: nil, an integer, a float, a string or a []byte"},
		{[]int{1}, "id is a []int; an id is one SQL value: nil, an integer, a float, a string or a []byte"},
		{uint64(math.MaxUint64), "id is 18446744073709551615, beyond SQLite's 64-bit integers"},
		{math.NaN(), "id is NaN, which JSON has no form for"},
		{math.Inf(-1), "id is -Infinity, which JSON has no form for"},
		{"a\xffb", "id holds bytes that are not UTF-8, which is not text"},
		{time.Unix(0, 0), "id is a time.Time, which JSON has no form for; give its text (Format(time.RFC3339Nano)) or its time (UnixMilli())"},
	}
	for n, c := range refused {
		ctx := ctx5(t)
		runs := 0
		local := idem.Local(calls, "bad", func(ctx context.Context, tx *sql.Tx, a int) (id, error) { runs++; return id{c.id}, nil })
		t0 := time.Now()
		_, err := local.Call(ctx, "w", "c", n)
		var ce *idem.CallError
		if !errors.Is(err, idem.ErrNotJSON) || !errors.As(err, &ce) || ce.Status != "released" || runs != 1 ||
			!strings.Contains(err.Error(), "idem: the id of bad cannot be stored: "+c.why) || time.Since(t0) > 3*time.Second {
			t.Errorf("local %#v: %v (runs %d)", c.id, err, runs)
		}
		ext := idem.External(calls, "send", func(ctx context.Context, key string, a int) (id, error) { return id{c.id}, nil })
		_, err = ext.Call(ctx, "w", "c", n)
		if !errors.Is(err, idem.ErrUnknown) || !errors.Is(err, idem.ErrNotJSON) || !errors.As(err, &ce) {
			t.Errorf("external %#v: %v", c.id, err)
			continue
		}
		var note string
		if err := db.QueryRowContext(ctx, "SELECT note FROM calls WHERE key = ? AND status = 'unknown'", ce.Key).Scan(&note); err != nil ||
			!strings.HasSuffix(note, "the id of send cannot be stored: "+c.why+")") {
			t.Errorf("external %#v: note %q %v", c.id, note, err)
		}
		if _, err := idem.Arrived(c.id, nil); !errors.Is(err, idem.ErrNotJSON) ||
			err.Error() != "idem: the id given to Arrived cannot be stored: "+c.why {
			t.Errorf("Arrived %#v: %v", c.id, err)
		}
	}
	if calls.Owed() != 0 {
		t.Errorf("records owed: %d", calls.Owed())
	}
	// Accepted: what SQL holds as one value, as it is read back.
	for n, c := range []struct{ id, back any }{
		{nil, nil}, {int8(-3), int64(-3)}, {orderID(7), int64(7)}, {uint64(math.MaxInt64), int64(math.MaxInt64)},
		{1.5, 1.5}, {"ch_81", "ch_81"}, {sql.NullInt64{Int64: 4, Valid: true}, int64(4)}, {sql.NullString{}, nil},
	} {
		ctx := ctx5(t)
		local := idem.Local(calls, "good", func(ctx context.Context, tx *sql.Tx, a int) (id, error) { return id{c.id}, nil })
		if _, err := local.Call(ctx, "w", "c", n); err != nil {
			t.Errorf("%#v: %v", c.id, err)
		}
		out, err := local.Call(ctx, "w", "c", n)
		if err != nil || !out.Replayed || out.ID != c.back {
			t.Errorf("%#v read back: %v %#v", c.id, err, out.ID)
		}
	}
}

// Misuse of the API is an error that says what, before anything is
// claimed: never a nil dereference, and never a claim left unknown
// because the tool was no function.
func TestMisuseIsAnError(t *testing.T) {
	db, calls := open(t)
	ctx := ctx5(t)
	fn := func(ctx context.Context, tx *sql.Tx, a int) (int, error) { return a, nil }
	ext := func(ctx context.Context, key string, a int) (int, error) { return a, nil }
	wantErr := func(what string, err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", what, err, want)
		}
	}
	_, err := idem.Open(ctx, nil)
	wantErr("Open(nil)", err, "idem: Open: the *sql.DB is nil")
	_, err = idem.Local[int, int](nil, "place", fn).Call(ctx, "w", "c", 1)
	wantErr("Local(nil)", err, "idem: the tool place has no table: Local(nil, ...)")
	_, err = idem.External[int, int](nil, "send", ext).Call(ctx, "w", "c", 1)
	wantErr("External(nil)", err, "idem: the tool send has no table: External(nil, ...)")
	_, err = idem.Local[int, int](calls, "place", nil).Call(ctx, "w", "c", 1)
	wantErr("Local nil fn", err, "idem: the tool place has no function: Local(calls, \"place\", nil)")
	_, err = idem.External[int, int](calls, "send", nil).Call(ctx, "w", "c", 1)
	wantErr("External nil fn", err, "idem: the tool send has no function: External(calls, \"send\", nil)")
	_, err = idem.Local(calls, "", fn).Call(ctx, "w", "c", 1)
	wantErr("no name", err, "idem: a tool's name is a non-empty string, not \"\"")
	_, err = idem.External(calls, "", ext).Call(ctx, "w", "c", 1)
	wantErr("no name", err, "idem: a tool's name is a non-empty string, not \"\"")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM calls").Scan(&n); err != nil || n != 0 {
		t.Fatalf("claimed: %d %v", n, err)
	}
	_, err = calls.ReconcileAll(ctx, 0, nil)
	wantErr("ReconcileAll(nil)", err, "idem: ReconcileAll: ask is nil")
	_, err = calls.List(ctx, "done ", false, 0)
	wantErr("List status", err, "idem: List: the status \"done \" is none of unknown, pending, failed, done (or \"\": any)")
	// The statuses List accepts and names are C's (idem_statuses()).
	var cs string
	if err := db.QueryRowContext(ctx, "SELECT idem_statuses()").Scan(&cs); err != nil || cs != `["unknown","pending","failed","done"]` {
		t.Fatalf("idem_statuses(): %s %v", cs, err)
	}
	for _, s := range []string{"unknown", "pending", "failed", "done"} {
		if _, err := calls.List(ctx, s, false, 0); err != nil {
			t.Fatalf("List(%q): %v", s, err)
		}
	}
	_, err = calls.List(ctx, "", false, -1)
	wantErr("List limit", err, "idem: List: the limit is -1: 0 (all) or more")
	_, err = calls.ReconcileAll(ctx, -1, func(context.Context, idem.Call) (idem.Verdict, bool, error) { return idem.Verdict{}, false, nil })
	wantErr("ReconcileAll limit", err, "idem: List: the limit is -1: 0 (all) or more")
}

// After Close a tool's call is refused (ErrClosed), before anything is
// claimed: the records it might owe would have no one to make them.
// Close waits for the calls in flight, whose records it may owe.
func TestCallAfterClose(t *testing.T) {
	register(t)
	db, _ := open(t)
	ctx := ctx5(t)
	calls, err := idem.Open(ctx, db, idem.Table("closing"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	slow := idem.External(calls, "slow", func(ctx context.Context, key string, a int) (int, error) {
		close(started)
		<-release
		return a, nil
	})
	answer := make(chan error, 1)
	go func() { _, err := slow.Call(ctx, "w", "c", 1); answer <- err }()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- calls.Close(ctx) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-answer; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	fn := func(ctx context.Context, tx *sql.Tx, a int) (int, error) { return a, nil }
	if _, err := idem.Local(calls, "place", fn).Call(ctx, "w", "c", 2); !errors.Is(err, idem.ErrClosed) {
		t.Errorf("a local call after Close: %v", err)
	}
	if _, err := slow.Call(ctx, "w", "c", 3); !errors.Is(err, idem.ErrClosed) ||
		err.Error() != "idem: the table closing is closed (Close was called): open it again with Open" {
		t.Errorf("an external call after Close: %v", err)
	}
	var n int
	var status string
	if err := db.QueryRowContext(ctx, "SELECT count(*), max(status) FROM closing").Scan(&n, &status); err != nil || n != 1 || status != "done" {
		t.Errorf("the table: %d calls, %s, %v", n, status, err)
	}
	if err := calls.Close(ctx); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

// who, conv and a tool's name whose bytes are not UTF-8 are refused
// before the claim, as Python and Node refuse a lone surrogate in them:
// stored as text, they broke every reader that decodes it (Python's
// sqlite3: "Could not decode to UTF-8 column 'who'", the operator's
// desk with it), and Node's read them as U+FFFD.  An Owner too.
func TestPartsNotUTF8Refused(t *testing.T) {
	db, calls := open(t)
	ctx := ctx5(t)
	fn := func(ctx context.Context, tx *sql.Tx, a int) (int, error) { return a, nil }
	for _, c := range []struct{ tool, who, conv, want string }{
		{"place", "a\xffb", "c", "idem: place: who holds bytes that are not UTF-8, which is not text"},
		{"place", "w", "\xc3", "idem: place: conv holds bytes that are not UTF-8, which is not text"},
		{"pl\xe9ce", "w", "c", `idem: the tool "pl\xe9ce": its name holds bytes that are not UTF-8, which is not text`},
	} {
		_, err := idem.Local(calls, c.tool, fn).Call(ctx, c.who, c.conv, 1)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q %q %q:\n got %v\nwant %s", c.tool, c.who, c.conv, err, c.want)
		}
		ext := idem.External(calls, c.tool, func(ctx context.Context, key string, a int) (int, error) { return a, nil })
		if _, err := ext.Call(ctx, c.who, c.conv, 1); err == nil || err.Error() != c.want {
			t.Errorf("external %q %q %q: %v", c.tool, c.who, c.conv, err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM calls").Scan(&n); err != nil || n != 0 {
		t.Fatalf("claimed: %d %v", n, err)
	}
	if _, err := idem.Open(ctx, db, idem.Owner("node\xff")); err == nil ||
		err.Error() != `idem: the owner name "node\xff" holds bytes that are not UTF-8, which is not text` {
		t.Errorf("Owner: %v", err)
	}
}

// A note with a release, which keeps nothing (it was dropped in silence):
// the extension's refusal, in its words (doc/contract.md §5), an error
// that matches ErrRefused as its other refusals do; the package keeps no
// copy of the rule.  The call stays as it was.
func TestReconcileReleaseKeepsNothing(t *testing.T) {
	db, calls := open(t, idem.TableOption("stale_after", "1 hour"))
	ctx := ctx5(t)
	var unknown, pending string
	for _, q := range []string{
		"INSERT INTO calls(who, conv, tool, args, kind) VALUES ('w', 'c', 'pay', '1', 'external')",
		"UPDATE calls SET status = 'failed' WHERE key = idem_key('w', 'c', 'pay', '1') AND member = 0",
		"INSERT INTO calls(who, conv, tool, args, kind) VALUES ('w', 'c', 'pay', '2', 'external')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT idem_key('w', 'c', 'pay', '1'), idem_key('w', 'c', 'pay', '2')").Scan(&unknown, &pending); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key string
		v   idem.Verdict
	}{{unknown, idem.NotArrived}, {pending, idem.NotSentVerdict}, {pending, idem.NotArrived}} {
		err := calls.Reconcile(ctx, c.key, c.v.WithNote("asked the bank"))
		want := "idem: calls: call '" + c.key + "': reconcile = 'not_arrived' and 'not_sent' release the call (its rows go) and keep nothing, so an id, result or note given with them would be lost; they go with reconcile = 'arrived' only"
		if !errors.Is(err, idem.ErrRefused) || !strings.HasSuffix(err.Error(), ": "+want) {
			t.Errorf("%s with a note: %v", c.v, err)
		}
	}
	var statuses string
	if err := db.QueryRowContext(ctx, "SELECT coalesce(group_concat(status || ' ' || coalesce(note, '-'), ', '), '') FROM (SELECT status, note FROM calls WHERE member = 0 ORDER BY args)").Scan(&statuses); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(statuses, "unknown the request may") || !strings.HasSuffix(statuses, ", pending -") {
		t.Errorf("the calls changed: %s", statuses)
	}
	if err := calls.Reconcile(ctx, pending, idem.NotSentVerdict); err != nil {
		t.Fatal(err)
	}
	if _, err := calls.Get(ctx, pending); !errors.Is(err, idem.ErrNoCall) {
		t.Errorf("not released: %v", err)
	}
}
