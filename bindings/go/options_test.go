// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// createError: what CREATE VIRTUAL TABLE says of these options, on a
// database of its own.
func createError(t *testing.T, table string, options []string) string {
	t.Helper()
	register(t)
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec("CREATE VIRTUAL TABLE " + table + " USING idem(" + strings.Join(options, ", ") + ")")
	if err == nil {
		t.Fatalf("CREATE took %v", options)
	}
	return err.Error()
}

// The options are checked by the extension alone (idem_parse_options()):
// a bad one is refused with CREATE VIRTUAL TABLE's own words, before
// anything is made.
func TestBadOptionRefusedWithCreatesWords(t *testing.T) {
	for _, c := range [][]string{
		{"local_failure", "kept"},
		{"retain", "forever"},
		{"retain", "36526 days"},
		{"max_sends", "0"},
		{"max_sends", "101"},
		{"honours_key", "maybe"},
		{"locl_failure", "keep"},
		{"retain", "1 day", "Retain", "2 days"},
		{"stale_after", "0.2 seconds"}, // under three heartbeats (§11)
	} {
		register(t)
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "app.db"))
		if err != nil {
			t.Fatal(err)
		}
		var opts []idem.Option
		var texts []string
		for i := 0; i < len(c); i += 2 {
			opts = append(opts, idem.TableOption(c[i], c[i+1]))
			texts = append(texts, c[i]+"='"+c[i+1]+"'")
		}
		_, err = idem.Open(ctx5(t), db, append(opts, idem.Table("t1"))...)
		want := createError(t, "t1", texts)
		if err == nil || err.Error() != want || !errors.Is(err, idem.ErrRefused) || !strings.HasPrefix(want, "idem: t1: ") {
			t.Errorf("%v: got %v, want %s", c, err, want)
		}
		if n := one(t, db, "SELECT count(*) FROM sqlite_schema WHERE name = 't1'"); n != "0" {
			t.Errorf("%v: the table was made", c)
		}
		db.Close()
	}
}

// A schema-qualified name is refused by the extension's one rule
// (idem_parse_options(), doc/contract.md §5), as Python and Node refuse
// it: the package quoted the whole name and made a table of main
// literally named "temp.calls".
func TestDottedTableNameRefused(t *testing.T) {
	register(t)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"temp.calls", "main.calls", "a.b.c"} {
		_, err := idem.Open(ctx5(t), db, idem.Table(name))
		want := "idem: the table name '" + name + "' %s"
		if err == nil || err.Error() != fmt.Sprintf(want, "holds a '.': a package makes and uses its table in the main database by the name it is given, where SQL would read a schema before the '.' (temp.calls: the table calls of the schema temp); give the table's name alone") || !errors.Is(err, idem.ErrRefused) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if n := one(t, db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%.%'"); n != "0" {
		t.Errorf("a table was made in main")
	}
	if n := one(t, db, "SELECT count(*) FROM sqlite_temp_schema"); n != "0" {
		t.Errorf("a table was made in temp")
	}
}

// A table that exists: each option given must be its value there, as the
// extension parses both; the Go package compared nothing before.
func TestOptionsOfAnExistingTable(t *testing.T) {
	register(t)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := ctx5(t)
	if _, err := db.Exec("CREATE VIRTUAL TABLE calls USING idem(retain='1 seconds'/*,*/--,retain='30 days'\n)"); err != nil {
		t.Fatal(err)
	}
	_, err = idem.Open(ctx, db, idem.TableOption("retain", "30 days"))
	if !errors.Is(err, idem.ErrTableOptions) || err.Error() != `idem: the table "calls" exists with`+
		` retain='1 second', not retain='30 days': a table's options are set when it is created;`+
		` leave the option out to use the table as it is, or use another table` {
		t.Fatalf("got %v", err)
	}
	_, err = idem.Open(ctx, db, idem.TableOption("local_failure", "keep"))
	if !errors.Is(err, idem.ErrTableOptions) || !strings.Contains(err.Error(), "exists with local_failure=release (the default), not local_failure='keep'") {
		t.Fatalf("got %v", err)
	}
	for _, same := range []string{"1 second", "1 seconds", "1.0 seconds"} {
		c, err := idem.Open(ctx, db, idem.TableOption("retain", same), idem.TableOption("local_failure", "release"))
		if err != nil {
			t.Fatal(err)
		}
		c.Close(ctx)
	}
	if _, err := db.Exec("CREATE TABLE plain(x)"); err != nil {
		t.Fatal(err)
	}
	_, err = idem.Open(ctx, db, idem.Table("plain"), idem.TableOption("retain", "1 day"))
	if !errors.Is(err, idem.ErrRefused) || !strings.Contains(err.Error(), "main.plain is not an idem table") {
		t.Fatalf("got %v", err)
	}
}

