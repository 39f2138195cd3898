package courier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// sent makes m's record as a worker revived for it finds it: sent now,
// working, its text gone, with the task id taskID (Kibana's task path, a
// generic agent's task), so that its deadline is m.MaxWait from now.
func sent(t *testing.T, c *Courier, m Message, taskID string) *store.Record {
	t.Helper()
	rec := queued(t, c, m)
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	for _, s := range []store.State{store.Sending, store.Working} {
		rec, err = h.Update(func(x *store.Record) error {
			now := c.now().UTC()
			x.State, x.Message, x.TaskID = s, "", taskID
			if x.SentAt == nil {
				x.SentAt = &now
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

// recoverAndCount runs a worker's recovery of rec and returns its record
// and how many reads reached the server (reads()) from its deadline on.
func recoverAndCount(t *testing.T, c *Courier, rec *store.Record, reads func() int) (*store.Record, int) {
	t.Helper()
	var atDeadline atomic.Int64
	atDeadline.Store(-1)
	snap := time.AfterFunc(time.Until(rec.Deadline()), func() { atDeadline.Store(int64(reads())) })
	defer snap.Stop()
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	before := reads()
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	after := reads()
	if at := atDeadline.Load(); at >= 0 {
		return got, after - int(at)
	}
	// Revived after its deadline: every read is past it.
	return got, after - before
}

// A worker revived a little before a task's deadline, with a poll interval
// far longer than what is left (1 h, 2.5 s left): it reads on its ramp
// (at once, then a second later) and at the deadline the task ends
// expired, with no read issued from the deadline on, on Kibana's blocking
// path and its task path (tasks/get). It used to move the deadline to now
// + the poll interval (at most 30 s) + 5 s, reading on past it, 35 s in
// all. The reads are counted where the engine issues them (its HTTP
// client), by the engine's clock: a read issued before the deadline that
// a loaded machine delivers after it is not a late read. Should the
// machine be so slow that the recovery itself starts after the deadline,
// the task gets its one look (TestTaskRevivedAfterItsDeadlineGetsOneLook).
func TestRevivedWorkerEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"blocking", "task"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
			c := newEngine(t)
			m := message(sim, "slow", "late?")
			m.PollInterval, m.MaxWait = time.Hour, 2500*time.Millisecond
			taskID := ""
			if path == "task" {
				m.Target.NonBlocking = true
				taskID = "t-" + path // tasks/get answers: not found, then the conversation is read
			}
			rec := sent(t, c, m, taskID)
			early, late := countIssued(c, rec.Deadline())
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			begun := c.now()
			got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
			if err != nil {
				t.Fatal(err)
			}
			want := "no read from the deadline on"
			ok := late.Load() == 0 && early.Load() >= 1
			if !begun.Before(rec.Deadline()) {
				want, ok = "one look", late.Load() == 1
			}
			if got.State != store.Expired || !ok || sim.TotalRuns() != 0 {
				t.Fatalf("%s, %d reads before the deadline and %d from it on (want %s), %d runs", got.State, early.Load(), late.Load(), want, sim.TotalRuns())
			}
		})
	}
}

// countIssued counts the requests c's HTTP clients issue before deadline
// and from it on, by c's clock.
func countIssued(c *Courier, deadline time.Time) (early, late *atomic.Int32) {
	early, late = new(atomic.Int32), new(atomic.Int32)
	base := c.HTTPClient
	c.HTTPClient = func(tg store.Target) (*http.Client, error) {
		hc, err := base(tg)
		if err != nil {
			return nil, err
		}
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		cp := *hc
		cp.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
			if c.now().Before(deadline) {
				early.Add(1)
			} else {
				late.Add(1)
			}
			return next.RoundTrip(r)
		})
		return &cp, nil
	}
	return early, late
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A task revived after its deadline gets one look, on Kibana's blocking
// path and at a generic agent's task: one read, then expired. It used to
// get 35 s of reads on the ramp (six).
func TestTaskRevivedAfterItsDeadlineGetsOneLook(t *testing.T) {
	t.Parallel()
	t.Run("kibana", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, nil)
		c := newEngine(t)
		m := message(sim, "slow", "too late")
		m.PollInterval, m.MaxWait = time.Hour, time.Millisecond
		rec := sent(t, c, m, "")
		got, looks := recoverAndCount(t, c, rec, func() int { return sim.Requests(agentbuildertest.RouteConversation) })
		if got.State != store.Expired || looks != 1 {
			t.Fatalf("%s after %d reads", got.State, looks)
		}
	})
	t.Run("a2a", func(t *testing.T) {
		t.Parallel()
		var gets atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if gjson.GetBytes(body, "method").String() != "tasks/get" {
				http.Error(w, "only tasks/get here", http.StatusBadRequest)
				return
			}
			gets.Add(1)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"working"}}}`,
				gjson.GetBytes(body, "id").Raw, gjson.GetBytes(body, "params.contextId").String())
		}))
		t.Cleanup(srv.Close)
		c := newEngine(t)
		target := store.Target{Kind: store.TargetA2A, URL: srv.URL, Endpoint: srv.URL, Dialect: string(client.V03), Binding: "jsonrpc"}
		rec := sent(t, c, Message{Agent: "late", Target: target, Key: testKey, Text: "too late", PollInterval: time.Hour, MaxWait: time.Millisecond}, "t-1")
		got, looks := recoverAndCount(t, c, rec, func() int { return int(gets.Load()) })
		if got.State != store.Expired || looks != 1 {
			t.Fatalf("%s after %d reads", got.State, looks)
		}
	})
}

// A send whose maximum wait (1.5 s) is far shorter than its poll interval
// (1 h) and its run (1 min) ends expired at the deadline, with no read of
// the conversation after it (the blocking send's connection open all the
// while), sent once.
func TestSendEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "crawl", Name: "Crawl", Description: "Takes a minute.", RunTime: time.Minute})
	})
	c := newEngine(t)
	m := message(sim, "crawl", "in time?")
	m.PollInterval, m.MaxWait = time.Hour, 1500*time.Millisecond
	rec := queued(t, c, m)
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	var atDeadline atomic.Int64
	atDeadline.Store(-1)
	snap := time.AfterFunc(m.MaxWait+100*time.Millisecond, func() { atDeadline.Store(int64(sim.Requests(agentbuildertest.RouteConversation))) })
	defer snap.Stop()
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	if err != nil || got.State != store.Expired || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("%v %s, %d runs", err, got.State, sim.Runs(rec.ContextID))
	}
	for atDeadline.Load() < 0 {
		time.Sleep(10 * time.Millisecond) // the snapshot's timer, 100 ms past the deadline
	}
	if late := sim.Requests(agentbuildertest.RouteConversation) - int(atDeadline.Load()); late != 0 {
		t.Fatalf("%d reads after the deadline", late)
	}
}
