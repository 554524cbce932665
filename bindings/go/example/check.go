// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"
)

// cmdCall runs calls in this process (a service without a node of its
// own) through the cluster, optionally through a proxy in front of the
// leader (-via ADDR=PROXY): the lost-reply test.
func cmdCall(args []string) error {
	fs := flag.NewFlagSet("call", flag.ExitOnError)
	cluster := fs.String("cluster", "", "node addresses")
	via := fs.String("via", "", "ADDR=PROXY: reach ADDR through PROXY")
	target := fs.String("target", "", "target base URL")
	n := fs.Int("n", 10, "calls")
	prefix := fs.String("prefix", "lost", "conv prefix")
	fs.Parse(args)
	m := map[string]string{}
	if a, p, ok := strings.Cut(*via, "="); ok {
		m[a] = p
	}
	db, err := openCluster(splitList(*cluster), m)
	if err != nil {
		return err
	}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	s, err := setup(sctx, db, "call", *target, false, log.New(os.Stderr, "call ", log.Ltime).Printf)
	scancel()
	if err != nil {
		return err
	}
	counts := map[string]int{}
	own, bad := 0, 0
	for i := 0; i < *n; i++ {
		call := callFor(*prefix, i)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		o := s.Run(ctx, call, "")
		cancel()
		counts[o.Status]++
		// A fresh key: "replayed" would be another arrival's result;
		// our own COMMIT whose answer was lost is found as ours (won).
		if o.Status != "won" {
			bad++
			fmt.Printf("%s: %s %s %s\n", call.Conv, o.Status, o.Reply, o.Error)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s.Calls.Close(ctx)
	st := s.Calls.Stats()
	own = int(st.OwnCommits)
	fmt.Printf("call: %d calls %v; lost COMMIT answers recovered: %d local calls replayed their own result,"+
		" %d external claims found pending under their own token, %d records found already written by themselves;"+
		" %d wrong; %d still owed\n",
		*n, fmtCounts(counts), own, st.OwnClaims, st.OwnRecords, bad, s.Pending())
	if bad > 0 || s.Pending() > 0 {
		return fmt.Errorf("%d calls not won or replayed as our own", bad)
	}
	return nil
}

// cmdCheck: the effects against the claims, key by key.
func cmdCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	cluster := fs.String("cluster", "", "node addresses")
	target := fs.String("target", "", "target base URL")
	prefixes := fs.String("prefix", "", "conv prefixes to check")
	wait := fs.Duration("settle", 30*time.Second, "wait this long for pending and unknown calls to settle")
	fs.Parse(args)
	db, err := openCluster(splitList(*cluster), nil)
	if err != nil {
		return err
	}
	type row struct {
		key, conv, kind, status, owner string
		id                             sql.NullInt64
	}
	var rows []row
	orders := map[string]int{}
	end := time.Now().Add(*wait)
	for {
		rows = rows[:0]
		orders = map[string]int{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = func() error {
			for _, p := range splitList(*prefixes) {
				r, err := db.QueryContext(ctx, "SELECT key, conv, kind, status, coalesce(owner, ''), id FROM calls"+
					" WHERE member = 0 AND conv LIKE ?", p+"-%")
				if err != nil {
					return err
				}
				for r.Next() {
					var x row
					if err := r.Scan(&x.key, &x.conv, &x.kind, &x.status, &x.owner, &x.id); err != nil {
						r.Close()
						return err
					}
					rows = append(rows, x)
				}
				r.Close()
			}
			r, err := db.QueryContext(ctx, "SELECT k, count(*) FROM orders GROUP BY k")
			if err != nil {
				return err
			}
			defer r.Close()
			for r.Next() {
				var k string
				var c int
				if err := r.Scan(&k, &c); err != nil {
					return err
				}
				orders[k] = c
			}
			return r.Err()
		}()
		cancel()
		open := 0
		for _, x := range rows {
			if x.status == "pending" || x.status == "unknown" {
				open++
			}
		}
		if err == nil && open == 0 || time.Now().After(end) {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		return err
	}
	stats, err := targetStats(*target)
	if err != nil {
		return err
	}
	var problems []string
	c := map[string]int{"double first arrivals": 0, "pending": 0, "unknown": 0}
	for _, x := range rows {
		c["calls"]++
		c[x.kind+" "+x.status]++
		t := stats[`"`+x.key+`"`]
		if t == nil {
			t = &keyStats{}
		}
		switch {
		case x.kind == "local":
			c["local effects"] += orders[x.key]
			if orders[x.key] > 1 || (x.status == "done") != (orders[x.key] == 1) {
				problems = append(problems, fmt.Sprintf("%s: local call %s with %d orders", x.conv, x.status, orders[x.key]))
			}
		default:
			c["external effects"] += t.Arrivals
			if t.Firsts > 1 {
				c["double first arrivals"]++ // keys that idem sent twice as a first send
				problems = append(problems, fmt.Sprintf("%s: taken twice as a first send at the target", x.conv))
			}
			if t.Arrivals > 1 {
				problems = append(problems, fmt.Sprintf("%s: %d arrivals at the target (%d sent as first; owners %s)", x.conv, t.Arrivals, t.Firsts, t.Owners))
			}
			if x.status == "done" && (t.Arrivals != 1 || !x.id.Valid || x.id.Int64 != t.Shipment) {
				problems = append(problems, fmt.Sprintf("%s: done with id %v, but the target has %d arrivals, shipment %d", x.conv, x.id, t.Arrivals, t.Shipment))
			}
		}
		if x.status == "pending" || x.status == "unknown" {
			c[x.status]++
			problems = append(problems, fmt.Sprintf("%s: still %s (owner %s) after %v", x.conv, x.status, x.owner, *wait))
		}
	}
	b, _ := json.Marshal(c)
	fmt.Printf("check: %s\n", b)
	for _, p := range problems {
		fmt.Println("  " + p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems", len(problems))
	}
	return nil
}
