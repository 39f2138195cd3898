package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

func TestRetryLater(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{Kind: KindBusy, StatusCode: 429}, true},
		{&Error{Kind: KindBusy, StatusCode: 429, RetryAfter: 7 * time.Second}, true},
		{&Error{Kind: KindBusy, StatusCode: 503, RetryAfter: time.Second}, true},
		// A bare 503 is often a proxy's page: reported, not sent again.
		{&Error{Kind: KindBusy, StatusCode: 503}, false},
		{&Error{Kind: KindServer, StatusCode: 502}, false},
		{&Error{Kind: KindConnection}, false},
		{nil, false},
	} {
		if got := RetryLater(tc.err); got != tc.want {
			t.Errorf("RetryLater(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if d := RetryAfterOf(&Error{Kind: KindBusy, StatusCode: 429, RetryAfter: 7 * time.Second}); d != 7*time.Second {
		t.Errorf("RetryAfterOf = %s", d)
	}
}

// A Retry-After that the caller's deadline would cut short is reported at
// once, not slept on until the deadline.
func TestRetryAfterBeyondDeadlineIsReported(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "5")
		kibanaErr(429, "slow down")(w, r)
	}))
	defer srv.Close()
	k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.MaxRetryWait = 20 * time.Second })
	k.t.sleep = SleepContext
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := k.ListAgents(ctx)
	if KindOf(err) != KindBusy || RetryAfterOf(err) != 5*time.Second {
		t.Fatalf("got %v", err)
	}
	if n.Load() != 1 || time.Since(start) > 1500*time.Millisecond {
		t.Errorf("%d attempts in %s: the wait did not fit the deadline and must not be slept on", n.Load(), time.Since(start))
	}
}

// requestLog records when requests matching a filter arrived.
type requestLog struct {
	mu    sync.Mutex
	times []time.Time
}

func (l *requestLog) add() {
	l.mu.Lock()
	l.times = append(l.times, time.Now())
	l.mu.Unlock()
}

func (l *requestLog) get() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.times...)
}

// Reading the conversation while the server rate-limits the reads: each
// refusal is waited out as long as the server asked (not the short poll
// interval), and none turns into a failure.
func TestDeliverWaitsOutRateLimitedReads(t *testing.T) {
	t.Parallel()
	sim := agentbuildertest.New(testSimOptions())
	t.Cleanup(sim.Close)
	var reads requestLog
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/a2a-c-429-read") {
			reads.add()
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.APIKey = testKey; c.Retries = -1 })

	// A run whose round is stored, then read back in recovery mode.
	if out := k.Deliver(context.Background(), deliverOpts("echo", "c-429-read", "read me")); out.State != StateCompleted {
		t.Fatalf("first delivery: %+v", out)
	}
	before := len(reads.get())
	sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{
		{Route: agentbuildertest.RouteConversation, Status: 429, RetryAfter: "1", Times: 2}}})
	o := deliverOpts("echo", "c-429-read", "read me")
	o.Send = false
	var log eventLog
	o.OnEvent = log.add
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := k.Deliver(ctx, o)
	if out.State != StateCompleted || out.Reply != "Echo: read me" {
		t.Fatalf("got %+v", out)
	}
	got := reads.get()[before:]
	if len(got) != 3 {
		t.Fatalf("%d reads, want 3 (two refused, one answered)", len(got))
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i].Sub(got[i-1]); gap < 900*time.Millisecond {
			t.Errorf("read %d came %s after a 429 with Retry-After: 1 (poll interval %s)", i+1, gap, o.PollInterval)
		}
	}
	if !log.has("poll_error") {
		t.Errorf("no poll_error event: %v", log.kinds)
	}
}

// The same for tasks/get on a real A2A server (a2a-go) behind a proxy that
// rate-limits the first reads of the task.
func TestA2ADeliverWaitsOutRateLimitedTaskReads(t *testing.T) {
	t.Parallel()
	gos := interoptest.StartGo(t)
	u, _ := url.Parse(gos.Origin)
	rp := httputil.NewSingleHostReverseProxy(u)
	var reads requestLog
	var refused atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var rpc struct{ Method string }
		json.Unmarshal(body, &rpc)
		if rpc.Method == "tasks/get" {
			reads.add()
			// The transport retries a read twice on its own: five refusals
			// reach Deliver's polling loop twice.
			if refused.Add(1) <= 5 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	c, err := NewA2A(A2AConfig{Endpoint: proxy.URL + "/" + interoptest.AgentSlow, Dialect: V03})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := OutgoingMessage{Text: "chunks=2 delay=50ms", MessageID: "m-429-task", ContextID: "ctx-429-task"}
	res, err := c.Send(ctx, msg, true)
	if err != nil || res.Kind != "task" || res.TaskID == "" {
		t.Fatalf("start a task: %+v %v", res, err)
	}
	out := c.Deliver(ctx, A2ADeliverOptions{Message: msg, TaskID: res.TaskID, PollInterval: 50 * time.Millisecond})
	// The whole answer: the artifact, then the final status message.
	if out.State != StateCompleted || out.Reply != "chunk 1/2\nchunk 2/2\ndone after 2 chunks" {
		t.Fatalf("got %+v", out)
	}
	got := reads.get()
	if len(got) < 6 {
		t.Fatalf("%d reads of the task, want at least 6", len(got))
	}
	for i := 1; i < 6; i++ {
		if gap := got[i].Sub(got[i-1]); gap < 900*time.Millisecond {
			t.Errorf("read %d came %s after a 429 with Retry-After: 1 (poll interval 50ms)", i+1, gap)
		}
	}
}
