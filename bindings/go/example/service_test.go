// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The service on one node, against the test target: a local and an
// external call run once and replay; an external request that outlives
// its deadline leaves the call unknown (never "send again"); the
// reconciler asks the target, which has not seen the key and fences it;
// the call is released, and its retry is refused by the target for good
// (fenced), with no effect.  Every call ends within its deadline.
func TestServiceOnNode(t *testing.T) {
	register(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := openNode(ctx, t, "svc")
	target := httptest.NewServer(targetHandler(0, false))
	defer target.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Second) // a request held on the wire
	}))
	defer slow.Close()
	s, err := setup(ctx, db, "n1", target.URL, false, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Calls.Close(ctx)
	run := func(c Call, d time.Duration) Outcome {
		cctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		t0 := time.Now()
		o := s.Run(cctx, c, "")
		if el := time.Since(t0); el > d+200*time.Millisecond {
			t.Errorf("%s took %v, past its deadline %v", c.Conv, el, d)
		}
		return o
	}
	for _, tool := range []string{"order", "ship"} {
		c := Call{Who: "a", Conv: "c-" + tool, Tool: tool, Args: json.RawMessage(`{"sku":"A1"}`)}
		if o := run(c, 3*time.Second); o.Status != "won" {
			t.Fatalf("%s: %+v", tool, o)
		}
		if o := run(c, 3*time.Second); o.Status != "replayed" {
			t.Fatalf("%s again: %+v", tool, o)
		}
	}
	held := Call{Who: "a", Conv: "c-held", Tool: "ship", Args: json.RawMessage(`{"sku":"B"}`)}
	s.Send = slow.URL
	if o := run(held, 300*time.Millisecond); o.Status != "pending" {
		t.Fatalf("held past the deadline: %+v", o)
	}
	s.Send = ""
	var o Outcome
	for i := 0; i < 50; i++ { // the background records it unknown
		if o = run(held, time.Second); o.Status == "unknown" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if o.Status != "unknown" {
		t.Fatalf("a request that may have left: %+v", o)
	}
	if err := s.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if o := run(held, 3*time.Second); o.Status != "fenced" {
		t.Fatalf("after the fence: %+v", o)
	}
	stats := map[string]*keyStats{}
	resp, err := http.Get(target.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&stats)
	resp.Body.Close()
	shipped := 0
	for _, k := range stats {
		if k.Shipment != 0 {
			shipped++
		}
		if k.Firsts > 1 {
			t.Errorf("a key taken twice: %+v", k)
		}
	}
	if shipped != 1 {
		t.Fatalf("%d shipments, want 1 (c-ship): %v", shipped, stats)
	}
}
