// SPDX-License-Identifier: MIT

package main

// idem on a go-dqlite node (github.com/canonical/go-dqlite v1.11, over
// Debian's libdqlite 1.11 and its libsqlite3): this package's binary
// holds go-dqlite and no mattn/go-sqlite3, so idem binds to libsqlite3.

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/canonical/go-dqlite/app"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

const call = `'alice', 'c-1', 'checkout', '{"sku":"A0001","qty":2}'`

func register(t *testing.T) {
	t.Helper()
	if err := idem.Register(); err != nil {
		t.Fatal(err)
	}
}

func one(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...interface{}) *sql.Row
}, query string, args ...interface{}) string {
	t.Helper()
	var s string
	if err := q.QueryRowContext(context.Background(), query, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// openNode starts a one-node go-dqlite app in a temporary directory and
// opens the database name on it; both close when the test ends.
func openNode(ctx context.Context, t *testing.T, name string) *sql.DB {
	t.Helper()
	node, err := app.New(t.TempDir(), app.WithAddress(freeAddr(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	if err := node.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := node.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A go-dqlite app node's connections have idem, in the replicated build:
// an external claim commits (the Raft log is its durability, where the
// node's VFS reports synchronous=OFF), and idem_versioned() in autocommit
// is refused.  The claim, the record and the duplicate go through the
// node's database/sql driver, as a service makes them.
func TestDqliteNode(t *testing.T) {
	register(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := openNode(ctx, t, "idem")
	exec := func(q string) error {
		_, err := db.ExecContext(ctx, q)
		return err
	}
	for _, s := range []string{
		"CREATE VIRTUAL TABLE calls USING idem",
		"CREATE TABLE stock(sku TEXT PRIMARY KEY, qty INTEGER, ver INTEGER NOT NULL DEFAULT 0)",
	} {
		if err := exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := one(t, db, "PRAGMA synchronous"); got != "0" {
		t.Logf("the node's connection has synchronous=%s (dqlite 1.11 runs with OFF,"+
			" which the local build refuses for an external claim)", got)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{
		"BEGIN",
		"INSERT INTO calls(who, conv, tool, args, kind, owner) VALUES(" + call + ", 'external', 'test:2')",
		"COMMIT",
		"BEGIN",
		"UPDATE calls SET status = 'done', id = 7, result = '{\"shipped\":7}' WHERE key = idem_key(" + call + ") AND member = 0 AND owner = 'test:2'",
		"COMMIT",
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	_, err = conn.ExecContext(ctx, "INSERT INTO calls(who, conv, tool, args, kind) VALUES("+call+", 'external')")
	if err == nil || !strings.Contains(err.Error(), ": call already claimed (status: done)") {
		t.Fatalf("the duplicate: %v", err)
	}
	if got := one(t, conn, "SELECT reply FROM calls WHERE key = idem_key("+call+")"); got != `{"id":7,"idempotent":true,"result":{"shipped":7},"sends":1,"status":"done"}` {
		t.Fatalf("replay: %s", got)
	}
	err = exec("SELECT idem_versioned('stock', 'ver')")
	if err == nil || !strings.Contains(err.Error(), "call it inside BEGIN ... COMMIT") {
		t.Fatalf("idem_versioned() in autocommit on a node: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	one(t, conn, "SELECT idem_versioned('stock', 'ver')")
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := one(t, conn, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'idem_versioned_stock%'"); got != "3" {
		t.Fatalf("idem_versioned() inside a transaction on a node: %s triggers", got)
	}
}

// The library on a node: a local tool (an order row) and an external one,
// through the node's database/sql driver; a duplicate replays.
func TestLibraryOnNode(t *testing.T) {
	register(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := openNode(ctx, t, "lib")
	calls, err := idem.Open(ctx, db, idem.Owner("n1"), idem.TableOption("stale_after", "10 seconds"))
	if err != nil {
		t.Fatal(err)
	}
	defer calls.Close(ctx)
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT)"); err != nil {
		t.Fatal(err)
	}
	type args struct {
		SKU string `json:"sku"`
	}
	place := idem.Local(calls, "order", func(ctx context.Context, tx *sql.Tx, a args) (int64, error) {
		r, err := tx.ExecContext(ctx, "INSERT INTO orders(sku) VALUES(?)", a.SKU)
		if err != nil {
			return 0, err
		}
		return r.LastInsertId()
	})
	sends := 0
	ship := idem.External(calls, "ship", func(ctx context.Context, key string, a args) (string, error) {
		sends++
		if a.SKU == "lost" {
			return "", errors.New("timeout")
		}
		return "s-" + a.SKU, nil
	})
	for i := 0; i < 2; i++ {
		o, err := place.Call(ctx, "w", "c", args{"A"})
		if err != nil || o.Result != 1 || o.Replayed != (i == 1) {
			t.Fatalf("local %d: %+v %v", i, o, err)
		}
		s, err := ship.Call(ctx, "w", "c", args{"A"})
		if err != nil || s.Result != "s-A" || s.Replayed != (i == 1) || sends != 1 {
			t.Fatalf("external %d: %+v %v", i, s, err)
		}
	}
	if _, err := ship.Call(ctx, "w", "c", args{"lost"}); !errors.Is(err, idem.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	if !strings.Contains(one(t, db, "SELECT group_concat(status) FROM calls"), "unknown") {
		t.Fatal("no unknown call")
	}
}

// A COMMIT on a node that fails with its transaction left open: a
// deferred foreign key that the tool's writes break (dqlite's connections
// have foreign_keys on) fails the COMMIT, and the node keeps the
// transaction, as SQLite does.  The package rolls it back on the same
// connection: the call is released (nothing of it was written, no call
// is left pending without an owner), the tool ran once, and the answer is
// a *CallError with the node's error as its cause; a retry runs anew
// (doc/contract.md §5).  A COMMIT that fails because its attempt's
// deadline ended before it left (the OnStep seam makes it late), its
// transaction open on the node, cannot be rolled back under that
// deadline: the connection is dropped (the node rolls back) and the call
// runs again as a whole, once done; an external claim so is claimed
// again on another connection: sent once, recorded, nothing owed.
func TestCommitFailsTxOpenOnNode(t *testing.T) {
	register(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := openNode(ctx, t, "open")
	var lateClaim, lateLocal atomic.Bool // armed: the next such COMMIT is late
	calls, err := idem.Open(ctx, db, idem.Owner("n1"), idem.AttemptTimeout(2*time.Second),
		idem.OnStep(func(ctx context.Context, s idem.Step) {
			if s == idem.StepClaimCommit && lateClaim.CompareAndSwap(true, false) ||
				s == idem.StepLocalCommit && lateLocal.CompareAndSwap(true, false) {
				time.Sleep(2500 * time.Millisecond) // past this attempt's deadline: its COMMIT never leaves
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer calls.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE parents(id INTEGER PRIMARY KEY)",
		"CREATE TABLE kids(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var runs atomic.Int32
	adopt := idem.Local(calls, "adopt", func(ctx context.Context, tx *sql.Tx, parent int) (int64, error) {
		runs.Add(1)
		r, err := tx.ExecContext(ctx, "INSERT INTO kids(parent) VALUES(?)", parent)
		if err != nil {
			return 0, err
		}
		return r.LastInsertId()
	})
	_, err = adopt.Call(ctx, "w", "c", 7)
	var ce *idem.CallError
	if !errors.As(err, &ce) || ce.Status != "released" || errors.Is(err, idem.ErrCommitUnknown) ||
		!strings.Contains(err.Error(), "FOREIGN KEY constraint failed") || !strings.Contains(err.Error(), "a retry runs it anew") {
		t.Fatalf("a COMMIT that failed, its transaction open: %v", err)
	}
	if runs.Load() != 1 {
		t.Fatalf("the tool ran %d times", runs.Load())
	}
	if n := one(t, db, "SELECT (SELECT count(*) FROM kids) + (SELECT count(*) FROM calls)"); n != "0" {
		t.Fatalf("rolled back: %s rows left", n)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO parents(id) VALUES(7)"); err != nil {
		t.Fatal(err)
	}
	out, err := adopt.Call(ctx, "w", "c", 7)
	if err != nil || out.Replayed || out.Result != 1 || runs.Load() != 2 {
		t.Fatalf("the retry: %+v %v (runs %d)", out, err, runs.Load())
	}

	// Its COMMIT late, its transaction open: the outcome unknown to the
	// package, which cannot roll back under a deadline that has ended;
	// the connection goes (the node rolls the transaction back) and the
	// call runs again as a whole (doc/cluster.md, the local recipe).
	lateLocal.Store(true)
	out, err = adopt.Call(ctx, "w2", "c", 7)
	if err != nil || out.Replayed || out.Result != 2 || runs.Load() != 4 || lateLocal.Load() {
		t.Fatalf("a late COMMIT: %+v %v (runs %d)", out, err, runs.Load())
	}
	if n := one(t, db, "SELECT count(*) || ' ' || group_concat(status) FROM calls WHERE tool = 'adopt'"); n != "2 done,done" {
		t.Fatalf("the local calls: %s", n)
	}

	var sends atomic.Int32
	ship := idem.External(calls, "ship", func(ctx context.Context, key string, n int) (int, error) {
		sends.Add(1)
		return n, nil
	})
	lateClaim.Store(true)
	s, err := ship.Call(ctx, "w", "c", 3)
	if err != nil || s.Result != 3 || s.Replayed || sends.Load() != 1 || lateClaim.Load() {
		t.Fatalf("external, its claim's COMMIT late: %+v %v (sends %d)", s, err, sends.Load())
	}
	if st := one(t, db, "SELECT group_concat(status || ' ' || (owner LIKE 'n1%')) FROM calls WHERE tool = 'ship'"); st != "done 1" {
		t.Fatalf("the external call: %s", st)
	}
	if calls.Owed() != 0 {
		t.Fatalf("owed: %d", calls.Owed())
	}
}
