// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// open: a database of mattn/go-sqlite3 (its bundled SQLite), durable
// enough for an external claim, and its claim table.
func open(t *testing.T, opts ...idem.Option) (*sql.DB, *idem.Calls) {
	t.Helper()
	register(t)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "app.db")+"?_journal_mode=WAL&_sync=FULL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, openCalls(t, db, opts...)
}

func openCalls(t *testing.T, db *sql.DB, opts ...idem.Option) *idem.Calls {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls, err := idem.Open(ctx, db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := calls.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return calls
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type order struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type placed struct {
	Order int64 `json:"order"`
}

func (p placed) IdemID() any { return p.Order }

// A local tool: its first call runs, a duplicate replays the first
// result without running, a failing call is released (its writes rolled
// back) so that a retry runs again.
func TestLocalTool(t *testing.T) {
	db, calls := open(t)
	ctx := ctx5(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT, qty INT)"); err != nil {
		t.Fatal(err)
	}
	runs := 0
	fail := errors.New("out of stock")
	place := idem.Local(calls, "place_order", func(ctx context.Context, tx *sql.Tx, a order) (placed, error) {
		runs++
		r, err := tx.ExecContext(ctx, "INSERT INTO orders(sku, qty) VALUES(?, ?)", a.SKU, a.Qty)
		if err != nil {
			return placed{}, err
		}
		id, _ := r.LastInsertId()
		if a.Qty > 5 {
			return placed{}, fail
		}
		return placed{Order: id}, nil
	})
	out, err := place.Call(ctx, "alice", "c-1", order{"A1", 2})
	if err != nil || out.Replayed || out.Result.Order != 1 || out.ID != int64(1) {
		t.Fatalf("first: %+v %v", out, err)
	}
	again, err := place.Call(ctx, "alice", "c-1", order{"A1", 2})
	if err != nil || !again.Replayed || again.Result.Order != 1 || again.Key != out.Key || fmt.Sprint(again.ID) != "1" {
		t.Fatalf("duplicate: %+v %v", again, err)
	}
	if runs != 1 {
		t.Fatalf("the tool ran %d times", runs)
	}
	_, err = place.Call(ctx, "alice", "c-2", order{"A1", 9})
	var ce *idem.CallError
	if !errors.Is(err, fail) || !errors.As(err, &ce) || ce.Status != "released" || ce.Replayed {
		t.Fatalf("a failing tool: %v", err)
	}
	_, err = place.Call(ctx, "alice", "c-2", order{"A1", 9})
	if !errors.Is(err, fail) || runs != 3 {
		t.Fatalf("a released call runs again: %v, %d runs", err, runs)
	}
	var n int
	db.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n)
	if n != 1 {
		t.Fatalf("%d order rows: the failed calls' writes were not rolled back", n)
	}
}

// local_failure=keep: the failed call is kept, and a duplicate is told
// ErrFailed (the extension's status), never run.
func TestLocalFailureKept(t *testing.T) {
	_, calls := open(t, idem.TableOption("local_failure", "keep"))
	ctx := ctx5(t)
	runs := 0
	tool := idem.Local(calls, "t", func(ctx context.Context, tx *sql.Tx, a map[string]int) (int, error) {
		runs++
		return 0, errors.New("boom")
	})
	_, err := tool.Call(ctx, "w", "c", map[string]int{"a": 1})
	if !errors.Is(err, idem.ErrFailed) {
		t.Fatalf("first: %v", err)
	}
	_, err = tool.Call(ctx, "w", "c", map[string]int{"a": 1})
	var ce *idem.CallError
	if !errors.Is(err, idem.ErrFailed) || !errors.As(err, &ce) || !ce.Replayed || runs != 1 {
		t.Fatalf("duplicate of a kept failure: %v (runs %d)", err, runs)
	}
}

type shipment struct {
	ID string `json:"id"`
}

