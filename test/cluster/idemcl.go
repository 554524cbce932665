// SPDX-License-Identifier: MIT
// idemcl -- a dqlite client for test/cluster/run.sh: claims made the way
// an application makes them (doc/cluster.md), with the
// retries that a cluster needs.
//
//	idemcl -s ADDR[,ADDR...] [-t SECONDS] COMMAND ARGS
//
//	wait VOTERS         wait until every node of -s answers and names one
//	                    leader, which is among them, with VOTERS voters
//	leader              print the leader's address
//	query SQL           run SQL as one plain query in autocommit (no
//	                    BEGIN): the path that doc/contract.md §7a warns about
//	exec SQL            run SQL as one plain exec in autocommit
//	race ROUNDS PREFIX ADDR_A ADDR_B
//	                    ROUNDS times, two clients (A entering through
//	                    ADDR_A, B through ADDR_B) make the same local call
//	                    at once; exactly one must win, the other must get
//	                    the claim error and replay the winner's result
//	stream N PREFIX NAME
//	                    make N local calls, PREFIX-0 .. PREFIX-(N-1), in
//	                    order, each retried until it is won or replayed,
//	                    through leader changes; prints "done I" after each
//	claim CONV NAME     one local call, one attempt, no retry
//	retry CONV NAME     one local call, retried until won or replayed
//
// A local call is the README's local tool, in one transaction:
//
//	BEGIN
//	INSERT INTO calls(who, conv, tool, args) VALUES(?, ?, ?, ?)  -- claim
//	INSERT INTO orders(k, by) VALUES(?, ?)                       -- the act
//	UPDATE calls SET status = 'done', id = ?, result = ?
//	 WHERE key = idem_key(?, ?, ?, ?) AND member = 0             -- record
//	COMMIT
//
// The claim's error "idem: <table>: call already claimed" means: never act,
// replay (SELECT reply FROM calls WHERE key = ...).  Any other constraint
// error ends the call.  Every other error rolls the whole transaction back,
// so the call is simply tried again: "database is locked" (another writer
// holds the leader's write lock), a lost connection or a lost leadership
// (a new leader is being elected).  When
// the COMMIT's answer is lost the transaction may or may not have taken
// effect; the retry tells which: it wins (it had not) or it replays our own
// result (it had).  Either way the act happened exactly once.
//
// Exit status: 0 when every check of the command held, 1 otherwise, 2 for
// a usage error.  IDEMCL_DEBUG=1 prints every retried error to stderr.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/canonical/go-dqlite/client"
	"github.com/canonical/go-dqlite/driver"
)

const dbName = "idem"

var timeout = flag.Float64("t", 30, "give up after this many seconds")
var debug = os.Getenv("IDEMCL_DEBUG") != ""

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "idemcl: "+format+"\n", a...)
	os.Exit(1)
}

func store(addrs string) client.NodeStore {
	var infos []client.NodeInfo
	for _, a := range strings.Split(addrs, ",") {
		infos = append(infos, client.NodeInfo{Address: a})
	}
	s := client.NewInmemNodeStore()
	s.Set(context.Background(), infos)
	return s
}

var nDriver int