var tempOnce sync.Once

// A temp table of the name is not the table: SQLite reads temp.calls
// first for an unqualified name, and the package's table is main's
// (doc/contract.md §5): its options, claims and reading are main's.
func TestTempTableOfTheNameIsNotTheTable(t *testing.T) {
	register(t)
	tempOnce.Do(func() {
		// Every connection of this driver has a temp table calls(x).
		sql.Register("sqlite3_temp_calls", &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec("CREATE TEMP TABLE calls(x)", nil)
			return err
		}})
	})
	db, err := sql.Open("sqlite3_temp_calls", "file:"+filepath.Join(t.TempDir(), "app.db")+"?_journal_mode=WAL&_sync=FULL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := ctx5(t)
	if _, err := db.Exec("CREATE VIRTUAL TABLE main.calls USING idem(local_failure=keep)"); err != nil {
		t.Fatal(err)
	}
	if _, err := idem.Open(ctx, db, idem.TableOption("local_failure", "release")); !errors.Is(err, idem.ErrTableOptions) ||
		!strings.Contains(err.Error(), `the table "calls" exists with local_failure=keep, not local_failure='release'`) {
		t.Fatalf("got %v", err)
	}
	calls := openCalls(t, db, idem.TableOption("local_failure", "keep"))
	tool := idem.Local(calls, "t", func(ctx context.Context, tx *sql.Tx, a map[string]int) (int, error) {
		return a["n"], nil
	})
	for i := 0; i < 2; i++ {
		if o, err := tool.Call(ctx, "w", "c", map[string]int{"n": 7}); err != nil || o.Result != 7 || o.Replayed != (i == 1) {
			t.Fatalf("call %d: %+v, %v", i, o, err)
		}
	}
	if list, err := calls.List(ctx, "done", false, 0); err != nil || len(list) != 1 {
		t.Fatalf("List: %v, %v", list, err)
	}
	if n := one(t, db, "SELECT count(*) FROM main.calls WHERE member = 0"); n != "1" {
		t.Fatalf("main.calls: %s", n)
	}
	if n := one(t, db, "SELECT count(*) FROM temp.calls"); n != "0" {
		t.Fatalf("temp.calls: %s", n)
	}
}

