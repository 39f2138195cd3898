package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/tidwall/gjson"
)

func deliverOpts(agent, ctxID, text string) DeliverOptions {
	return DeliverOptions{
		AgentID:      agent,
		Message:      OutgoingMessage{Text: text, MessageID: "m-" + ctxID, ContextID: ctxID, Blocking: true},
		Send:         true,
		FreshContext: true,
		PollInterval: 50 * time.Millisecond,
	}
}

type eventLog struct {
	mu    sync.Mutex
	kinds []string
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.kinds = append(l.kinds, string(e.Kind))
	l.mu.Unlock()
}

func (l *eventLog) has(kind string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.kinds {
		if k == kind {
			return true
		}
	}
	return false
}

func TestDeliver(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		sim       func(*agentbuildertest.Options)
		agent     string
		text      string
		wantState string
		wantReply string
		wantVia   string
		wantEvent string
	}{
		{name: "reply on the open connection", agent: "echo", text: "hello", wantState: StateCompleted, wantReply: "Echo: hello", wantVia: "reply"},
		{name: "proxy 502 while the run goes on", agent: "slow", text: "long one",
			sim:       func(o *agentbuildertest.Options) { o.Faults.ProxyCutAfter = 150 * time.Millisecond },
			wantState: StateCompleted, wantReply: "Echo: long one", wantVia: "conversation", wantEvent: "connection_lost"},
		{name: "idle close while the run goes on", agent: "slow", text: "long two",
			sim:       func(o *agentbuildertest.Options) { o.Faults.IdleCloseAfter = 150 * time.Millisecond },
			wantState: StateCompleted, wantReply: "Echo: long two", wantVia: "conversation", wantEvent: "connection_lost"},
		{name: "empty pre-created conversation during the run", agent: "slow", text: "long three",
			sim: func(o *agentbuildertest.Options) {
				o.PrecreateEmpty = true
				o.Faults.ProxyCutAfter = 100 * time.Millisecond
			},
			wantState: StateCompleted, wantReply: "Echo: long three", wantVia: "conversation"},
		{name: "agent failure", agent: "broken", text: "x", wantState: StateFailed, wantVia: "reply"},
		{name: "agent whose real reply starts with Error:", agent: "says-error", text: "x",
			wantState: StateCompleted, wantReply: "Error: this is the agent's real answer", wantVia: "conversation"},
		{name: "HITL prompt", agent: "asks", text: "clean up", wantState: StateInputRequired, wantReply: "Delete 3 indices? Confirm or cancel.", wantVia: "conversation"},
		{name: "HITL prompt without status field (9.3)", agent: "asks", text: "clean up",
			sim:       func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V93 },
			wantState: StateCompleted, wantVia: "reply"},
		{name: "unknown agent", agent: "nope", text: "x", wantState: StateRejected, wantVia: "reply"},
		{name: "rate limited send is not retried", agent: "echo", text: "x",
			sim: func(o *agentbuildertest.Options) {
				o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: 429, RetryAfter: "30"}}
			},
			wantState: StateRejected, wantVia: "reply"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, tt.sim)
			k := simClient(t, sim, testKey, "")
			ctxID := "ctx-deliver-" + string(rune('a'+i))
			var log eventLog
			o := deliverOpts(tt.agent, ctxID, tt.text)
			o.OnEvent = log.add
			if tt.wantVia == "reply" {
				// The answer on the open connection is what is tested: a
				// poll must not beat it on a loaded machine.
				o.PollInterval = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out := k.Deliver(ctx, o)
			if out.State != tt.wantState {
				t.Fatalf("state %q, want %q (%+v)", out.State, tt.wantState, out)
			}
			if tt.wantReply != "" && out.Reply != tt.wantReply {
				t.Errorf("reply %q, want %q", out.Reply, tt.wantReply)
			}
			if out.Via != tt.wantVia {
				t.Errorf("via %q, want %q", out.Via, tt.wantVia)
			}
			if tt.wantEvent != "" && !log.has(tt.wantEvent) {
				t.Errorf("no %q event in %v", tt.wantEvent, log.kinds)
			}
			if tt.agent != "nope" && tt.wantState != StateRejected {
				if n := sim.Runs(ctxID); n != 1 {
					t.Errorf("runs = %d, want 1", n)
				}
			}
			if tt.wantState == StateRejected && sim.Runs(ctxID) != 0 {
				t.Errorf("a rejected send ran %d times", sim.Runs(ctxID))
			}
		})
	}
}

func TestDeliverFailureReason(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	out := simClient(t, sim, testKey, "").Deliver(context.Background(), deliverOpts("broken", "c-fail", "x"))
	if out.State != StateFailed || out.Reason != "No complete response received from chat service" || KindOf(out.Err) != KindAgentFailed {
		t.Fatalf("got %+v", out)
	}
}

