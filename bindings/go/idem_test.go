// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/canonical/go-dqlite/app"
	_ "github.com/mattn/go-sqlite3"

	"idem.example/idem"
)

// The tests run in order, one at a time: go-dqlite's init puts SQLite in
// single-thread mode, so mattn's connection is closed before the node
// starts.

func register(t *testing.T) {
	t.Helper()
	if err := idem.Register(); err != nil {
		t.Fatal(err)
	}
	if err := idem.Register(); err != nil { // a second call does nothing
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

const call = `'alice', 'c-1', 'checkout', '{"sku":"A0001","qty":2}'`

// A mattn/go-sqlite3 connection has idem: the key, a local call's claim,
// act and record in one transaction, a duplicate that is refused and
// replays the first result.  It is the local build: an external claim in
// WAL mode with synchronous=NORMAL is refused (doc/contract.md §12).
func TestMattn(t *testing.T) {
	register(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+dir+"/app.db?_journal_mode=WAL&_sync=FULL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if got := one(t, db, "SELECT idem_key("+call+")"); len(got) != 32 {
		t.Fatalf("idem_key: %q", got)
	}
	if got := one(t, db, "SELECT idem_key('alice','c-1','checkout','{\"qty\":2,\"sku\":\"A0001\"}') = idem_key("+call+")"); got != "1" {
		t.Fatalf("the key does not ignore member order: %s", got)
	}
	for _, s := range []string{
		"CREATE VIRTUAL TABLE calls USING idem",
		"CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Exec("INSERT INTO calls(who, conv, tool, args, owner) VALUES(" + call + ", 'test:1')")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("claim: %d rows", n)
	}
	if _, err := tx.Exec("INSERT INTO orders(sku) VALUES('A0001')"); err != nil {
		t.Fatal(err)
	}
	res, err = tx.Exec("UPDATE calls SET status = 'done', id = last_insert_rowid(), result = '{\"order\":1}'" +
		" WHERE key = idem_key(" + call + ") AND member = 0 AND owner = 'test:1'")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("record: %d rows", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("INSERT INTO calls(who, conv, tool, args) VALUES(" + call + ")")
	if err == nil || !strings.Contains(err.Error(), ": call already claimed (status: done)") {
		t.Fatalf("the duplicate: %v", err)
	}
	if got := one(t, db, "SELECT reply FROM calls WHERE key = idem_key("+call+")"); got != `{"id":1,"idempotent":true,"result":{"order":1},"status":"done"}` {
		t.Fatalf("replay: %s", got)
	}
	if got := one(t, db, "SELECT count(*) FROM orders"); got != "1" {
		t.Fatalf("orders: %s", got)
	}
	if _, err := db.Exec("PRAGMA synchronous=NORMAL"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("INSERT INTO calls(who, conv, tool, args, kind) VALUES('alice', 'c-2', 'pay', '{}', 'external')")
	if err == nil || !strings.Contains(err.Error(), "synchronous=NORMAL in WAL mode") {
		t.Fatalf("an external claim without a durable commit, on a local file: %v", err)
	}
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

// A go-dqlite app node's connections have idem, in the replicated build:
// an external claim commits (the Raft log is its durability, where the
// node's VFS reports synchronous=OFF), and idem_versioned() in autocommit
// is refused.  The claim, the record and the duplicate go through the
// node's database/sql driver, as a service makes them.
func TestDqliteNode(t *testing.T) {
	register(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	node, err := app.New(t.TempDir(), app.WithAddress(freeAddr(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if err := node.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := node.Open(ctx, "idem")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
