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
