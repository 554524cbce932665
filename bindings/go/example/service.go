// SPDX-License-Identifier: MIT

package main

// The service's two tools, over the idem library (bindings/go): the
// protocol (claims with owner tokens, deadlines on every statement,
// retries, what is owed after the deadline, leases, take-over, reconcile)
// is the library's; this file is the tools' bodies, the kill points of
// the tests (idem.OnStep), and the answers over HTTP.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// Call is one tool call as the model sends it.
type Call struct {
	Who  string          `json:"who"`
	Conv string          `json:"conv"`
	Tool string          `json:"tool"` // "order" (local) or "ship" (external)
	Args json.RawMessage `json:"args"`
}

// Outcome is what the service answers.
type Outcome struct {
	Status   string          `json:"status"` // won, replayed, pending, unknown, fenced, retry, error
	Reply    json.RawMessage `json:"reply,omitempty"`
	Own      bool            `json:"own,omitempty"` // our own lost COMMIT, found done
	Sent     bool            `json:"sent,omitempty"`
	Attempts int             `json:"attempts"`
	Error    string          `json:"error,omitempty"`
}

// Result is what both tools return: the row or the target's shipment.
type Result struct {
	Order    int64  `json:"order,omitempty"`
	Shipment int64  `json:"shipment,omitempty"`
	By       string `json:"by"`
}

// IdemID: the call's id column (check compares it with the target's).
func (r Result) IdemID() any {
	if r.Shipment != 0 {
		return r.Shipment
	}
	return r.Order
}

// Service runs tool calls through idem on db.
type Service struct {
	Calls  *idem.Calls
	Target string // the outside target's base URL (ship; reconcile asks it)
	Send   string // where requests go, if not Target (a proxy in front of it)
	Faults bool   // honour X-Crash-At (the tests' kill points)
	Log    func(format string, a ...interface{})

	order *idem.LocalTool[json.RawMessage, Result]
	ship  *idem.ExternalTool[json.RawMessage, Result]
	sends atomic.Int64
}

type crashKey struct{}

// NewService opens the claim table on db (owner: the node's name).
func NewService(ctx context.Context, db *sql.DB, node, target string, faults bool, log func(string, ...interface{})) (*Service, error) {
	s := &Service{Target: target, Faults: faults, Log: log}
	calls, err := idem.Open(ctx, db, idem.Owner(node), idem.AttemptTimeout(2*time.Second),
		idem.TableOption("stale_after", "10 seconds"),
		idem.OnStep(func(ctx context.Context, step idem.Step) { s.crash(ctx, string(step)) }))
	if err != nil {
		return nil, err
	}
	s.Calls = calls
	s.order = idem.Local(calls, "order", func(ctx context.Context, tx *sql.Tx, _ json.RawMessage) (Result, error) {
		r, err := tx.ExecContext(ctx, "INSERT INTO orders(k, owner) VALUES(?, ?)", idem.CallKey(ctx), idem.CallOwner(ctx))
		if err != nil {
			return Result{}, err
		}
		id, err := r.LastInsertId()
		return Result{Order: id, By: idem.CallOwner(ctx)}, err
	})
	s.ship = idem.External(calls, "ship", s.send)
	return s, nil
}