func TestDeliverRecoveryOnlyNeverSends(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	k := simClient(t, sim, testKey, "")
	// A first delivery, cut off by the caller while the run goes on.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	first := k.Deliver(ctx, deliverOpts("slow", "c-rec", "resume me"))
	cancel()
	if first.Final() {
		t.Fatalf("first delivery should not be final: %+v", first)
	}
	// Recovery: reading only.
	o := deliverOpts("slow", "c-rec", "")
	o.Send = false
	o.InputSHA256 = HashText("resume me")
	out := k.Deliver(context.Background(), o)
	if out.State != StateCompleted || out.Reply != "Echo: resume me" || out.Via != "conversation" {
		t.Fatalf("got %+v", out)
	}
	if n := sim.Runs("c-rec"); n != 1 {
		t.Fatalf("runs = %d, want 1", n)
	}
}

func TestDeliverEndsWithoutOutcomeAtDeadline(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Faults.ProxyCutAfter = 50 * time.Millisecond })
	k := simClient(t, sim, testKey, "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out := k.Deliver(ctx, deliverOpts("slow", "c-exp", "never in time"))
	if out.Final() {
		t.Fatalf("got a final outcome before the round completed: %+v", out)
	}
	if KindOf(out.Err) != KindServer {
		t.Errorf("last error = %v, want the proxy's 502", out.Err)
	}
}

func TestDeliverMatchesTheRightRound(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	k := simClient(t, sim, testKey, "")
	ctx := context.Background()
	if out := k.Deliver(ctx, deliverOpts("echo", "c-multi", "first")); out.State != StateCompleted {
		t.Fatal(out)
	}
	// A follow-up in the same conversation, found by its text's hash
	// among the rounds after the first.
	o := deliverOpts("echo", "c-multi", "second")
	o.FreshContext = false
	o.RoundsBefore = 1
	o.Send = true
	if out := k.Deliver(ctx, o); out.State != StateCompleted || out.Reply != "Echo: second" {
		t.Fatalf("got %+v", out)
	}
	conv, err := k.GetConversation(ctx, "a2a-c-multi")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := conv.Outcome(HashText("first"), 0, false); !ok || got.Reply != "Echo: first" {
		t.Errorf("first round: %+v", got)
	}
	if got, ok := conv.Outcome("", 0, false); !ok || got.Reply != "Echo: second" {
		t.Errorf("last round: %+v", got)
	}
	if _, ok := conv.Outcome(HashText("never sent"), 0, false); ok {
		t.Error("matched a message that was never sent")
	}
}

func TestDeliverStopsPollingWhenReadingIsRefused(t *testing.T) {
	t.Parallel()
	for status, kind := range map[int]Kind{403: KindForbidden, 501: KindBadRequest, 405: KindBadRequest} {
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: status}}
		})
		o := deliverOpts("echo", fmt.Sprintf("c-%d", status), "x")
		o.Send = false
		out := simClient(t, sim, testKey, "").Deliver(context.Background(), o)
		if out.Final() || KindOf(out.Err) != kind {
			t.Fatalf("%d: got %+v", status, out)
		}
	}
}

func TestHashTextIgnoresSurroundingSpace(t *testing.T) {
	t.Parallel()
	if HashText("  hello\n") != HashText("hello") {
		t.Error("hash differs on surrounding whitespace")
	}
	if HashText("hello") == HashText("hell o") {
		t.Error("hash collides")
	}
	if !strings.HasPrefix(HashText("x"), "2d711642") {
		t.Errorf("unexpected hash %s", HashText("x"))
	}
	_ = errors.New
}

// A transient failure of the read that confirms an "Error:" reply does not
// decide the outcome: the read is retried and finds the stored round.
func TestConfirmationReadIsRetried(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 503, Times: 4}}
	})
	k := simClient(t, sim, testKey, "")
	k.t.retries = 0
	out := k.Deliver(context.Background(), deliverOpts("says-error", "c-503", "x"))
	if out.State != StateCompleted || out.Reply != "Error: this is the agent's real answer" {
		t.Fatalf("got %+v", out)
	}
}