// An external tool: the claim commits before the request, the key goes
// with it, the result is recorded; NotSent and Fenced release the call
// (a retry sends); any other error leaves it unknown, never sent again.
func TestExternalTool(t *testing.T) {
	_, calls := open(t)
	ctx := ctx5(t)
	var sent []string
	var mode string
	ship := idem.External(calls, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
		switch mode {
		case "refused":
			return shipment{}, idem.NotSent(errors.New("connection refused"))
		case "fenced":
			return shipment{}, idem.Fenced(errors.New("the target refuses this key from now on"))
		case "timeout":
			sent = append(sent, key)
			return shipment{}, errors.New("read: i/o timeout")
		}
		sent = append(sent, key)
		return shipment{ID: "s-" + a.SKU}, nil
	})
	out, err := ship.Call(ctx, "alice", "c-1", order{"A1", 1})
	if err != nil || out.Replayed || out.Result.ID != "s-A1" || out.Sends != 1 {
		t.Fatalf("first: %+v %v", out, err)
	}
	if len(sent) != 1 || sent[0] != `"`+out.Key+`"` {
		t.Fatalf("the key sent: %q (key %s)", sent, out.Key)
	}
	out, err = ship.Call(ctx, "alice", "c-1", order{"A1", 1})
	if err != nil || !out.Replayed || out.Result.ID != "s-A1" || len(sent) != 1 {
		t.Fatalf("duplicate: %+v %v", out, err)
	}
	for _, m := range []string{"refused", "fenced"} {
		mode = m
		_, err = ship.Call(ctx, "alice", "c-"+m, order{"B", 1})
		want := map[string]error{"refused": idem.ErrNotSent, "fenced": idem.ErrFenced}[m]
		if !errors.Is(err, want) {
			t.Fatalf("%s: %v", m, err)
		}
		mode = ""
		out, err = ship.Call(ctx, "alice", "c-"+m, order{"B", 1})
		if err != nil || out.Replayed {
			t.Fatalf("%s: the released call is sent by the retry: %+v %v", m, out, err)
		}
	}
	mode = "timeout"
	n := len(sent)
	_, err = ship.Call(ctx, "alice", "c-3", order{"C", 1})
	var ce *idem.CallError
	if !errors.Is(err, idem.ErrUnknown) || !errors.As(err, &ce) || ce.Replayed || !strings.Contains(ce.Message, "may") {
		t.Fatalf("an error after sending: %v", err)
	}
	mode = ""
	_, err = ship.Call(ctx, "alice", "c-3", order{"C", 1})
	if !errors.Is(err, idem.ErrUnknown) || !errors.As(err, &ce) || !ce.Replayed || len(sent) != n+1 {
		t.Fatalf("an unknown call is never sent again: %v (%d sends)", err, len(sent)-n)
	}
	// The operator's verdict from the target's records.
	if err := calls.Reconcile(ctx, ce.Key, idem.NotSentVerdict); !errors.Is(err, idem.ErrRefused) {
		t.Fatalf("not_sent on an unknown call is the extension's refusal: %v", err)
	}
	v, _ := idem.Arrived("s-C", shipment{ID: "s-C"})
	if err := calls.Reconcile(ctx, ce.Key, v); err != nil {
		t.Fatal(err)
	}
	out, err = ship.Call(ctx, "alice", "c-3", order{"C", 1})
	if err != nil || !out.Replayed || out.Result.ID != "s-C" || out.ID != "s-C" {
		t.Fatalf("reconciled: %+v %v", out, err)
	}
	if err := calls.Reconcile(ctx, strings.Repeat("0", 32), idem.NotArrived); !errors.Is(err, idem.ErrNoCall) {
		t.Fatalf("no such call: %v", err)
	}
}

// While the request is out, a duplicate is told ErrInProgress.  A tool
// that outlives the caller's deadline leaves the call pending under this
// process, which records the answer when it comes: Close waits for it.
func TestExternalPastDeadline(t *testing.T) {
	db, calls := open(t)
	release := make(chan struct{})
	var arrivals atomic.Int32
	ship := idem.External(calls, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
		arrivals.Add(1)
		<-release // ignores ctx: a slow target
		return shipment{ID: "late"}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ship.Call(ctx, "w", "c", order{"A", 1})
	if !errors.Is(err, idem.ErrInProgress) || !errors.Is(err, idem.ErrNotRecorded) {
		t.Fatalf("past the deadline: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the call took %v, past its 300 ms deadline", d)
	}
	_, err = ship.Call(ctx5(t), "w", "c", order{"A", 1})
	if !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("a duplicate while the request is out: %v", err)
	}
	close(release)
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	if err := calls.Close(cctx); err != nil {
		t.Fatal(err)
	}
	calls2 := openCalls(t, db)
	out, err := idem.External(calls2, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
		t.Fatal("sent again")
		return shipment{}, nil
	}).Call(ctx5(t), "w", "c", order{"A", 1})
	if err != nil || out.Result.ID != "late" || arrivals.Load() != 1 {
		t.Fatalf("recorded by the background: %+v %v", out, err)
	}
}

