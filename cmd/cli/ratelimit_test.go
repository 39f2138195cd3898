package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
)

// A send the server refuses (429, or 503 with Retry-After) is a refusal
// before anything ran: it is sent again after the wait the server asked for,
// a bounded number of times, and only within the time left. Timings are only
// checked with generous bounds.

func rateLimitA2A(status int, retryAfter string, times int) func(*agentbuildertest.Options) {
	return func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: status, RetryAfter: retryAfter, Times: times}}
	}
}

func TestSendRetriesRateLimitedSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		times    int
		refusals int
		stream   bool
	}{
		{"429 with Retry-After: 1, twice", 429, 2, 2, false},
		{"503 with Retry-After: 1, once", 503, 1, 1, false},
		{"429 on message/stream (9.6)", 429, 2, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				rateLimitA2A(tc.status, "1", tc.times)(o)
				if tc.stream {
					o.Version, o.Streaming = agentbuildertest.V96, on()
				}
			})
			h := newHarness(t, sim)
			if tc.stream {
				// A stream is only sent on the blocking path, which 9.6
				// takes when non_blocking is false.
				h.env["A2A_COURIER_NON_BLOCKING"] = "false"
			}
			start := time.Now()
			r := h.run("send", "elastic-ai-agent", "how busy are you?", "--json")
			r.expect(t, ExitOK)
			if took := time.Since(start); took < time.Duration(tc.times)*900*time.Millisecond {
				t.Errorf("took %s: the Retry-After of 1s was not waited out", took)
			}
			d := decodeTask(t, r.stdout)
			if d.State != "completed" || d.Reply == nil || *d.Reply == "" {
				t.Fatalf("%+v", d)
			}
			if n := sim.Runs(d.ContextID); n != 1 {
				t.Errorf("the simulator counted %d runs, want exactly 1", n)
			}
			rec := loadRecord(t, h, d.ContextID)
			if tc.stream && rec.Via != "stream" {
				t.Errorf("via %q, want stream", rec.Via)
			}
			if rec.State != store.Completed || rec.Refusals != tc.refusals || rec.Message != "" || rec.RetryAt != nil || rec.Workers != 1 {
				t.Errorf("record: state %s, refusals %d (want %d), message %q, retry_at %v, workers %d",
					rec.State, rec.Refusals, tc.refusals, rec.Message, rec.RetryAt, rec.Workers)
			}
		})
	}
}

func TestSendRateLimitedBeyondTimeout(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "7", 0))
	h := newHarness(t, sim)

	start := time.Now()
	r := h.run("send", "elastic-ai-agent", "hello", "--timeout", "3s")
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("took %s: a Retry-After longer than --timeout must end at once", took)
	}
	checkOneLineError(t, r, ExitBusy, "HTTP 429")
	if !strings.Contains(r.stderr, "the server asked to retry after 7s") {
		t.Errorf("the hint does not say how long to wait:\n%s", r.stderr)
	}

	r = h.run("send", "elastic-ai-agent", "hello again", "--timeout", "3s", "--json")
	r.expect(t, ExitBusy)
	d := decodeTask(t, r.stdout)
	if d.State != "rejected" || d.Error == nil || d.Error.Code != "busy" || d.Error.RetryAfterSeconds != 7 ||
		!strings.Contains(d.Error.Hint, "the server asked to retry after 7s") || d.Resume != "" {
		t.Fatalf("%s", r.stdout)
	}
	if !strings.Contains(d.Reason, "the server asked to retry after 7s, longer than the ") || !strings.HasSuffix(d.Reason, " left of --timeout") {
		t.Errorf("reason %q does not say why it was not sent again", d.Reason)
	}
	if n := sim.Runs(d.ContextID); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
	if rec := loadRecord(t, h, d.ContextID); rec.Refusals != 1 || rec.Error == nil || rec.Error.RetryAfterSeconds != 7 {
		t.Errorf("record: refusals %d, error %+v", rec.Refusals, rec.Error)
	}
}