// A change in C alone is seen: a build of the extension whose limits
// differ (-D: the note limit, the range of max_sends, the refused resends
// that end a wait), loaded into the
// connections of a database after the package's own, and the package
// follows it, with nothing changed in the package.
func TestChangeInCAloneIsSeen(t *testing.T) {
	cc, err := exec.LookPath("cc")
	ext := filepath.Join("..", "..", "ext", "idem.c")
	if _, serr := os.Stat(ext); err != nil || serr != nil {
		t.Skip("no C compiler or no ext/ here")
	}
	so := filepath.Join(t.TempDir(), "idem.so")
	if out, err := exec.Command(cc, "-O0", "-w", "-fPIC", "-shared", "-DIDEM_NOTE_MAX=40",
		"-DIDEM_MAX_SENDS_LIMIT=7", "-DIDEM_RESEND_REFUSALS=2", "-o", so, ext).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	register(t)
	sql.Register("sqlite3_idem_variant", &sqlite3.SQLiteDriver{Extensions: []string{so}})
	db, err := sql.Open("sqlite3_idem_variant", "file:"+filepath.Join(t.TempDir(), "v.db")+"?_journal_mode=WAL&_sync=FULL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := ctx5(t)
	_, err = idem.Open(ctx, db, idem.Table("v"), idem.TableOption("max_sends", "8"))
	if !errors.Is(err, idem.ErrRefused) || !strings.HasPrefix(err.Error(), "idem: v: bad value '8' for max_sends; use a whole number from 1 to 7:") {
		t.Fatalf("got %v", err)
	}
	notes := func(db *sql.DB, table string) int {
		calls, err := idem.Open(ctx, db, idem.Table(table), idem.TableOption("max_sends", "7"), idem.TableOption("local_failure", "keep"))
		if err != nil {
			t.Fatal(err)
		}
		defer calls.Close(context.Background())
		tool := idem.Local(calls, "fail", func(ctx context.Context, tx *sql.Tx, a map[string]int) (int, error) {
			return 0, errors.New(strings.Repeat("x", 5000))
		})
		if _, err := tool.Call(ctx, "w", "c", map[string]int{"a": 1}); !errors.Is(err, idem.ErrFailed) {
			t.Fatalf("got %v", err)
		}
		note := one(t, db, "SELECT note FROM "+table+" WHERE member = 0")
		if !strings.HasSuffix(note, "...") {
			t.Fatalf("note %q", note)
		}
		return len(note)
	}
	if n := notes(db, "v"); n != 40 {
		t.Errorf("the variant's note: %d bytes, want 40", n)
	}
	own, _ := open(t)
	if n := notes(own, "w"); n != 2000 {
		t.Errorf("the package's own build's note: %d bytes, want 2000", n)
	}
	if n := refusedResends(t, []string{so}); n != 2 {
		t.Errorf("the variant: %d refused resends end the wait, want 2", n)
	}
	if n := refusedResends(t, nil); n != 3 {
		t.Errorf("the package's own build: %d refused resends end the wait, want 3", n)
	}
}

var refuseSeq atomic.Int32

// refusedResends: how many refused resends in a row end a call's wait
// for its resend (then it replays the call as it stands), on connections
// that load exts after the package's own build.  An authorizer refuses
// every resend: the UPDATE of a call's reconcile column, which takes it.
func refusedResends(t *testing.T, exts []string) int {
	t.Helper()
	var refused atomic.Int32
	name := fmt.Sprintf("sqlite3_idem_refuse_%d", refuseSeq.Add(1))
	sql.Register(name, &sqlite3.SQLiteDriver{Extensions: exts, ConnectHook: func(c *sqlite3.SQLiteConn) error {
		c.RegisterAuthorizer(func(op int, table, column, _ string) int {
			if op == sqlite3.SQLITE_UPDATE && table == "r" && column == "reconcile" {
				refused.Add(1)
				return sqlite3.SQLITE_DENY
			}
			return sqlite3.SQLITE_OK
		})
		return nil
	}})
	db, err := sql.Open(name, "file:"+filepath.Join(t.TempDir(), "r.db")+"?_journal_mode=WAL&_sync=FULL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	calls := openCalls(t, db, idem.Table("r"), idem.TableOption("resend_after", "0.01 seconds"))
	target := newHonouring()
	target.lose = 1
	var sends atomic.Int32
	charge := idem.External(calls, "charge", func(ctx context.Context, key string, cents int) (string, error) {
		sends.Add(1)
		return target.charge(key)
	})
	charge.HonoursKey = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = charge.Call(ctx, "dan", "c-1", 700)
	if !errors.Is(err, idem.ErrUnknown) {
		t.Fatalf("a call whose resends are all refused: %v", err)
	}
	if n := sends.Load(); n != 1 {
		t.Fatalf("%d sends, want 1 (every resend refused)", n)
	}
	return int(refused.Load())
}