// Owners hold leases: a live owner's heartbeat keeps its call from being
// stale; an owner that stopped loses the call to TakeOver, which makes it
// unknown under a fence, and the old owner's late record lands nowhere.
// Owner names are matched exactly: node1 is not node11.
func TestLeaseTakeOver(t *testing.T) {
	db, calls := open(t, idem.TableOption("stale_after", "1 second"), idem.Owner("node1"), idem.Heartbeat(-1))
	other := openCalls(t, db, idem.Owner("node11"))
	live := openCalls(t, db, idem.Owner("node2"), idem.Heartbeat(200*time.Millisecond))
	gate := make(chan struct{})
	mk := func(c *idem.Calls) *idem.ExternalTool[order, shipment] {
		return idem.External(c, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
			<-gate
			return shipment{ID: "x"}, nil
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*idem.Calls{calls, live} {
		wg.Add(1)
		go func(i int, c *idem.Calls) {
			defer wg.Done()
			_, errs[i] = mk(c).Call(ctx5(t), "w", fmt.Sprint("c", i), order{"A", i})
		}(i, c)
	}
	time.Sleep(1600 * time.Millisecond)
	if keys, err := other.Abandon(ctx5(t)); err != nil || len(keys) != 0 {
		t.Fatalf("node11 abandoned node1's calls: %v %v", keys, err)
	}
	keys, err := other.TakeOver(ctx5(t))
	if err != nil || len(keys) != 1 {
		t.Fatalf("take over: %v %v", keys, err)
	}
	k, err := other.Get(ctx5(t), keys[0])
	if err != nil || k.Status != "unknown" || !strings.HasPrefix(k.Owner, "node1/") {
		t.Fatalf("the lapsed call: %+v %v", k, err)
	}
	close(gate)
	wg.Wait()
	if !errors.Is(errs[0], idem.ErrLost) {
		t.Fatalf("the old owner's late record: %v", errs[0])
	}
	if errs[1] != nil {
		t.Fatalf("the live owner: %v", errs[1])
	}
	k, _ = other.Get(ctx5(t), keys[0])
	if k.Status != "unknown" {
		t.Fatalf("the late record landed: %+v", k)
	}
}

// Without Heartbeat, the lease is the table's heartbeat (idem_options(): a
// third of stale_after): a request that outlasts stale_after keeps its
// call not stale, so that no one takes it over; once the call is settled
// the heartbeat stops (a row made pending again under the same owner is
// touched no more).  Margins: a beat every 0.67 s against 2 s.
func TestHeartbeatFromTable(t *testing.T) {
	db, calls := open(t, idem.TableOption("stale_after", "2 seconds"), idem.Owner("slow"))
	other := openCalls(t, db, idem.Owner("other"))
	gate, started, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := idem.External(calls, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
			close(started)
			<-gate
			return shipment{ID: "x"}, nil
		}).Call(context.Background(), "w", "c", order{"A", 1})
		done <- err
	}()
	<-started
	for i := 0; i < 3; i++ { // out for 3 s, stale_after and half as much again
		time.Sleep(time.Second)
		var stale int
		if err := db.QueryRow("SELECT stale FROM calls WHERE member = 0").Scan(&stale); err != nil || stale != 0 {
			t.Fatalf("the call out for %d s is stale: %d %v", i+1, stale, err)
		}
		if keys, err := other.TakeOver(ctx5(t)); err != nil || len(keys) != 0 {
			t.Fatalf("taken over while its request was out: %v %v", keys, err)
		}
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	const old = "2000-01-01 00:00:00.000"
	if _, err := db.Exec("UPDATE calls_claim SET status = 'pending', updated = ? WHERE member = 0", old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // nearly four beats
	var updated string
	if err := db.QueryRow("SELECT updated FROM calls WHERE member = 0").Scan(&updated); err != nil || updated != old {
		t.Fatalf("touched after it was settled: %q %v", updated, err)
	}
}

// A table without stale_after gets no heartbeat, even with Heartbeat
// given: its calls never go stale, and a beat would only write.
func TestNoHeartbeatWithoutStaleAfter(t *testing.T) {
	db, calls := open(t, idem.Heartbeat(50*time.Millisecond))
	var before, after string
	_, err := idem.External(calls, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
		if err := db.QueryRow("SELECT updated FROM calls WHERE member = 0").Scan(&before); err != nil {
			return shipment{}, err
		}
		time.Sleep(500 * time.Millisecond) // ten beats, were there any
		err := db.QueryRow("SELECT updated FROM calls WHERE member = 0").Scan(&after)
		return shipment{ID: "x"}, err
	}).Call(ctx5(t), "w", "c", order{"A", 1})
	if err != nil || before != after {
		t.Fatalf("touched without stale_after: %q then %q, %v", before, after, err)
	}
}

// go-sqlite3's own default (synchronous=NORMAL) is named in the refusal of
// an external claim.
func TestMattnDefaultSynchronous(t *testing.T) {
	register(t)
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "d.db")+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	calls := openCalls(t, db)
	_, err = idem.External(calls, "x", func(ctx context.Context, key string, a int) (int, error) {
		t.Fatal("sent")
		return 0, nil
	}).Call(ctx5(t), "w", "c", 1)
	if !errors.Is(err, idem.ErrRefused) || !strings.Contains(err.Error(), "_sync=FULL") {
		t.Fatalf("%v", err)
	}
}

