// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"database/sql"
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

// The schema, made by any node at start (in a transaction: doc/cluster.md).
var schema = []string{
	"CREATE VIRTUAL TABLE IF NOT EXISTS calls USING idem",
	"CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, k TEXT NOT NULL, owner TEXT NOT NULL)",
}

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

// setup makes the schema, retried until the deadline.
func setup(ctx context.Context, s *Service) error {
	for {
		err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
			_, err := inTx(ctx, c, func() error {
				for _, q := range schema {
					if _, err := exec(ctx, c, q); err != nil {
						return err
					}
				}
				return nil
			})
			return err
		})
		if err == nil || !backoff(ctx, err) {
			return err
		}
	}
}

// sweep: the pending calls of an earlier run of this node (its process
// died holding them) become unknown: the request may have left.
func (s *Service) sweep(ctx context.Context) (int, error) {
	n := 0
	err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, "SELECT who, conv, tool, args, owner FROM calls"+
			" WHERE status = 'pending' AND member = 0 AND substr(owner, 1, ?) = ? AND substr(owner, 1, ?) <> ?",
			len(s.Node)+1, s.Node+":", len(s.Node+":"+s.Boot)+1, s.Node+":"+s.Boot+":")
		if err != nil {
			return err
		}
		var dead []settle
		for rows.Next() {
			var st settle
			var args string
			if err := rows.Scan(&st.call.Who, &st.call.Conv, &st.call.Tool, &args, &st.token); err != nil {
				rows.Close()
				return err
			}
			st.call.Args = json.RawMessage(args)
			st.status = "failed"
			st.note = "its owner " + st.token + " died holding it: the request may have left"
			dead = append(dead, st)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, st := range dead {
			s.queue(st)
			n++
		}
		return nil
	})
	return n, err
}

// reconcile: this node's unknown calls are decided by the target: it
// either has the key (arrived: done, with the target's shipment) or
// fences it (it refuses the key from now on, so that no request still on
// its way can take effect: not arrived, released, a retry runs under the
// same key... and is refused, see below).  "Not seen" alone is never
// taken for "not sent": a request may be on the wire.  Owner names are
// compared exactly (substr), never with LIKE, whose _ and % are patterns
// and whose "n1:%" would not tell n1 from n11 without the colon.
func (s *Service) reconcile(ctx context.Context) error {
	type unk struct {
		key, owner string
	}
	var l []unk
	err := s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, "SELECT key, owner FROM calls WHERE status = 'unknown' AND member = 0"+
			" AND substr(owner, 1, ?) = ?", len(s.Node)+1, s.Node+":")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u unk
			if err := rows.Scan(&u.key, &u.owner); err != nil {
				return err
			}
			l = append(l, u)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	for _, u := range l {
		a, err := fence(ctx, s.Target, u.key)
		if err != nil {
			return err
		}
		err = s.attempt(ctx, func(ctx context.Context, c *sql.Conn) error {
			_, err := inTx(ctx, c, func() error {
				if a.Shipment > 0 {
					_, err := exec(ctx, c, "UPDATE calls SET reconcile = 'arrived', id = ?, result = json_object('shipment', ?, 'by', 'reconciled'),"+
						" note = 'reconciled: the target has it' WHERE key = ? AND member = 0 AND owner = ?",
						a.Shipment, a.Shipment, u.key, u.owner)
					return err
				}
				_, err := exec(ctx, c, "UPDATE calls SET reconcile = 'not_arrived' WHERE key = ? AND member = 0 AND owner = ?",
					u.key, u.owner)
				return err
			})
			return err
		})
		if err != nil {
			return err
		}
		verdict := "not_arrived"
		if a.Shipment > 0 {
			verdict = "arrived"
		}
		s.Log("reconciled %s %s (owner %s)", u.key, verdict, u.owner)
	}
	return nil
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
	s := &Service{DB: db, Target: *target, Node: *name, Boot: strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
		AttemptTimeout: 2 * time.Second, Faults: *faults, Log: logger.Printf}
	if err := setup(ctx, s); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	// The owner's duties, in the background: calls left pending by an
	// earlier run become unknown; what this process owes is settled;
	// this node's unknown calls are reconciled with the target.
	go func() {
		swept := false
		for {
			bctx, c := context.WithTimeout(context.Background(), 8*time.Second)
			if !swept {
				if n, err := s.sweep(bctx); err == nil {
					swept = true
					if n > 0 {
						s.Log("sweep: %d pending calls of an earlier run marked unknown", n)
					}
				}
			}
			if s.Pending() > 0 {
				s.settleOnce(bctx)
			}
			if swept && *target != "" {
				s.reconcile(bctx)
			}
			c()
			time.Sleep(500 * time.Millisecond)
		}
	}()

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
		var out Outcome
		switch call.Tool {
		case "order":
			out = s.Local(ctx, call, r.Header.Get("X-Crash-At"))
		case "ship":
			out = s.External(ctx, call, r.Header.Get("X-Crash-At"))
		default:
			http.Error(w, "tool is order (local) or ship (external)", http.StatusBadRequest)
			return
		}
		code := http.StatusOK
		switch out.Status {
		case "pending", "unknown":
			code = http.StatusConflict
		case "error":
			code = http.StatusServiceUnavailable
		case "fenced":
			code = http.StatusGone // final: the target refuses this key
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "{\"owes\":%d}\n", s.Pending())
	})
	srv := &http.Server{Addr: *httpAddr, Handler: mux,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 70 * time.Second, IdleTimeout: 60 * time.Second}
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		<-ch
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		srv.Shutdown(sctx)
	}()
	logger.Printf("serving on %s, dqlite %s", *httpAddr, *dbAddr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	db.Close()
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
