// SPDX-License-Identifier: MIT

// Package mixed tests one binary that holds both go-dqlite and
// go-sqlite3 as `go get` brings it (its bundled SQLite): the executable's
// SQLite symbols (go-sqlite3's copy) serve libdqlite too, so idem, the
// node and the local database all run in that one copy.  go-dqlite's init
// would put it in single-thread mode, unsafe for go-sqlite3's connections
// on other threads: the binary runs with GO_DQLITE_MULTITHREAD=1 (TestMain
// re-runs itself with it).
package mixed

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/canonical/go-dqlite/app"
	_ "github.com/mattn/go-sqlite3"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

type args struct {
	N int `json:"n"`
}

// A node and a local database in one process, used at once from many
// goroutines, each through the library: every call runs once.
func TestNodeAndLocalDatabase(t *testing.T) {
	if err := idem.Register(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	node, err := app.New(t.TempDir(), app.WithAddress(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if err := node.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	ndb, err := node.Open(ctx, "mixed")
	if err != nil {
		t.Fatal(err)
	}
	defer ndb.Close()
	ldb, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "l.db")+"?_journal_mode=WAL&_sync=FULL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	var sends sync.Map
	var wg sync.WaitGroup
	for _, db := range []*sql.DB{ndb, ldb} {
		calls, err := idem.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer calls.Close(ctx)
		ship := idem.External(calls, "ship", func(ctx context.Context, key string, a args) (int, error) {
			if _, dup := sends.LoadOrStore(fmt.Sprintf("%p%s", db, key), true); dup {
				t.Errorf("sent twice: %s", key)
			}
			return a.N, nil
		})
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					for {
						o, err := ship.Call(ctx, "w", "c", args{i})
						if err == nil {
							if o.Result != i {
								t.Errorf("call %d: %+v", i, o)
							}
							break
						}
						if ctx.Err() != nil {
							t.Errorf("call %d: %v", i, err)
							return
						}
						time.Sleep(5 * time.Millisecond) // in progress elsewhere
					}
				}
			}()
		}
	}
	wg.Wait()
	var v string
	if err := ndb.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	var lv string
	ldb.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&lv)
	t.Logf("the node runs SQLite %s, the local database %s", v, lv)
}