// The committed amalgamation is ext/ as it is now (skipped outside the
// repository, where ext/ is absent).
func TestAmalgamationFresh(t *testing.T) {
	if _, err := os.Stat("../../ext/idem.c"); err != nil {
		t.Skip("no ext/ here")
	}
	out := filepath.Join(t.TempDir(), "a.h")
	cmd := exec.Command("sh", "amalgamate.sh", "../../ext", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	want, _ := os.ReadFile(out)
	have, _ := os.ReadFile("idem_amalgamation.h")
	if string(want) != string(have) {
		t.Fatal("idem_amalgamation.h is stale: run go generate in bindings/go (or make go) and commit it")
	}
}

// The README's first tools, built and run as a Go developer would: a
// module of its own outside the repository, requiring this module (by a
// replace directive to this directory) and go-sqlite3 from the proxy.
func TestReadmeProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "TestReadmeProgram (go test")
	if i < 0 {
		t.Fatal("README.md: no block marked as TestReadmeProgram's")
	}
	text = text[i:]
	text = text[strings.Index(text, "```go\n")+6:]
	prog := text[:strings.Index(text, "```")]
	if n := strings.Count(prog, "\n"); n > 60 {
		t.Fatalf("the first tools take %d lines", n)
	}
	here, _ := os.Getwd()
	dir := t.TempDir()
	gomod := "module first\n\ngo 1.22\n\nrequire (\n\tgithub.com/idem-sqlite/idem/bindings/go v0.0.0\n\tgithub.com/mattn/go-sqlite3 " +
		mattnVersion(t) + "\n)\n\nreplace github.com/idem-sqlite/idem/bindings/go => " + here + "\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644)
	charges := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Idempotency-Key") == "" {
			http.Error(w, "no key", 400)
			return
		}
		charges++
		w.Header().Set("Charge-Id", fmt.Sprintf("ch_%d", charges))
	}))
	defer srv.Close()
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "PAY_URL="+srv.URL)
	out, err := cmd.CombinedOutput()
	want := "1 false <nil> ch_1 false <nil>\n1 true <nil> ch_1 true <nil>\n"
	if err != nil || !strings.HasSuffix(string(out), want) || charges != 1 {
		t.Fatalf("go run: %v (%d charges)\n%s", err, charges, out)
	}
}