// A Retry-After shorter than --timeout that would leave less than a second
// of it to send again and read the reply: not sent again, and the message
// says so, with the wait, the time left and the flag that sets it.
func TestSendRateLimitedRetryAfterLeavesTooLittle(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "2", 0))
	h := newHarness(t, sim)
	const why = "the server asked to retry after 2s, which would leave less than 1s of --timeout ("
	r := h.run("send", "elastic-ai-agent", "hello", "--timeout", "3s")
	checkOneLineError(t, r, ExitBusy, why)
	if strings.Contains(r.stderr, "more than the time left") || !strings.Contains(r.stderr, "s left)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	r = h.run("send", "elastic-ai-agent", "hello again", "--timeout", "3s", "--json")
	r.expect(t, ExitBusy)
	d := decodeTask(t, r.stdout)
	if d.State != "rejected" || d.Error == nil || !strings.Contains(d.Reason, why) || !strings.Contains(d.Error.Message, why) ||
		strings.Contains(d.Error.Hint, "time left") || !strings.Contains(d.Error.Hint, "the server asked to retry after 2s") {
		t.Fatalf("%s", r.stdout)
	}
	if rec := loadRecord(t, h, d.ContextID); rec.Refusals != 1 || sim.Runs(d.ContextID) != 0 {
		t.Errorf("refusals %d, runs %d", rec.Refusals, sim.Runs(d.ContextID))
	}
}

func TestSendRateLimitedRetriesAreBounded(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "1", 0))
	h := newHarness(t, sim)
	r := h.run("send", "elastic-ai-agent", "hello", "--json")
	r.expect(t, ExitBusy)
	d := decodeTask(t, r.stdout)
	if d.State != "rejected" || d.Error == nil || d.Error.RetryAfterSeconds != 1 ||
		!strings.Contains(d.Error.Hint, "4 times in a row") || !strings.Contains(d.Error.Hint, "the server asked to retry after 1s") {
		t.Fatalf("%s", r.stdout)
	}
	if rec := loadRecord(t, h, d.ContextID); rec.Refusals != courier.MaxSendRetries+1 || sim.Runs(d.ContextID) != 0 {
		t.Errorf("refusals %d, runs %d", rec.Refusals, sim.Runs(d.ContextID))
	}
}

