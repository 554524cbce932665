// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// callFor: key i of prefix p.  Even keys are local (order), odd external
// (ship).
func callFor(p string, i int) Call {
	tool := "order"
	if i%2 == 1 {
		tool = "ship"
	}
	return Call{Who: "agent", Conv: fmt.Sprintf("%s-%d", p, i), Tool: tool,
		Args: json.RawMessage(fmt.Sprintf(`{"sku":"A%04d","qty":%d}`, i, 1+i%3))}
}

// Summary of a client's run: every attempt ends, by an answer or by the
// client's own deadline (a stall: counted, never hidden).
type Summary struct {
	Client      string         `json:"client"`
	Keys        int            `json:"keys"`
	Done        int            `json:"done"`
	Attempts    int            `json:"attempts"`
	Outcomes    map[string]int `json:"outcomes"`
	Stalls      int            `json:"stalls"`
	OwnReplays  int            `json:"own_replays"`
	MaxAttemptS float64        `json:"max_attempt_s"`
	Successes   [][2]float64   `json:"successes"` // [start, end] unix seconds of each done attempt
	NotDone     []string       `json:"not_done,omitempty"`
}

func cmdLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	nodes := fs.String("nodes", "", "base URLs of node services")
	keys := fs.Int("keys", 20, "keys")
	prefix := fs.String("prefix", "k", "conv prefix")
	workers := fs.Int("workers", 2, "concurrent workers, each over every key (duplicates)")
	deadline := fs.Int("deadline", 3000, "each attempt's deadline, ms (the service gets it, the client adds 1 s)")
	budget := fs.Duration("budget", 60*time.Second, "give up on the keys left after this")
	name := fs.String("name", "client", "this client's name")
	out := fs.String("out", "", "write the summary here (JSON)")
	crash := fs.String("crash-at", "", "worker 0 sends X-Crash-At to the first node until it dies")
	pace := fs.Int("pace", 0, "each worker waits this many ms between keys (to span a fault)")
	fs.Parse(args)
	urls := splitList(*nodes)
	if len(urls) == 0 {
		return fmt.Errorf("-nodes is required")
	}
	sum := Summary{Client: *name, Keys: *keys, Outcomes: map[string]int{}}
	var mu sync.Mutex
	done := map[int]bool{}
	end := time.Now().Add(*budget)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	// The kill point is sent once: with worker 0's first attempt at the
	// first key whose tool reaches it (local points: order; ext: ship).
	crashTool := "order"
	if strings.HasPrefix(*crash, "ext-") {
		crashTool = "ship"
	}
	crashDone := false
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(time.Now().UnixNano() + int64(w)))
			if w > 0 && *crash != "" {
				time.Sleep(300 * time.Millisecond) // worker 0 claims first
			}
			order := r.Perm(*keys)
			for _, i := range order {
				call := callFor(*prefix, i)
				body, _ := json.Marshal(call)
				for n := 0; time.Now().Before(end); n++ {
					url := urls[(w+n)%len(urls)]
					t0 := time.Now()
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*deadline)*time.Millisecond+time.Second)
					req, _ := http.NewRequestWithContext(ctx, "POST", url+"/call", bytes.NewReader(body))
					req.Header.Set("X-Deadline-Ms", fmt.Sprint(*deadline))
					mu.Lock()
					armed := *crash != "" && w == 0 && !crashDone && call.Tool == crashTool && url == urls[0]
					mu.Unlock()
					if armed {
						req.Header.Set("X-Crash-At", *crash)
					}
					resp, err := hc.Do(req)
					if armed && err != nil {
						mu.Lock()
						crashDone = true // the node died at the point
						mu.Unlock()
					}
					var o Outcome
					status := "error"
					if err == nil {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if json.Unmarshal(b, &o) == nil {
							status = o.Status
						}
					} else if ctx.Err() != nil {
						status = "stall"
					}
					cancel()
					dt := time.Since(t0).Seconds()
					mu.Lock()
					sum.Attempts++
					sum.Outcomes[status]++
					if status == "stall" {
						sum.Stalls++
					}
					if o.Own {
						sum.OwnReplays++
					}
					if dt > sum.MaxAttemptS {
						sum.MaxAttemptS = dt
					}
					ok := status == "won" || status == "replayed" || status == "fenced"
					if ok {
						done[i] = true
						sum.Successes = append(sum.Successes, [2]float64{float64(t0.UnixNano()) / 1e9, float64(time.Now().UnixNano()) / 1e9})
					}
					mu.Unlock()
					if ok {
						break
					}
					time.Sleep(time.Duration(100+r.Intn(200)) * time.Millisecond)
				}
				if *pace > 0 {
					time.Sleep(time.Duration(*pace) * time.Millisecond)
				}
			}
		}(w)
	}
	wg.Wait()
	sum.Done = len(done)
	for i := 0; i < *keys; i++ {
		if !done[i] {
			sum.NotDone = append(sum.NotDone, callFor(*prefix, i).Conv)
		}
	}
	sort.Slice(sum.Successes, func(i, j int) bool { return sum.Successes[i][1] < sum.Successes[j][1] })
	b, _ := json.Marshal(sum)
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d/%d keys done, %d attempts %v, %d stalls, %d own lost commits replayed, longest attempt %.1f s\n",
		*name, sum.Done, sum.Keys, sum.Attempts, fmtCounts(sum.Outcomes), sum.Stalls, sum.OwnReplays, sum.MaxAttemptS)
	if sum.Done != sum.Keys {
		return fmt.Errorf("%d keys not done: %s", len(sum.NotDone), strings.Join(sum.NotDone, " "))
	}
	if sum.Stalls > 0 {
		return fmt.Errorf("%d attempts stalled: no answer within their deadline", sum.Stalls)
	}
	return nil
}

func fmtCounts(m map[string]int) string {
	var l []string
	for k, v := range m {
		l = append(l, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(l)
	return "(" + strings.Join(l, ", ") + ")"
}