// mattnVersion: the go-sqlite3 this module requires.
func mattnVersion(t *testing.T) string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "github.com/mattn/go-sqlite3" {
			return f[1]
		}
	}
	t.Fatal("go.mod requires no go-sqlite3")
	return ""
}

// A restarted node abandons the pending calls of its earlier run (same
// owner name, another run): unknown at once, its name matched exactly
// (n1's restart leaves n11's call alone, and its own new calls too).
func TestAbandonEarlierRun(t *testing.T) {
	db, old := open(t, idem.Owner("n1"), idem.Heartbeat(-1))
	n11 := openCalls(t, db, idem.Owner("n11"), idem.Heartbeat(-1))
	gate := make(chan struct{})
	defer close(gate)
	blocked := func(c *idem.Calls, conv string) {
		go idem.External(c, "ship", func(ctx context.Context, key string, a int) (int, error) {
			<-gate
			return 1, nil
		}).Call(context.Background(), "w", conv, 1)
	}
	blocked(old, "c-old")
	blocked(n11, "c-n11")
	restarted := openCalls(t, db, idem.Owner("n1"), idem.Heartbeat(-1))
	blocked(restarted, "c-new")
	time.Sleep(300 * time.Millisecond)
	keys, err := restarted.Abandon(ctx5(t))
	if err != nil || len(keys) != 1 {
		t.Fatalf("abandoned: %v %v", keys, err)
	}
	k, _ := restarted.Get(ctx5(t), keys[0])
	if k.Status != "unknown" || k.Conv != "c-old" {
		t.Fatalf("the call abandoned: %+v", k)
	}
}

// A tool that panics: the panic reaches the caller's goroutine, as if fn
// had been called there (recover() gets its value), never a crash of the
// process from a goroutine of idem's that no recover() can reach.  A
// local call's writes and claim roll back (a retry runs again); an
// external call is recorded unknown first (the request may have left),
// not left pending with nobody to record it.
func TestToolPanics(t *testing.T) {
	db, calls := open(t)
	ctx := ctx5(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders(id INTEGER PRIMARY KEY, sku TEXT, qty INT)"); err != nil {
		t.Fatal(err)
	}
	caught := func(f func()) (v any) {
		defer func() { v = recover() }()
		f()
		return nil
	}
	boom := true
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a order) (placed, error) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders(sku, qty) VALUES(?, ?)", a.SKU, a.Qty); err != nil {
			return placed{}, err
		}
		if boom {
			panic("local boom")
		}
		return placed{1}, nil
	})
	if v := caught(func() { place.Call(ctx, "w", "c", order{"A", 1}) }); v != "local boom" {
		t.Fatalf("local: recovered %v", v)
	}
	if n := one(t, db, "SELECT count(*) FROM calls"); n != "0" {
		t.Fatalf("local: the claim rolled back: %s calls", n)
	}
	if n := one(t, db, "SELECT count(*) FROM orders"); n != "0" {
		t.Fatalf("local: its writes rolled back: %s orders", n)
	}
	boom = false
	if out, err := place.Call(ctx, "w", "c", order{"A", 1}); err != nil || out.Replayed {
		t.Fatalf("local: a retry runs: %+v %v", out, err)
	}
	ship := idem.External(calls, "ship", func(ctx context.Context, key string, a order) (shipment, error) {
		panic(fmt.Errorf("external boom %s", a.SKU))
	})
	v := caught(func() { ship.Call(ctx, "w", "c", order{"B", 1}) })
	if e, ok := v.(error); !ok || e.Error() != "external boom B" {
		t.Fatalf("external: recovered %v", v)
	}
	_, err := ship.Call(ctx, "w", "c", order{"B", 1})
	var ce *idem.CallError
	if !errors.Is(err, idem.ErrUnknown) || !errors.As(err, &ce) || !ce.Replayed ||
		!strings.Contains(one(t, db, "SELECT note FROM calls WHERE tool = 'ship'"), "panic: external boom B") {
		t.Fatalf("external: recorded unknown: %v", err)
	}
}

