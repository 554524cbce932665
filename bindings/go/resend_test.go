// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

// honouring is a target that honours the key: it acts on a key once and
// answers a repeat with its first answer.  lose > 0: the next answers are
// lost (the effect happened, the sender sees a timeout).
type honouring struct {
	mu      sync.Mutex
	effects map[string]int
	arrived map[string]int
	lose    int
}

func newHonouring() *honouring {
	return &honouring{effects: map[string]int{}, arrived: map[string]int{}}
}

func (h *honouring) charge(key string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arrived[key]++
	if h.effects[key] == 0 {
		h.effects[key] = 1
	}
	if h.lose > 0 {
		h.lose--
		return "", errors.New("read: i/o timeout (the answer was lost)")
	}
	return "ch-" + key[1:9], nil
}

func (h *honouring) effectsOf(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.effects[key]
}

// A lost answer: the call is unknown, and, its target honouring the key,
// the same call resends it with the same key after the extension's
// backoff: done, sends 2, one effect.  Undeclared, unknown holds.
func TestResendLostAnswer(t *testing.T) {
	_, calls := open(t, idem.TableOption("resend_after", "0.2 seconds"))
	target := newHonouring()
	var keys []string
	charge := idem.External(calls, "charge", func(ctx context.Context, key string, cents int) (string, error) {
		keys = append(keys, key)
		return target.charge(key)
	})
	charge.HonoursKey = true
	target.lose = 1
	out, err := charge.Call(ctx5(t), "dan", "c-1", 700)
	if err != nil || out.Sends != 2 || out.Result == "" || len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("resent: %+v %v (keys %q)", out, err, keys)
	}
	if n := target.effectsOf(keys[0]); n != 1 {
		t.Fatalf("%d effects", n)
	}
	again, err := charge.Call(ctx5(t), "dan", "c-1", 700)
	if err != nil || !again.Replayed || again.Result != out.Result {
		t.Fatalf("replay: %+v %v", again, err)
	}
	plain := idem.External(calls, "plain", func(ctx context.Context, key string, cents int) (string, error) {
		return target.charge(key)
	})
	target.lose = 1
	if _, err := plain.Call(ctx5(t), "dan", "c-2", 700); !errors.Is(err, idem.ErrUnknown) {
		t.Fatalf("undeclared: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := plain.Call(ctx5(t), "dan", "c-2", 700); !errors.Is(err, idem.ErrUnknown) {
		t.Fatalf("undeclared, later: %v", err)
	}
}

// The sender dies between its send and its record (it never records, and
// its heartbeat stops): once its call is stale, a retry takes it over,
// resends with the same key and records; the old sender's late record
// lands nowhere.  One effect.
func TestResendAfterDeadSender(t *testing.T) {
	db, calls := open(t, idem.TableOption("stale_after", "1 second"),
		idem.TableOption("resend_after", "0.1 seconds"), idem.Heartbeat(-1), idem.Owner("dead"))
	target := newHonouring()
	stuck := make(chan struct{})
	dead := idem.External(calls, "charge", func(ctx context.Context, key string, cents int) (string, error) {
		r, err := target.charge(key)
		<-stuck // dies before recording
		return r, err
	})
	dead.HonoursKey = true
	var deadErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, deadErr = dead.Call(ctx, "dan", "c-1", 700)
	}()
	time.Sleep(100 * time.Millisecond)
	live := openCalls(t, db, idem.Owner("live"))
	retry := idem.External(live, "charge", func(ctx context.Context, key string, cents int) (string, error) {
		// While the call is pending under the new sender, the old one
		// wakes up and records: it must land nowhere.
		close(stuck)
		<-done
		return target.charge(key)
	})
	retry.HonoursKey = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := retry.Call(ctx, "dan", "c-1", 700)
	if err != nil || out.Sends != 2 {
		t.Fatalf("the retry after the sender died: %+v %v", out, err)
	}
	if !errors.Is(deadErr, idem.ErrLost) {
		t.Fatalf("the dead sender's late record: %v", deadErr)
	}
	k, err := live.Get(ctx, out.Key)
	if err != nil || k.Status != "done" || k.Owner == "" || k.Owner[:5] != "live/" {
		t.Fatalf("the call: %+v %v", k, err)
	}
	if n := target.effectsOf(`"` + out.Key + `"`); n != 1 {
		t.Fatalf("%d effects", n)
	}
}

// Six retries of one unknown call at once: one takes it (the others are
// refused, and replay what the call shows), one effect, and every retry
// ends done or in progress.
func TestResendConcurrentRetries(t *testing.T) {
	_, calls := open(t, idem.TableOption("resend_after", "1 second"))
	target := newHonouring()
	var sends atomic.Int32
	charge := idem.External(calls, "charge", func(ctx context.Context, key string, cents int) (string, error) {
		sends.Add(1)
		return target.charge(key)
	})
	charge.HonoursKey = true
	target.lose = 1
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	// The resend's backoff (1 s) does not fit in this call's deadline.
	if _, err := charge.Call(ctx, "dan", "c-1", 700); !errors.Is(err, idem.ErrUnknown) {
		t.Fatalf("first: %v", err)
	}
	var wg sync.WaitGroup
	results := make([]string, 6)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for {
				o, err := charge.Call(ctx, "dan", "c-1", 700)
				if err == nil {
					results[i] = fmt.Sprint(o.Result)
					return
				}
				if ctx.Err() != nil || !errors.Is(err, idem.ErrInProgress) && !errors.Is(err, idem.ErrUnknown) {
					results[i] = err.Error()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		if r != results[0] || r == "" || r[:3] != "ch-" {
			t.Fatalf("results: %q", results)
		}
	}
	if s := sends.Load(); s != 2 {
		t.Fatalf("%d sends, want 2 (the first, one resend)", s)
	}
	for k, n := range target.effects {
		if n != 1 {
			t.Fatalf("%s: %d effects", k, n)
		}
	}
}