// A discover under the same fault says the wait in JSON too.
func TestRateLimitedReadSaysTheWaitInJSON(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteAgents, Status: 429, RetryAfter: "30"}}
	})
	h := newHarness(t, sim)
	r := h.run("discover", "--json")
	r.expect(t, ExitBusy)
	var doc struct {
		Error errorDoc `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Error.Code != "busy" || doc.Error.RetryAfterSeconds != 30 || doc.Error.Hint != "the server asked to retry after 30s" {
		t.Fatalf("%+v", doc.Error)
	}
}

// The worker sends as the foreground does.
func TestSendAsyncRetriesRateLimitedSend(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "1", 2))
	h := newHarness(t, sim)
	r := h.run("send-async", "elastic-ai-agent", "in the background", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	r = h.run("result", ctxID, "--wait", "--timeout", "40s", "--json")
	r.expect(t, ExitOK)
	if d := decodeTask(t, r.stdout); d.State != "completed" {
		t.Fatalf("%+v", d)
	}
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("%d runs, want exactly 1", n)
	}
	if rec := loadRecord(t, h, ctxID); rec.Refusals != 2 {
		t.Errorf("refusals %d, want 2", rec.Refusals)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

// Stopped (its --timeout, a SIGTERM: anything but Ctrl-C) while waiting out
// a refusal, send leaves the task queued, its text back in the record and
// the server's time in retry_at: nothing is on the server, so a worker
// sends it, once, when the server said. Ctrl-C drops it: nothing ran.
func TestSendInterruptedWhileRateLimited(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "3", 1))
	h := newHarness(t, sim)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(time.Second, func() { cancel(&signalError{syscall.SIGTERM}) })
	r := h.runCtx(ctx, "send", "elastic-ai-agent", "interrupt me", "--json")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	if d.State != "queued" || d.LastError == nil || d.LastError.Code != "busy" || d.LastError.RetryAfterSeconds != 3 ||
		d.Resume != "a2a-courier result "+d.ContextID+" --wait --json" {
		t.Fatalf("%s", r.stdout)
	}
	r = h.run("result", d.ContextID, "--wait", "--timeout", "40s", "--json")
	r.expect(t, ExitOK)
	if got := decodeTask(t, r.stdout); got.State != "completed" || !strings.Contains(*got.Reply, "interrupt me") {
		t.Fatalf("%s", r.stdout)
	}
	if n := sim.Runs(d.ContextID); n != 1 {
		t.Errorf("%d runs, want exactly 1", n)
	}
	rec := loadRecord(t, h, d.ContextID)
	if rec.Refusals != 1 || rec.Message != "" || rec.RetryAt != nil {
		t.Errorf("record: refusals %d, message %q, retry_at %v", rec.Refusals, rec.Message, rec.RetryAt)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

// A cancel that comes while the worker waits out a refusal ends the task
// canceled, with nothing sent.
func TestCancelWhileRateLimited(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "30", 1))
	h := newHarness(t, sim)
	r := h.run("send-async", "elastic-ai-agent", "cancel me")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	waitUntil(t, "the refusal to be recorded", 20*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.State == store.Queued && rec.Refusals == 1 && rec.RetryAt != nil && rec.Message == "cancel me"
	})
	r = h.run("cancel", ctxID, "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.State != "canceled" || !strings.Contains(d.Reason, "before it was sent: nothing ran") {
		t.Fatalf("%s", r.stdout)
	}
	if n := sim.Runs(ctxID); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

// rateLimitProxy stands in front of a real A2A server: it refuses the first
// n message/send requests with 429 and Retry-After: 1, forwards the rest and
// everything else, and points the card at itself.
type rateLimitProxy struct {
	*httptest.Server
	mu                  sync.Mutex
	refused, forwarded  int
	refuseFirst         int
	origin, proxyOrigin string
}

func newRateLimitProxy(t *testing.T, origin string, n int) *rateLimitProxy {
	t.Helper()
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	p := &rateLimitProxy{refuseFirst: n, origin: origin}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, ".json") {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(p.origin), []byte(p.proxyOrigin))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var rpc struct{ Method string }
			json.Unmarshal(body, &rpc)
			if rpc.Method == "message/send" || rpc.Method == "message/stream" || rpc.Method == "SendMessage" {
				p.mu.Lock()
				refuse := p.refused < p.refuseFirst
				if refuse {
					p.refused++
				} else {
					p.forwarded++
				}
				p.mu.Unlock()
				if refuse {
					w.Header().Set("Retry-After", "1")
					http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
					return
				}
			}
		}
		rp.ServeHTTP(w, r)
	}))
	p.proxyOrigin = p.Server.URL
	t.Cleanup(p.Server.Close)
	return p
}

func (p *rateLimitProxy) counts() (refused, forwarded int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused, p.forwarded
}

// A generic A2A agent (the a2a-go server) behind a rate limit: the same
// retries, one message reaches the agent.
func TestSendRetriesRateLimitedGenericAgent(t *testing.T) {
	t.Parallel()
	srv := interoptest.StartGo(t)
	proxy := newRateLimitProxy(t, srv.Origin, 2)
	h := newHarness(t, nil)
	r := h.run("send", "--url", proxy.URL+"/"+interoptest.AgentEcho, "hello through the limit", "--no-stream", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.State != "completed" || d.Reply == nil || !strings.Contains(*d.Reply, "hello through the limit") {
		t.Fatalf("%s", r.stdout)
	}
	if refused, forwarded := proxy.counts(); refused != 2 || forwarded != 1 {
		t.Errorf("refused %d, forwarded %d: want 2 refusals and exactly one message reaching the agent", refused, forwarded)
	}
	if rec := loadRecord(t, h, d.ContextID); rec.Refusals != 2 || rec.State != store.Completed {
		t.Errorf("record: state %s, refusals %d", rec.State, rec.Refusals)
	}
}

// Ctrl-C while a refused send waits for its next try: the user stopped it
// and nothing is on the server, so the task ends canceled, nothing ran,
// and no worker sends it later.
func TestSendCtrlCWhileRateLimited(t *testing.T) {
	t.Parallel()
	sim := startSim(t, rateLimitA2A(429, "3", 1))
	h := newHarness(t, sim)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		// Ctrl-C once the refusal is recorded: during the wait.
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		for ctx.Err() == nil {
			if recs, _ := st.List(); len(recs) == 1 && recs[0].State == store.Queued && recs[0].Refusals == 1 {
				cancel(&signalError{os.Interrupt})
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	r := h.runCtx(ctx, "send", "elastic-ai-agent", "never mind", "--json")
	r.expect(t, ExitTaskFailed)
	d := decodeTask(t, r.stdout)
	if d.State != "canceled" || !strings.Contains(d.Reason, "nothing ran") || d.Resume != "" {
		t.Fatalf("%s", r.stdout)
	}
	if strings.Contains(r.stdout, "canceled on request") || !strings.Contains(r.stdout, "nothing was sent") {
		t.Errorf("a Ctrl-C is not a cancel request, and its hint says nothing ran: %s", r.stdout)
	}
	rec := loadRecord(t, h, d.ContextID)
	if rec.Message != "" || rec.RetryAt != nil || rec.SentAt != nil {
		t.Errorf("record: message %q, retry_at %v, sent_at %v", rec.Message, rec.RetryAt, rec.SentAt)
	}
	if n := sim.Runs(d.ContextID); n != 0 {
		t.Errorf("%d runs, want 0", n)
	}
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if st.WorkerRunning(rec.Identity) {
		t.Error("a worker was started for a dropped task")
	}
}