// crash: SIGKILL this process at a test's kill point.
func (s *Service) crash(ctx context.Context, point string) {
	if want, _ := ctx.Value(crashKey{}).(string); s.Faults && want == point {
		s.Log("crash point %s: SIGKILL", point)
		syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// Run runs call within ctx (crashAt: a test's kill point), and answers
// by ctx's deadline whatever the driver does (go-dqlite's connect loop
// may overrun a deadline): past it, the call goes on in the background
// and the answer is "retry" (its outcome is not known: send the same call
// again, the claim decides).
func (s *Service) Run(ctx context.Context, call Call, crashAt string) Outcome {
	ch := make(chan Outcome, 1)
	go func() { ch <- s.run(ctx, call, crashAt) }()
	select {
	case o := <-ch:
		return o
	case <-ctx.Done():
		select {
		case o := <-ch:
			return o
		case <-time.After(50 * time.Millisecond):
		}
		return Outcome{Status: "retry", Attempts: 1,
			Error: "the deadline passed before the outcome was known: send the same call again, the claim decides"}
	}
}

func (s *Service) run(ctx context.Context, call Call, crashAt string) Outcome {
	ctx = context.WithValue(ctx, crashKey{}, crashAt)
	var o idem.Outcome[Result]
	var err error
	switch call.Tool {
	case "order":
		o, err = s.order.Call(ctx, call.Who, call.Conv, call.Args)
	default:
		o, err = s.ship.Call(ctx, call.Who, call.Conv, call.Args)
	}
	out := Outcome{Attempts: 1, Sent: o.Sends > 0}
	var ce *idem.CallError
	switch {
	case err == nil:
		out.Status = "won"
		if o.Replayed {
			out.Status = "replayed"
		}
		out.Reply, _ = json.Marshal(o.Result)
		return out
	case errors.Is(err, idem.ErrFenced):
		out.Status = "fenced"
	case errors.Is(err, idem.ErrInProgress):
		out.Status = "pending"
	case errors.Is(err, idem.ErrUnknown):
		out.Status = "unknown"
	case errors.Is(err, idem.ErrCommitUnknown), errors.Is(err, idem.ErrNotSent):
		out.Status = "retry" // not "not done": the claim of the next one decides
	default:
		out.Status = "error"
	}
	if errors.As(err, &ce) {
		out.Reply = ce.Reply
	}
	out.Error = err.Error()
	return out
}

// Pending is how many calls this process still owes a record or release.
func (s *Service) Pending() int { return s.Calls.Owed() }

// send is the external tool: a POST to the target with the call's
// Idempotency-Key.  A dial that failed sent nothing (NotSent); the
// target's "fenced" is Fenced; any other error leaves the call unknown.
func (s *Service) send(ctx context.Context, key string, args json.RawMessage) (Result, error) {
	base := s.Target
	if s.Send != "" {
		base = s.Send
	}
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/ship", bytes.NewReader(args))
	if err != nil {
		return Result{}, idem.NotSent(err)
	}
	req.Header.Set(idem.HeaderName, key)
	req.Header.Set("X-Idem-Send", "first")
	req.Header.Set("X-Idem-Owner", idem.CallOwner(ctx))
	client := sendClient
	if want, _ := ctx.Value(crashKey{}).(string); s.Faults && want == "ext-during-request" {
		// The kill point: the request's bytes are in the kernel (they
		// leave even as the process dies), its answer is not read.
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(dctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(dctx, network, addr)
				if err != nil {
					return nil, err
				}
				return killAfterWrite{c, func() { s.crash(ctx, want) }}, nil
			}}}
	}
	s.sends.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		return Result{}, idem.NotSentIfDialFailed(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Result{}, err
	}
	if resp.StatusCode == http.StatusConflict && bytes.HasPrefix(body, []byte("fenced")) {
		return Result{}, idem.Fenced(fmt.Errorf("target: %s", bytes.TrimSpace(body)))
	}
	if resp.StatusCode/100 != 2 {
		return Result{}, fmt.Errorf("target: %s: %s", resp.Status, body)
	}
	var r Result
	if err := json.Unmarshal(body, &r); err != nil {
		return Result{}, fmt.Errorf("target: %v", err)
	}
	r.By = idem.CallOwner(ctx)
	return r, nil
}

// killAfterWrite: a connection that runs kill once a write has returned.
type killAfterWrite struct {
	net.Conn
	kill func()
}

func (k killAfterWrite) Write(b []byte) (int, error) {
	n, err := k.Conn.Write(b)
	k.kill()
	return n, err
}

// One HTTP client, no connection reuse: a kept-alive connection to a
// target would hide whether a request left.
var sendClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// reconcile: the unknown calls are decided by the target: it has the key
// (arrived: done, with its shipment) or it fences the key (refuses it
// from now on, so that no request still on its way can take effect: not
// arrived, released).  "Not seen" alone is never "not sent".
func (s *Service) reconcile(ctx context.Context) error {
	got, err := s.Calls.ReconcileAll(ctx, 50, func(ctx context.Context, k idem.Call) (idem.Verdict, bool, error) {
		a, err := fence(ctx, s.Target, k.Key)
		if err != nil {
			return idem.Verdict{}, false, err
		}
		if a.Shipment > 0 {
			v, err := idem.Arrived(a.Shipment, Result{Shipment: a.Shipment, By: "reconciled"})
			return v.WithNote("reconciled: the target has it"), err == nil, err
		}
		return idem.NotArrived, true, nil
	})
	for k, v := range got {
		s.Log("reconciled %s %s", k, v)
	}
	return err
}