// open returns a database handle whose connections enter the cluster
// through addrs (the driver asks them for the leader and connects to it).
func open(addrs string) *sql.DB {
	drv, err := driver.New(store(addrs),
		driver.WithConnectionTimeout(5*time.Second),
		driver.WithAttemptTimeout(2*time.Second))
	if err != nil {
		die("%v", err)
	}
	nDriver++
	name := fmt.Sprintf("dqlite-idemcl-%d", nDriver)
	sql.Register(name, drv)
	db, err := sql.Open(name, dbName)
	if err != nil {
		die("%v", err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// sqliteCode is the primary SQLite result code of err, or -1.
func sqliteCode(err error) int {
	var e driver.Error
	if errors.As(err, &e) {
		return e.Code & 0xff
	}
	return -1
}

func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == 5 || c == 6 // SQLITE_BUSY, SQLITE_LOCKED
}

func isClaimed(err error) bool {
	return sqliteCode(err) == 19 &&
		strings.Contains(err.Error(), ": call already claimed")
}

// Outcome of one local call.
type outcome struct {
	won    bool   // this attempt's transaction committed: it acted
	replay string // the reply of the call, when it was already claimed
}

// Counts of one client's attempts.
type counts struct {
	attempts, busy, lost, won, replayed int
}

func args(conv string) (string, string, string, string) {
	return "agent", conv, "checkout", `{"sku":"A0001","qty":2}`
}

// localCall makes one attempt at the call conv as client name.
func localCall(ctx context.Context, db *sql.DB, conv, name string) (outcome, error) {
	who, conv, tool, a := args(conv)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return outcome{}, err
	}
	_, err = tx.ExecContext(ctx,
		"INSERT INTO calls(who, conv, tool, args) VALUES(?, ?, ?, ?)",
		who, conv, tool, a)
	if err != nil {
		tx.Rollback()
		if !isClaimed(err) {
			return outcome{}, err
		}
		var reply string
		err = db.QueryRowContext(ctx,
			"SELECT reply FROM calls WHERE key = idem_key(?, ?, ?, ?) AND member = 0",
			who, conv, tool, a).Scan(&reply)
		if err != nil {
			return outcome{}, err
		}
		return outcome{replay: reply}, nil
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO orders(k, by) VALUES(?, ?)", conv, name)
	if err == nil {
		var id int64
		id, err = res.LastInsertId()
		if err == nil {
			_, err = tx.ExecContext(ctx,
				"UPDATE calls SET status = 'done', id = ?, result = json_object('by', ?)"+
					" WHERE key = idem_key(?, ?, ?, ?) AND member = 0",
				id, name, who, conv, tool, a)
		}
	}
	if err != nil {
		tx.Rollback()
		return outcome{}, err
	}
	if err = tx.Commit(); err != nil {
		return outcome{}, err
	}
	return outcome{won: true}, nil
}

// retryCall makes the call conv until it is won or replayed, or the
// deadline passes.  Every error but a constraint error is retried: the
// whole transaction was rolled back, or its COMMIT's answer was lost.
func retryCall(ctx context.Context, db *sql.DB, conv, name string, c *counts) (outcome, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		o, err := localCall(actx, db, conv, name)
		cancel()
		c.attempts++
		if err == nil {
			if o.won {
				c.won++
			} else {
				c.replayed++
			}
			return o, nil
		}
		if ctx.Err() != nil {
			return o, fmt.Errorf("%s: gave up: %v", conv, err)
		}
		if sqliteCode(err) == 19 {
			return o, err // a constraint error is not transient
		}
		if debug {
			fmt.Fprintf(os.Stderr, "idemcl: %s: %s: attempt %d: %v\n", name, conv, c.attempts, err)
		}
		if isBusy(err) {
			c.busy++
			time.Sleep(time.Duration(1+rand.Intn(5)) * time.Millisecond)
		} else {
			c.lost++
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// A done call's reply, as idem writes it.
type reply struct {
	ID         *int64 `json:"id"`
	Idempotent bool   `json:"idempotent"`
	Status     string `json:"status"`
	Result     struct {
		By string `json:"by"`
	} `json:"result"`
}

func parseReply(s string) (reply, error) {
	var r reply
	err := json.Unmarshal([]byte(s), &r)
	if err == nil && (r.ID == nil || !r.Idempotent || r.Status != "done") {
		err = fmt.Errorf("not a done call's reply: %s", s)
	}
	return r, err
}

// ready: every node in addrs answers and names the same leader, and the
// cluster has at least voters voters.
func ready(ctx context.Context, addrs string, voters int) bool {
	leader := ""
	for _, addr := range strings.Split(addrs, ",") {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		cli, err := client.New(actx, addr)
		if err != nil {
			return false
		}
		l, err := cli.Leader(actx)
		if err != nil || l == nil || (leader != "" && l.Address != leader) {
			cli.Close()
			return false
		}
		leader = l.Address
		if l.Address == addr {
			nodes, err := cli.Cluster(actx)
			if err != nil {
				cli.Close()
				return false
			}
			for _, n := range nodes {
				if n.Role == client.Voter {
					voters--
				}
			}
		}
		cli.Close()
	}
	return voters <= 0
}

func cmdRace(ctx context.Context, rounds int, prefix, addrA, addrB string) bool {
	dbs := []*sql.DB{open(addrA), open(addrB)}
	names := []string{"A", "B"}
	var cs [2]counts
	var winsA, winsB, immediate, afterBusy int
	ok := true
	for r := 0; r < rounds; r++ {
		conv := fmt.Sprintf("%s-%d", prefix, r)
		var out [2]outcome
		var errs [2]error
		var busyBefore [2]int
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			busyBefore[i] = cs[i].busy
			// Both connect first, so that the claims, not the connections,
			// race.
			if err := dbs[i].PingContext(ctx); err != nil {
				die("round %d: %s cannot connect: %v", r, names[i], err)
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				out[i], errs[i] = retryCall(ctx, dbs[i], conv, names[i], &cs[i])
			}(i)
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			if ok {
				fmt.Printf("round %d: error: A: %v; B: %v\n", r, errs[0], errs[1])
			}
			ok = false
			continue
		}
		if out[0].won == out[1].won {
			fmt.Printf("round %d: %d winners\n", r, map[bool]int{true: 2, false: 0}[out[0].won])
			ok = false
			continue
		}
		w, l := 0, 1
		if out[1].won {
			w, l = 1, 0
			winsB++
		} else {
			winsA++
		}
		rp, err := parseReply(out[l].replay)
		if err != nil || rp.Result.By != names[w] {
			fmt.Printf("round %d: loser %s replayed %q, not %s's result (%v)\n",
				r, names[l], out[l].replay, names[w], err)
			ok = false
			continue
		}
		if cs[l].busy > busyBefore[l] {
			afterBusy++
		} else {
			immediate++
		}
	}
	fmt.Printf("race: %d rounds: %d won by A, %d won by B; the loser got the claim error"+
		" at once in %d, after busy retries in %d; busy errors retried: A %d, B %d;"+
		" other errors retried: A %d, B %d\n",
		rounds, winsA, winsB, immediate, afterBusy, cs[0].busy, cs[1].busy, cs[0].lost, cs[1].lost)
	return ok && winsA+winsB == rounds
}

func cmdStream(ctx context.Context, db *sql.DB, n int, prefix, name string) bool {
	var c counts
	own := 0
	ok := true
	for i := 0; i < n; i++ {
		conv := fmt.Sprintf("%s-%d", prefix, i)
		o, err := retryCall(ctx, db, conv, name, &c)
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
			return false
		}
		if !o.won {
			rp, err := parseReply(o.replay)
			if err != nil {
				fmt.Printf("%s: %s: %v\n", name, conv, err)
				ok = false
			} else if rp.Result.By == name {
				own++ // our COMMIT took effect, its answer was lost
			}
		}
		fmt.Printf("done %d\n", i)
	}
	fmt.Printf("stream %s: %d calls, %d attempts: %d won, %d replayed (%d of them"+
		" our own commit whose answer was lost); retried %d busy errors and %d"+
		" lost connections or leaders\n",
		name, n, c.attempts, c.won, c.replayed, own, c.busy, c.lost)
	return ok
}

func main() {
	servers := flag.String("s", "", "comma-separated addresses of dqlite nodes")
	flag.Parse()
	a := flag.Args()
	if *servers == "" || len(a) == 0 {
		fmt.Fprintln(os.Stderr, "usage: idemcl -s ADDR[,ADDR...] [-t SECONDS] COMMAND ARGS (see idemcl.go)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(),
		time.Duration(*timeout*float64(time.Second)))
	defer cancel()
	rand.Seed(time.Now().UnixNano())
	usage := func(format string, v ...interface{}) {
		fmt.Fprintf(os.Stderr, "idemcl: "+format+"\n", v...)
		os.Exit(2)
	}
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			usage("not a count: %q", s)
		}
		return n
	}
	need := func(n int) {
		if len(a) != n+1 {
			usage("%s takes %d arguments", a[0], n)
		}
	}
	ok := true
	switch a[0] {
	case "wait":
		need(1)
		want := num(a[1])
		for !ready(ctx, *servers, want) {
			if ctx.Err() != nil {
				die("the nodes %s do not all answer with one leader and %d voters after %gs",
					*servers, want, *timeout)
			}
			time.Sleep(200 * time.Millisecond)
		}
	case "leader":
		need(0)
		for {
			cli, err := client.FindLeader(ctx, store(*servers))
			if err == nil {
				l, err := cli.Leader(ctx)
				cli.Close()
				if err == nil && l != nil {
					fmt.Println(l.Address)
					break
				}
			}
			if ctx.Err() != nil {
				die("no leader after %gs", *timeout)
			}
			time.Sleep(200 * time.Millisecond)
		}
	case "query":
		need(1)
		rows, err := open(*servers).QueryContext(ctx, a[1])
		if err != nil {
			die("%v", err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			v := make([]interface{}, len(cols))
			p := make([]interface{}, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := rows.Scan(p...); err != nil {
				die("%v", err)
			}
			s := make([]string, len(v))
			for i := range v {
				s[i] = fmt.Sprint(v[i])
			}
			fmt.Println(strings.Join(s, "|"))
		}
		if err := rows.Err(); err != nil {
			die("%v", err)
		}
		rows.Close()
	case "exec":
		need(1)
		if _, err := open(*servers).ExecContext(ctx, a[1]); err != nil {
			die("%v", err)
		}
	case "race":
		need(4)
		ok = cmdRace(ctx, num(a[1]), a[2], a[3], a[4])
	case "stream":
		need(3)
		ok = cmdStream(ctx, open(*servers), num(a[1]), a[2], a[3])
	case "claim", "retry":
		need(2)
		var o outcome
		var err error
		db := open(*servers)
		if a[0] == "claim" {
			o, err = localCall(ctx, db, a[1], a[2])
		} else {
			o, err = retryCall(ctx, db, a[1], a[2], &counts{})
		}
		switch {
		case err != nil:
			fmt.Printf("error: %v\n", err)
			ok = false
		case o.won:
			fmt.Println("won")
		default:
			fmt.Printf("replay: %s\n", o.replay)
		}
	default:
		usage("unknown command %q", a[0])
	}
	if !ok {
		os.Exit(1)
	}
}
