// SPDX-License-Identifier: MIT

package main

// The outside target: an HTTP service that honours Idempotency-Key (the
// receiving side of doc/contract.md §13) and counts what arrives, per key:
// every arrival, the arrivals that the sender marked as its first send
// (X-Idem-Send: first), and the effects (one shipment per key).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"sync"
	"time"
)

type keyStats struct {
	Fenced   bool   `json:"fenced,omitempty"`  // refused for ever (see /fence)
	Refused  int    `json:"refused,omitempty"` // arrivals refused by the fence
	Arrivals int    `json:"arrivals"`
	Firsts   int    `json:"firsts"`
	Shipment int64  `json:"shipment"`
	Owners   string `json:"owners,omitempty"`
}

func cmdTarget(args []string) error {
	fs := flag.NewFlagSet("target", flag.ExitOnError)
	addr := fs.String("http", "", "listen address")
	delay := fs.Int("delay", 0, "answer after a random delay of up to MS milliseconds")
	noFence := fs.Bool("no-fence", false, "answer /fence without fencing (the reconciler that took 'not seen' for 'not sent'): to see the harness catch it")
	fs.Parse(args)
	srv := &http.Server{Addr: *addr, Handler: targetHandler(*delay, *noFence),
		// Longer than any hold of the test's queue on the wire: a held
		// request must arrive, not be cut by the target.
		ReadHeaderTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second}
	return srv.ListenAndServe()
}

// targetHandler is the target: it honours Idempotency-Key (one shipment
// per key), counts arrivals per key, and fences a key on /fence.
func targetHandler(delay int, noFence bool) http.Handler {
	var mu sync.Mutex
	keys := map[string]*keyStats{}
	var shipments int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ship", func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		io.Copy(io.Discard, r.Body)
		if key == "" {
			http.Error(w, "Idempotency-Key is required", http.StatusBadRequest)
			return
		}
		mu.Lock()
		k := keys[key]
		if k == nil {
			k = &keyStats{}
			keys[key] = k
		}
		k.Arrivals++
		if k.Fenced {
			k.Refused++
			mu.Unlock()
			http.Error(w, "fenced: this key is refused for ever", http.StatusConflict)
			return
		}
		if r.Header.Get("X-Idem-Send") == "first" {
			k.Firsts++
		}
		k.Owners += r.Header.Get("X-Idem-Owner") + " "
		replayed := k.Shipment != 0
		if !replayed {
			shipments++
			k.Shipment = shipments // the effect: once per key
		}
		id := k.Shipment
		mu.Unlock()
		if delay > 0 {
			time.Sleep(time.Duration(rand.Intn(delay+1)) * time.Millisecond)
		}
		if replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		fmt.Fprintf(w, "{\"shipment\":%d}\n", id)
	})
	// /fence?key=K: the reconciler's question.  A key with an effect
	// answers it (arrived); any other key is fenced: refused from now on,
	// so that a request still on its way never takes effect.
	mux.HandleFunc("/fence", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		key := `"` + r.URL.Query().Get("key") + `"`
		k := keys[key]
		if k == nil {
			k = &keyStats{}
			keys[key] = k
		}
		if k.Shipment == 0 && !noFence {
			k.Fenced = true
		}
		json.NewEncoder(w).Encode(k)
	})
	mux.HandleFunc("/arrivals", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		k := keys[`"`+r.URL.Query().Get("key")+`"`]
		if k == nil {
			k = &keyStats{}
		}
		json.NewEncoder(w).Encode(k)
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		json.NewEncoder(w).Encode(keys)
	})
	return mux
}

var getClient = &http.Client{Timeout: 3 * time.Second}

// fence asks the target for the key's effect, fencing the key when it
// has none.
func fence(ctx context.Context, target, key string) (keyStats, error) {
	var k keyStats
	req, err := http.NewRequestWithContext(ctx, "POST", target+"/fence?key="+url.QueryEscape(key), nil)
	if err != nil {
		return k, err
	}
	resp, err := getClient.Do(req)
	if err != nil {
		return k, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&k)
	return k, err
}

func targetStats(target string) (map[string]*keyStats, error) {
	resp, err := getClient.Get(target + "/stats")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]*keyStats{}
	err = json.NewDecoder(resp.Body).Decode(&m)
	return m, err
}
