// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

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
