// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/canonical/go-dqlite/app"
	"github.com/canonical/go-dqlite/client"
	dqdriver "github.com/canonical/go-dqlite/driver"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// The orders table, made by any node at start (in a transaction:
// doc/cluster.md); idem.Open makes the claim table.
const ordersSchema = "CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, k TEXT NOT NULL, owner TEXT NOT NULL)"

// shuffled is a node store that hands the addresses out in a new random
// order each time: go-dqlite 1.11 tries them in order, and a fixed order
// whose first node is cut off costs every connection its attempt timeout.
type shuffled struct{ addrs []string }

func (s shuffled) Get(context.Context) ([]client.NodeInfo, error) {
	l := make([]client.NodeInfo, len(s.addrs))
	for i, j := range rand.Perm(len(s.addrs)) {
		l[i] = client.NodeInfo{Address: s.addrs[j], Role: client.Voter}
	}
	return l, nil
}
func (s shuffled) Set(context.Context, []client.NodeInfo) error { return nil }

var nDrivers int

// openCluster: a database/sql handle on the cluster's database "idem",
// whose every connection attempt is bounded (a dial of 1 s, 1 s for each
// node asked for the leader).  via maps an address to a proxy in front of
// it (the lost-reply test).
func openCluster(addrs []string, via map[string]string) (*sql.DB, error) {
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		if p, ok := via[addr]; ok {
			addr = p
		}
		d := net.Dialer{Timeout: time.Second}
		return d.DialContext(ctx, "tcp", addr)
	}
	drv, err := dqdriver.New(shuffled{addrs},
		dqdriver.WithDialFunc(dial),
		dqdriver.WithAttemptTimeout(time.Second),
		dqdriver.WithConnectionTimeout(10*time.Second),
		dqdriver.WithLogFunc(func(client.LogLevel, string, ...interface{}) {}))
	if err != nil {
		return nil, err
	}
	nDrivers++
	name := fmt.Sprintf("idem-dqlite-%d", nDrivers)
	sql.Register(name, drv)
	db, err := sql.Open(name, "idem")
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(10 * time.Second)
	return db, nil
}

func splitList(s string) []string {
	var l []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			l = append(l, a)
		}
	}
	return l
}