// A local call whose COMMIT the database keeps busy (a reader of a
// rollback journal) past the connection's busy timeout is rolled back
// and released, the tool run once, and the answer says so at once: the
// connection's busy timeout is the wait, as in Python and Node, not the
// context's deadline with the tool run again at each attempt
// (doc/contract.md §5).
func TestLocalCommitBusy(t *testing.T) {
	register(t)
	path := filepath.Join(t.TempDir(), "busy.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE&_sync=FULL&_busy_timeout=50")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	calls := openCalls(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders(id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=50")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	reader, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var n int
	if _, err := reader.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if err := reader.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a int) (int, error) {
		runs.Add(1)
		_, err := tx.ExecContext(ctx, "INSERT INTO orders DEFAULT VALUES")
		return a, err
	})
	t0 := time.Now()
	_, err = place.Call(ctx, "w", "c", 7)
	var ce *idem.CallError
	if !errors.As(err, &ce) || ce.Status != "released" || errors.Is(err, idem.ErrCommitUnknown) ||
		!strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), "a retry runs it anew") {
		t.Fatalf("a busy COMMIT: %v", err)
	}
	if runs.Load() != 1 || time.Since(t0) > 10*time.Second {
		t.Fatalf("the tool ran %d times in %v: a busy COMMIT was retried past the busy timeout", runs.Load(), time.Since(t0))
	}
	if _, err := reader.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM calls)").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rolled back: %d rows left, %v", n, err)
	}
	out, err := place.Call(ctx, "w", "c", 7)
	if err != nil || out.Replayed || out.Result != 7 || runs.Load() != 2 {
		t.Fatalf("the retry: %+v %v (runs %d)", out, err, runs.Load())
	}
}

// Reconcile on a database kept busy past the connection's busy timeout,
// by a writer or by a reader of the rollback journal (its COMMIT busy):
// one attempt, the busy timeout the only wait, nothing written, and the
// database's error, as in Python and Node (doc/contract.md §5); a busy
// COMMIT was ErrCommitUnknown, although it had not committed.
func TestReconcileBusy(t *testing.T) {
	for _, hold := range []string{"writer", "reader"} {
		t.Run(hold, func(t *testing.T) {
			register(t)
			path := filepath.Join(t.TempDir(), "busy.db")
			db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE&_sync=FULL&_busy_timeout=50")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			calls := openCalls(t, db)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var key string
			for _, q := range []string{
				"CREATE TABLE orders(id INTEGER PRIMARY KEY)",
				"INSERT INTO calls(who, conv, tool, args, kind) VALUES ('w', 'c', 'pay', '1', 'external')",
				"UPDATE calls SET status = 'failed' WHERE key = idem_key('w', 'c', 'pay', '1') AND member = 0",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(q, err)
				}
			}
			if err := db.QueryRowContext(ctx, "SELECT idem_key('w', 'c', 'pay', '1')").Scan(&key); err != nil {
				t.Fatal(err)
			}
			other, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=50")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			holder, err := other.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			begin := map[string]string{"writer": "BEGIN IMMEDIATE", "reader": "BEGIN"}[hold]
			var n int
			if _, err := holder.ExecContext(ctx, begin); err != nil {
				t.Fatal(err)
			}
			if err := holder.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
				t.Fatal(err)
			}
			v, _ := idem.Arrived("ch_1", map[string]int{"ok": 1})
			t0 := time.Now()
			err = calls.Reconcile(ctx, key, v)
			if err == nil || errors.Is(err, idem.ErrCommitUnknown) || errors.Is(err, idem.ErrRefused) ||
				!strings.Contains(err.Error(), "database is locked") || time.Since(t0) > 10*time.Second {
				t.Fatalf("a busy database: %v (after %v)", err, time.Since(t0))
			}
			if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			if k, err := calls.Get(ctx, key); err != nil || k.Status != "unknown" {
				t.Fatalf("nothing written: %+v %v", k, err)
			}
			if err := calls.Reconcile(ctx, key, v); err != nil {
				t.Fatal(err)
			}
			if k, err := calls.Get(ctx, key); err != nil || k.Status != "done" {
				t.Fatalf("reconciled: %+v %v", k, err)
			}
		})
	}
}