// A dial that never connects is unreachable: nothing was sent.
func TestDialTimeoutIsUnreachable(t *testing.T) {
	t.Parallel()
	// The dialer's own timeout, shorter than the request's: a host that
	// drops packets.
	dialer := &net.Dialer{Timeout: 100 * time.Millisecond}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dctx, cancel := context.WithTimeout(ctx, dialer.Timeout)
		defer cancel()
		<-dctx.Done()
		return nil, &net.OpError{Op: "dial", Net: network, Err: dctx.Err()}
	}}}
	k := newTestKibana(t, "http://192.0.2.1:5601", func(c *KibanaConfig) { c.HTTPClient = hc; c.Retries = -1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := k.ListAgents(ctx)
	if KindOf(err) != KindUnreachable || MayHaveArrived(err) {
		t.Fatalf("got %v (%v)", KindOf(err), err)
	}
}

// TestStreamErrorAfterAcceptIsNotARefusal: a stream that named a task and
// then ends with an error event leaves a task that runs; it is followed
// (here by tasks/get), never reported as rejected, never sent again.
func TestStreamErrorAfterAcceptIsNotARefusal(t *testing.T) {
	var sends, gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		switch gjson.GetBytes(body, "method").String() {
		case "message/stream":
			sends.Add(1)
			if ae := r.Header.Get("Accept-Encoding"); ae != "identity" {
				t.Errorf("a stream asked for Accept-Encoding %q, want identity", ae)
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"working"}}}`+"\n\n")
			io.WriteString(w, "event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"error\":{\"code\":-32603,\"message\":\"internal error\"}}\n\n")
		case "tasks/resubscribe":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32004,"message":"no"}}`)
		case "tasks/get":
			gets.Add(1)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"r","parts":[{"kind":"text","text":"done anyway"}]}}}}`)
		default:
			http.Error(w, "unexpected", 400)
		}
	}))
	defer srv.Close()
	c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := c.Deliver(ctx, A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m-1", ContextID: "c-1"},
		Send: true, Streaming: true, PollInterval: 10 * time.Millisecond})
	if out.State != StateCompleted || out.Reply != "done anyway" || sends.Load() != 1 || gets.Load() == 0 {
		t.Fatalf("outcome %+v, %d sends, %d gets", out, sends.Load(), gets.Load())
	}
}

// A 400 on a read of the conversation (a proxy's, say) is a failed read,
// not the end: the next read finds the round, as for generic agents.
func TestDeliverKeepsReadingAfterA400(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 400, Times: 2}}
		o.Faults.ProxyCutAfter = 100 * time.Millisecond
	})
	k := simClient(t, sim, testKey, "")
	k.t.retries = 0
	out := k.Deliver(context.Background(), deliverOpts("slow", "c-400", "x"))
	if out.State != StateCompleted {
		t.Fatalf("got %+v", out)
	}
}

func TestRampWait(t *testing.T) {
	t.Parallel()
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, rampWait(20*time.Second, n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("ramp %v, want %v", got, want)
	}
	if d := rampWait(500*time.Millisecond, 3); d != 500*time.Millisecond {
		t.Errorf("a short poll interval is never lengthened: %v", d)
	}
}

// After a cut, a run that ends soon is read back within seconds at the
// default 20 s poll interval (not at the next poll): the first reads after
// the cut come at 0, 1, 2, 4 … s. (The run ends 0.5 s after the cut, so
// the second read finds it at about 1.1 s; the bound, 8 s, is only passed
// if the ramp starts at 8 s or more.)
func TestReadsComeSoonerAfterACut(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Faults.ProxyCutAfter = 100 * time.Millisecond })
	o := deliverOpts("slow", "c-ramp", "x")
	o.PollInterval = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if out := simClient(t, sim, testKey, "").Deliver(ctx, o); out.State != StateCompleted {
		t.Fatalf("no outcome before the first regular poll: %+v", out)
	}
}

// closedIdleOnce answers the first POST as Go's transport does when the
// server closed the pooled connection as idle just as the request was
// written (the request never reached a handler), then lets every request
// through to the real server.
type closedIdleOnce struct {
	base  http.RoundTripper
	mu    sync.Mutex
	posts int
}

func (c *closedIdleOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	first := r.Method == http.MethodPost && c.posts == 0
	if r.Method == http.MethodPost {
		c.posts++
	}
	c.mu.Unlock()
	if first {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		return nil, errors.New("http: server closed idle connection")
	}
	return c.base.RoundTrip(r)
}

// TestSendOnAConnectionTheServerClosedIdle: a send written on a pooled
// connection the server had closed as idle never reached it; it goes once
// more on a new connection, and runs once.
func TestSendOnAConnectionTheServerClosedIdle(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	rt := &closedIdleOnce{base: http.DefaultTransport.(*http.Transport).Clone()}
	k := newTestKibana(t, sim.URL, func(c *KibanaConfig) {
		c.APIKey = testKey
		c.HTTPClient = &http.Client{Transport: rt}
	})
	out := k.Deliver(context.Background(), deliverOpts("echo", "c-closed-idle", "hello"))
	if out.State != StateCompleted || out.Via != "reply" {
		t.Fatalf("%+v", out)
	}
	if sim.Runs("c-closed-idle") != 1 || rt.posts != 2 {
		t.Errorf("%d runs, %d POSTs", sim.Runs("c-closed-idle"), rt.posts)
	}
}