// setup makes the schema and opens the service, retried until the
// deadline (a node may start before the cluster has a leader).
func setup(ctx context.Context, db *sql.DB, node, target string, faults bool, log func(string, ...interface{})) (*Service, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := func() error {
			c, err := db.Conn(actx)
			if err != nil {
				return err
			}
			defer c.Close()
			var n int
			if err := c.QueryRowContext(actx, "SELECT count(*) FROM sqlite_schema WHERE name = 'orders'").Scan(&n); err != nil || n > 0 {
				return err // there: nothing to do (a COMMIT whose answer was lost, too)
			}
			for _, q := range []string{"BEGIN", ordersSchema, "COMMIT"} {
				if _, err := c.ExecContext(actx, q); err != nil {
					c.Raw(func(any) error { return driver.ErrBadConn })
					return err
				}
			}
			return nil
		}()
		var s *Service
		if err == nil {
			s, err = NewService(actx, db, node, target, faults, log)
		}
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// duties: the owner's work in the background.  Calls left pending by an
// earlier run of this node become unknown at once (Abandon: the node's
// name matched exactly); calls of any owner whose lease lapsed (stale)
// become unknown (TakeOver); unknown calls are reconciled with the target.
func (s *Service) duties(target string) {
	abandoned := false
	for {
		bctx, c := context.WithTimeout(context.Background(), 8*time.Second)
		if !abandoned {
			if keys, err := s.Calls.Abandon(bctx); err == nil {
				abandoned = true
				if len(keys) > 0 {
					s.Log("abandon: %d pending calls of an earlier run marked unknown", len(keys))
				}
			}
		}
		if keys, err := s.Calls.TakeOver(bctx); err == nil && len(keys) > 0 {
			s.Log("take-over: %d calls of lapsed owners marked unknown", len(keys))
		}
		if abandoned && target != "" {
			s.reconcile(bctx)
		}
		c()
		time.Sleep(500 * time.Millisecond)
	}
}

func cmdNode(args []string) error {
	fs := flag.NewFlagSet("node", flag.ExitOnError)
	name := fs.String("name", "", "this node's name (owner tokens start with it)")
	dir := fs.String("dir", "", "data directory")
	dbAddr := fs.String("db", "", "dqlite address of this node")
	join := fs.String("join", "", "addresses of nodes to join (first start only)")
	cluster := fs.String("cluster", "", "addresses of all nodes (for the service's driver)")
	httpAddr := fs.String("http", "", "HTTP address of the service")
	target := fs.String("target", "", "base URL of the outside target")
	sendVia := fs.String("send-via", "", "base URL the requests to the target go through (a hold proxy); default -target")
	faults := fs.Bool("faults", false, "honour X-Crash-At (tests only)")
	fs.Parse(args)
	if *name == "" || *dir == "" || *dbAddr == "" || *httpAddr == "" || *cluster == "" {
		return fmt.Errorf("-name, -dir, -db, -cluster and -http are required")
	}
	logger := log.New(os.Stderr, *name+" ", log.Ltime|log.Lmicroseconds)

	// idem first: every SQLite connection the node opens will have it.
	if err := idem.Register(); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	opts := []app.Option{app.WithAddress(*dbAddr), app.WithLogFunc(func(client.LogLevel, string, ...interface{}) {})}
	if *join != "" {
		opts = append(opts, app.WithCluster(splitList(*join)))
	}
	node, err := app.New(*dir, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := node.Ready(ctx); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	db, err := openCluster(splitList(*cluster), nil)
	if err != nil {
		return err
	}
	s, err := setup(ctx, db, *name, *target, *faults, logger.Printf)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if *sendVia != "" {
		s.Send = *sendVia
	}
	go s.duties(*target)

	mux := http.NewServeMux()
	mux.HandleFunc("/call", func(w http.ResponseWriter, r *http.Request) {
		var call Call
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		if err := json.NewDecoder(r.Body).Decode(&call); err != nil || call.Who == "" || len(call.Args) == 0 {
			http.Error(w, "a call is {\"who\", \"conv\", \"tool\", \"args\"}", http.StatusBadRequest)
			return
		}
		// Every call ends within its deadline: the client's, or 10 s.
		d := 10 * time.Second
		if ms, err := strconv.Atoi(r.Header.Get("X-Deadline-Ms")); err == nil && ms > 0 {
			d = time.Duration(ms) * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		if call.Tool != "order" && call.Tool != "ship" {
			http.Error(w, "tool is order (local) or ship (external)", http.StatusBadRequest)
			return
		}
		out := s.Run(ctx, call, r.Header.Get("X-Crash-At"))
		code := http.StatusOK
		switch out.Status {
		case "pending", "unknown":
			code = http.StatusConflict
		case "error", "retry":
			code = http.StatusServiceUnavailable
		case "fenced":
			code = http.StatusGone // final: the target refuses this key
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(out)
	})
	// /health: 200 only when the cluster has a leader with a quorum
	// behind it (a read through the leader answers within 1 s: a leader
	// cut off from the majority steps down, and the read fails), with
	// what this process still owes its calls; 503 otherwise.
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		hctx, c := context.WithTimeout(r.Context(), time.Second)
		defer c()
		var pending int
		err := db.QueryRowContext(hctx, "SELECT count(*) FROM calls WHERE status = 'pending'").Scan(&pending)
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "{\"quorum\":false,\"owes\":%d,\"error\":%q}\n", s.Pending(), err.Error())
			return
		}
		fmt.Fprintf(w, "{\"quorum\":true,\"owes\":%d,\"pending\":%d}\n", s.Pending(), pending)
	})
	srv := &http.Server{Addr: *httpAddr, Handler: mux,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 70 * time.Second, IdleTimeout: 60 * time.Second}
	stopped := make(chan struct{})
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		<-ch
		// Graceful: stop accepting and finish the calls in flight (each
		// ends by its deadline), record what is still owed, hand the
		// leadership over, then stop.
		logger.Printf("shutting down")
		sctx, c := context.WithTimeout(context.Background(), 15*time.Second)
		defer c()
		srv.Shutdown(sctx)
		close(stopped)
	}()
	logger.Printf("serving on %s, dqlite %s", *httpAddr, *dbAddr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	<-stopped
	cctx, c := context.WithTimeout(context.Background(), 10*time.Second)
	defer c()
	if err := s.Calls.Close(cctx); err != nil {
		logger.Printf("%v: they stay pending under this run, and are taken over when their lease lapses", err)
	}
	if err := node.Handover(cctx); err != nil {
		logger.Printf("handover: %v", err)
	}
	db.Close()
	logger.Printf("stopped")
	return node.Close()
}

// cmdLeader prints the leader's address.
func cmdLeader(args []string) error {
	fs := flag.NewFlagSet("leader", flag.ExitOnError)
	cluster := fs.String("cluster", "", "addresses of the nodes")
	timeout := fs.Duration("timeout", 20*time.Second, "give up after")
	fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	for {
		actx, c := context.WithTimeout(ctx, 2*time.Second)
		cli, err := client.FindLeader(actx, shuffled{splitList(*cluster)},
			client.WithDialFunc(func(ctx context.Context, a string) (net.Conn, error) {
				d := net.Dialer{Timeout: time.Second}
				return d.DialContext(ctx, "tcp", a)
			}), client.WithLogFunc(func(client.LogLevel, string, ...interface{}) {}))
		if err == nil {
			l, err := cli.Leader(actx)
			cli.Close()
			if err == nil && l != nil {
				c()
				fmt.Println(l.Address)
				return nil
			}
		}
		c()
		if ctx.Err() != nil {
			return fmt.Errorf("no leader after %v", *timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
