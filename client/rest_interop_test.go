package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// jsWay is one way to reach the a2a-js server: a dialect over the binding
// a mount offers.
type jsWay struct {
	name    string
	mount   string
	dialect Dialect
	binding Binding
}

var jsWays = []jsWay{
	{"v0.3 JSON-RPC", interoptest.MountV03, V03, BindingJSONRPC},
	{"v1.0 JSON-RPC", interoptest.MountV1, V10, BindingJSONRPC},
	{"v1.0 HTTP+JSON", interoptest.MountREST, V10, BindingREST},
}

// connect resolves an agent's card and makes the client the card says,
// failing unless the card chose the way's dialect and binding.
func (w jsWay) connect(t *testing.T, ctx context.Context, srv *interoptest.Server, agent string, cred Secret) *A2A {
	t.Helper()
	ra, err := ResolveAgentWith(ctx, nil, srv.URL(w.mount, agent), ResolveOptions{UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Dialect != w.dialect || ra.Binding != w.binding {
		t.Fatalf("%s: the card chose %s over %s", w.name, ra.Dialect, ra.Binding)
	}
	c, err := NewA2A(A2AConfig{Endpoint: ra.Endpoint, Dialect: ra.Dialect, Binding: ra.Binding, Tenant: ra.Tenant, Auth: ra.Auth, Credential: cred})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newMsg(text string) OutgoingMessage {
	return OutgoingMessage{Text: text, MessageID: uuid.NewString(), ContextID: "ctx-" + uuid.NewString()}
}

// deliveryLog collects a delivery's events.
type deliveryLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *deliveryLog) add(e Event) { l.mu.Lock(); l.ev = append(l.ev, e); l.mu.Unlock() }

func (l *deliveryLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.ev {
		out = append(out, string(e.Kind))
	}
	return out
}

func (l *deliveryLog) progress() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.ev {
		if e.Kind == "progress" {
			out = append(out, e.State+": "+e.Message)
		}
	}
	return out
}

func deliver(ctx context.Context, c *A2A, m OutgoingMessage, streaming bool, log *deliveryLog) Outcome {
	return c.Deliver(ctx, A2ADeliverOptions{Message: m, Send: true, Streaming: streaming, PollInterval: 50 * time.Millisecond, OnEvent: log.add})
}

const slowAnswer3 = "chunk 1/3\nchunk 2/3\nchunk 3/3\ndone after 3 chunks"

// TestRESTBindingDeliver runs the scenarios of a delivery against a2a-js's
// HTTP+JSON-only mount: the card offers no JSON-RPC, so every one of them
// goes over the REST binding, errors included.
func TestRESTBindingDeliver(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := restEnv{js: js, ctx: ctx, rest: jsWay{"HTTP+JSON", interoptest.MountREST, V10, BindingREST}}
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("task streaming=%v", streaming), func(t *testing.T) {
			t.Parallel()
			restTask(t, e, streaming)
		})
	}
	for _, c := range []struct {
		name string
		run  func(*testing.T, restEnv)
	}{
		{"card", restCard},
		{"message reply", restMessageReply},
		{"failed task", restFailedTask},
		{"input required", restInputRequired},
		{"cancel", restCancel},
		{"unknown task", restUnknownTask},
		{"bearer", restBearer},
		{"version", restVersion},
		{"list and fetch by context", restListAndFetchByContext},
		{"tenant", restTenant},
		{"stream cut", restStreamCut},
		{"application/json after a refusal of application/a2a+json", restApplicationJsonAfterARefusalOfApplicationA2aJson},
		{"subscribe by GET after a 405", restSubscribeByGETAfterA405},
		{"a content-type error after an event sends nothing again", restContentTypeErrorAfterAnEvent},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, e)
		})
	}
}

// restEnv is the server and the deadline of TestRESTBindingDeliver's cases.
type restEnv struct {
	js   *interoptest.Server
	ctx  context.Context
	rest jsWay
}

func (e restEnv) connect(t *testing.T, agent string) *A2A {
	return e.rest.connect(t, e.ctx, e.js, agent, "")
}

func restCard(t *testing.T, e restEnv) {
	ra, err := ResolveAgentWith(e.ctx, nil, e.js.URL(interoptest.MountREST, interoptest.AgentSlow), ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Endpoint != e.js.URL(interoptest.MountREST, interoptest.AgentSlow) || ra.Binding != BindingREST || ra.Dialect != V10 || !ra.Streaming || ra.Moved {
		t.Errorf("%+v", ra)
	}
	// A JSON-RPC client of the same URL finds no route.
	c, _ := NewA2A(A2AConfig{Endpoint: ra.Endpoint, Dialect: V10})
	if _, err := c.Send(e.ctx, newMsg("hi"), false); !IsKind(err, KindNotFound) {
		t.Errorf("JSON-RPC at an HTTP+JSON endpoint: %v", err)
	}
}

func restMessageReply(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentEcho)
	for _, streaming := range []bool{false, true} {
		out := deliver(e.ctx, c, newMsg("hello"), streaming, &deliveryLog{})
		if out.State != StateCompleted || out.Reply != "echo: hello" || len(out.Parts) != 1 || out.Parts[0].Source != SourceMessage ||
			out.Parts[0].MediaType != "text/plain" {
			t.Errorf("streaming %v: %+v", streaming, out)
		}
	}
}

func restFailedTask(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentFail)
	for _, streaming := range []bool{false, true} {
		if out := deliver(e.ctx, c, newMsg("fail"), streaming, &deliveryLog{}); out.State != StateFailed || out.Reason != interoptest.FailReason {
			t.Errorf("streaming %v: %+v", streaming, out)
		}
	}
}

func restInputRequired(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentAsk)
	for _, streaming := range []bool{false, true} {
		m := newMsg("start")
		out := deliver(e.ctx, c, m, streaming, &deliveryLog{})
		if out.State != StateInputRequired || out.Reply != interoptest.AskQuestion || out.TaskID == "" {
			t.Fatalf("streaming %v: %+v", streaming, out)
		}
		answer := OutgoingMessage{Text: "Ada", MessageID: uuid.NewString(), ContextID: m.ContextID, TaskID: out.TaskID}
		done := c.Deliver(e.ctx, A2ADeliverOptions{Message: answer, Send: true, Streaming: streaming, Question: out.Reply, PollInterval: 50 * time.Millisecond})
		if done.State != StateCompleted || done.Reply != "Hello, Ada!" || done.TaskID != out.TaskID {
			t.Errorf("streaming %v, the answer: %+v", streaming, done)
		}
		// Answering again: the task is finished, the agent refuses
		// it as over JSON-RPC (-32004).
		again := c.Deliver(e.ctx, A2ADeliverOptions{Message: OutgoingMessage{Text: "again", MessageID: uuid.NewString(), TaskID: out.TaskID}, Send: true, Streaming: streaming})
		if again.State != StateRejected || rpcCode(again.Err) != -32004 {
			t.Errorf("streaming %v, a second answer: %+v", streaming, again)
		}
	}
}

func restCancel(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentSlow)
	res, err := c.Send(e.ctx, newMsg("chunks=100 delay=100ms"), true)
	if err != nil || res.Kind != "task" {
		t.Fatalf("%+v %v", res, err)
	}
	got, err := c.CancelTask(e.ctx, res.TaskID)
	if err != nil || got.State != "canceled" || got.TaskID != res.TaskID {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	if out, ok := got.Outcome(); !ok || out.State != StateCanceled || out.Reason != "canceled on request" {
		t.Errorf("outcome %+v", out)
	}
	done, err := c.Send(e.ctx, newMsg("chunks=1 delay=1ms"), false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CancelTask(e.ctx, done.TaskID)
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindRPC || ce.RPCCode != -32002 || ce.StatusCode != 400 || ce.Reason != "TASK_NOT_CANCELABLE" ||
		!strings.Contains(err.Error(), "HTTP 400 TASK_NOT_CANCELABLE: Task not cancelable") {
		t.Errorf("cancel a completed task: %#v", err)
	}
}

func restUnknownTask(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentAsk)
	for _, op := range []func() error{
		func() error { _, err := c.GetTask(e.ctx, "no-such-task"); return err },
		func() error { _, err := c.CancelTask(e.ctx, "no-such-task"); return err },
		func() error { return c.Subscribe(e.ctx, "no-such-task", func(StreamEvent) bool { return true }) },
	} {
		err := op()
		if !taskNotFound(err) || rpcCode(err) != -32001 || statusCode(err) != 404 || !IsKind(err, KindRPC) {
			t.Errorf("%v", err)
		}
	}
	out := c.Deliver(e.ctx, A2ADeliverOptions{TaskID: "no-such-task", PollInterval: 50 * time.Millisecond})
	if !errors.Is(out.Err, ErrTaskGone) || out.State != "" {
		t.Errorf("following an unknown task: %+v", out)
	}
	for _, streaming := range []bool{false, true} {
		m := newMsg("hi")
		m.TaskID = "no-such-task"
		if out := deliver(e.ctx, c, m, streaming, &deliveryLog{}); out.State != StateRejected || rpcCode(out.Err) != -32001 {
			t.Errorf("streaming %v, answering an unknown task: %+v", streaming, out)
		}
	}
}

func restBearer(t *testing.T, e restEnv) {
	for _, streaming := range []bool{false, true} {
		out := deliver(e.ctx, e.connect(t, interoptest.AgentSecure), newMsg("secret"), streaming, &deliveryLog{})
		if out.State != StateRejected || !IsKind(out.Err, KindAuth) {
			t.Errorf("streaming %v, no token: %+v", streaming, out)
		}
		c := e.rest.connect(t, e.ctx, e.js, interoptest.AgentSecure, Secret(e.js.Token))
		if out := deliver(e.ctx, c, newMsg("secret"), streaming, &deliveryLog{}); out.State != StateCompleted || out.Reply != "echo: secret" {
			t.Errorf("streaming %v, with the token: %+v", streaming, out)
		}
	}
}

func restVersion(t *testing.T, e restEnv) {
	if _, err := NewA2A(A2AConfig{Endpoint: e.js.URL(interoptest.MountREST, interoptest.AgentEcho), Dialect: V03, Binding: BindingREST}); err == nil {
		t.Error("HTTP+JSON in 0.3 was accepted")
	}
	// Another version than the mount's: -32009, as over JSON-RPC.
	c := e.connect(t, interoptest.AgentEcho)
	c.t.headers["A2A-Version"] = "0.3"
	_, err := c.Send(e.ctx, newMsg("hi"), false)
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindRPC || ce.RPCCode != -32009 || ce.Reason != "VERSION_NOT_SUPPORTED" || MayHaveArrived(err) {
		t.Errorf("%#v", err)
	}
}

func restListAndFetchByContext(t *testing.T, e restEnv) {
	c := e.connect(t, interoptest.AgentSlow)
	ctxID := "ctx-" + uuid.NewString()
	var mids, tids []string
	for range 3 {
		m := OutgoingMessage{Text: "chunks=1 delay=1ms", MessageID: uuid.NewString(), ContextID: ctxID}
		res, err := c.Send(e.ctx, m, false)
		if err != nil || res.State != "completed" {
			t.Fatalf("%+v %v", res, err)
		}
		mids, tids = append(mids, m.MessageID), append(tids, res.TaskID)
		time.Sleep(5 * time.Millisecond)
	}
	running, err := c.Send(e.ctx, OutgoingMessage{Text: "chunks=100 delay=100ms", MessageID: uuid.NewString(), ContextID: ctxID}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CancelTask(context.Background(), running.TaskID)
	for i, mid := range mids {
		if id, err := c.FindTask(e.ctx, ctxID, mid); err != nil || id != tids[i] {
			t.Errorf("FindTask(%s) = %q %v, want %s", mid, id, err, tids[i])
		}
	}
	all, err := c.ContextTasks(e.ctx, ctxID, false)
	if err != nil || len(all) != 4 {
		t.Fatalf("%+v %v", all, err)
	}
	done, err := c.Tasks(e.ctx, TaskFilter{ContextID: ctxID, State: "completed"})
	if err != nil || len(done) != 3 || done[0].ID != tids[2] || done[0].StatusText != "done after 1 chunks" {
		t.Errorf("completed: %+v %v", done, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		working, err := c.Tasks(e.ctx, TaskFilter{ContextID: ctxID, State: "TASK_STATE_WORKING"})
		if err == nil && len(working) == 1 && working[0].ID == running.TaskID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("working: %+v %v", working, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	page, err := c.ListTasks(e.ctx, TaskFilter{ContextID: ctxID, State: "completed"}, 2, "")
	if err != nil || len(page.Tasks) != 2 || page.NextPageToken == "" || page.TotalSize != 3 {
		t.Fatalf("first page: %+v %v", page, err)
	}
	page, err = c.ListTasks(e.ctx, TaskFilter{ContextID: ctxID, State: "completed"}, 2, page.NextPageToken)
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != tids[0] || page.NextPageToken != "" {
		t.Errorf("last page: %+v %v", page, err)
	}
	checkTaskListLimit(t, e.ctx, c, ctxID, tids)
	if _, err := c.Tasks(e.ctx, TaskFilter{State: "sleeping"}); !IsKind(err, KindBadRequest) {
		t.Errorf("an unknown state: %v", err)
	}
	// Recovery reads the task back without sending: by its id, or by
	// the context and the message id.
	for _, o := range []A2ADeliverOptions{{TaskID: tids[1]}, {Message: OutgoingMessage{ContextID: ctxID, MessageID: mids[1]}}} {
		o.PollInterval = 50 * time.Millisecond
		if out := c.Deliver(e.ctx, o); out.State != StateCompleted || out.Reply != "chunk 1/1\ndone after 1 chunks" || out.TaskID != tids[1] {
			t.Errorf("recovery %+v: %+v", o, out)
		}
	}
}

func restTenant(t *testing.T, e restEnv) {
	ra, err := ResolveAgentWith(e.ctx, nil, e.js.URL(interoptest.MountREST, interoptest.AgentSlow), ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acme, _ := NewA2A(A2AConfig{Endpoint: ra.Endpoint, Dialect: V10, Binding: BindingREST, Tenant: "acme"})
	m := newMsg("chunks=2 delay=20ms")
	out := deliver(e.ctx, acme, m, true, &deliveryLog{})
	if out.State != StateCompleted || out.TaskID == "" {
		t.Fatalf("%+v", out)
	}
	if res, err := acme.GetTask(e.ctx, out.TaskID); err != nil || res.State != "completed" {
		t.Errorf("under the tenant: %+v %v", res, err)
	}
	if tasks, err := acme.ContextTasks(e.ctx, m.ContextID, false); err != nil || len(tasks) != 1 {
		t.Errorf("listed under the tenant: %+v %v", tasks, err)
	}
	bare, _ := NewA2A(A2AConfig{Endpoint: ra.Endpoint, Dialect: V10, Binding: BindingREST})
	if _, err := bare.GetTask(e.ctx, out.TaskID); !taskNotFound(err) {
		t.Errorf("without the tenant: %v", err)
	}
}

func restStreamCut(t *testing.T, e restEnv) {
	proxy := cutProxy(t, e.js.Origin, 900)
	base := strings.Replace(e.js.URL(interoptest.MountREST, interoptest.AgentSlow), e.js.Origin, proxy.URL, 1)
	c, _ := NewA2A(A2AConfig{Endpoint: base, Dialect: V10, Binding: BindingREST})
	var log deliveryLog
	m := newMsg("chunks=8 delay=100ms")
	out := deliver(e.ctx, c, m, true, &log)
	want := "chunk 1/8\nchunk 2/8\nchunk 3/8\nchunk 4/8\nchunk 5/8\nchunk 6/8\nchunk 7/8\nchunk 8/8\ndone after 8 chunks"
	if out.State != StateCompleted || out.Reply != want {
		t.Fatalf("%+v (events %v)", out, log.kinds())
	}
	if !slices.Contains(log.kinds(), "connection_lost") {
		t.Errorf("the stream was not cut: %v", log.kinds())
	}
	// Never sent twice: the context holds one task.
	if tasks, err := c.ContextTasks(e.ctx, m.ContextID, false); err != nil || len(tasks) != 1 {
		t.Errorf("tasks of the context: %+v %v", tasks, err)
	}
}

func restApplicationJsonAfterARefusalOfApplicationA2aJson(t *testing.T, e restEnv) {
	var refused, passed atomic.Int32
	var types sync.Map
	u, _ := url.Parse(e.js.Origin)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		types.Store(ct, true)
		if strings.HasPrefix(ct, "application/a2a+json") {
			refused.Add(1)
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		passed.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	base := strings.Replace(e.js.URL(interoptest.MountREST, interoptest.AgentEcho), e.js.Origin, proxy.URL, 1)
	c, _ := NewA2A(A2AConfig{Endpoint: base, Dialect: V10, Binding: BindingREST})
	for _, streaming := range []bool{true, false} {
		if out := deliver(e.ctx, c, newMsg("hi"), streaming, &deliveryLog{}); out.State != StateCompleted || out.Reply != "echo: hi" {
			t.Errorf("streaming %v: %+v", streaming, out)
		}
	}
	if refused.Load() != 1 || passed.Load() != 2 {
		t.Errorf("refused %d, passed %d: the fallback is kept after the first refusal", refused.Load(), passed.Load())
	}
}

// restContentTypeErrorAfterAnEvent: a stream that has carried an event
// and then ends with an error reading like a refusal of the content type
// was taken in by the agent: the message is never sent again with the
// other type (the fallback is for a refusal before any event).
func restContentTypeErrorAfterAnEvent(t *testing.T, e restEnv) {
	u, _ := url.Parse(e.js.Origin)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.HasSuffix(resp.Request.URL.Path, ":stream") {
			resp.Body = &errorAfterFirstEvent{r: resp.Body}
		}
		return nil
	}
	var streams atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":stream") {
			streams.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	base := strings.Replace(e.js.URL(interoptest.MountREST, interoptest.AgentSlow), e.js.Origin, proxy.URL, 1)
	c, _ := NewA2A(A2AConfig{Endpoint: base, Dialect: V10, Binding: BindingREST})
	m := newMsg("chunks=3 delay=100ms")
	out := deliver(e.ctx, c, m, true, &deliveryLog{})
	// The task it started is followed to its end instead.
	if out.State != StateCompleted || out.Reply != slowAnswer3 {
		t.Errorf("%+v", out)
	}
	if n := streams.Load(); n != 1 {
		t.Errorf("%d streams sent, want 1", n)
	}
	if tasks, err := c.ContextTasks(e.ctx, m.ContextID, false); err != nil || len(tasks) != 1 {
		t.Errorf("tasks of the context: %+v %v", tasks, err)
	}
}

// errorAfterFirstEvent passes a stream's first event through, then ends
// it with an error event that names a content-type refusal.
type errorAfterFirstEvent struct {
	r    io.ReadCloser
	buf  []byte
	done bool
}

func (b *errorAfterFirstEvent) Read(p []byte) (int, error) {
	for !b.done {
		chunk := make([]byte, 512)
		n, err := b.r.Read(chunk)
		b.buf = append(b.buf, chunk[:n]...)
		if i := strings.Index(string(b.buf), "\n\n"); i >= 0 {
			b.buf = append(b.buf[:i+2], []byte(`event: error
data: {"error":{"code":415,"status":"INVALID_ARGUMENT","message":"content-type application/a2a+json is not supported","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONTENT_TYPE_NOT_SUPPORTED"}]}}

`)...)
			b.done = true
		} else if err != nil {
			return 0, err
		}
	}
	if len(b.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *errorAfterFirstEvent) Close() error { return b.r.Close() }

func restSubscribeByGETAfterA405(t *testing.T, e restEnv) {
	u, _ := url.Parse(e.js.Origin)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	var gets atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":subscribe") {
			if r.Method != http.MethodGet {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			gets.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	base := strings.Replace(e.js.URL(interoptest.MountREST, interoptest.AgentSlow), e.js.Origin, proxy.URL, 1)
	c, _ := NewA2A(A2AConfig{Endpoint: base, Dialect: V10, Binding: BindingREST})
	// Long enough to be still running when the subscription opens.
	res, err := c.Send(e.ctx, newMsg("chunks=3 delay=300ms"), true)
	if err != nil {
		t.Fatal(err)
	}
	out := c.Deliver(e.ctx, A2ADeliverOptions{TaskID: res.TaskID, Streaming: true, PollInterval: time.Minute})
	if out.State != StateCompleted || out.Reply != slowAnswer3 || out.Via != "stream" || gets.Load() != 1 {
		t.Errorf("%+v (GET subscriptions %d)", out, gets.Load())
	}
}

func restTask(t *testing.T, e restEnv, streaming bool) {
	var log deliveryLog
	// Slow enough for a poll every 50 ms to see it working.
	out := deliver(e.ctx, e.connect(t, interoptest.AgentSlow), newMsg("chunks=3 delay=150ms"), streaming, &log)
	if out.State != StateCompleted || out.Reply != slowAnswer3 || out.TaskID == "" {
		t.Fatalf("%+v (events %v)", out, log.kinds())
	}
	// The agent's "working" status reaches the caller once.
	if p := log.progress(); !slices.Equal(p, []string{"working: working"}) {
		t.Errorf("progress %q (events %v)", p, log.kinds())
	}
}

// TestPartsReachTheAgent sends files read with FilePartFromPath, a file
// by URL and a data part to a2a-js's parts agent, in every dialect and
// binding it serves, and checks that each arrives with its name, media
// type, size and SHA-256.
func TestPartsReachTheAgent(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "table.csv")
	png := filepath.Join(dir, "dot.png")
	pngBytes, _ := base64.StdEncoding.DecodeString(interoptest.FilesPNG)
	if err := os.WriteFile(csv, []byte("name,n\nada,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(png, pngBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	var files []AttachedFile
	for _, p := range []string{csv, png} {
		f, err := FilePartFromPath(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if files[0].Part.MediaType != "text/csv" || files[1].Part.MediaType != "image/png" || files[1].Size != int64(len(pngBytes)) {
		t.Fatalf("%+v", files)
	}
	want := strings.Join([]string{
		interoptest.PartLine(1, "text", "", "", `size=4 text="look"`),
		interoptest.PartLine(2, "raw", "table.csv", "text/csv", fmt.Sprintf("size=%d sha256=%s", files[0].Size, files[0].SHA256)),
		interoptest.PartLine(3, "raw", "dot.png", "image/png", fmt.Sprintf("size=%d sha256=%s", files[1].Size, files[1].SHA256)),
		interoptest.PartLine(4, "url", "r.pdf", "application/pdf", `url="https://x.invalid/r.pdf"`),
		interoptest.PartLine(5, "data", "", "", `json={"k":[1,2],"s":"x"}`),
	}, "\n")
	for _, w := range jsWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx := deadline(t, 60*time.Second)
			c := w.connect(t, ctx, js, interoptest.AgentParts, "")
			for _, streaming := range []bool{false, true} {
				m := newMsg("look")
				m.Parts = []Part{files[0].Part, files[1].Part,
					{Kind: PartFile, Name: "r.pdf", MediaType: "application/pdf", URL: "https://x.invalid/r.pdf"},
					DataPart([]byte(`{"k": [1, 2], "s": "x"}`))}
				if out := deliver(ctx, c, m, streaming, &deliveryLog{}); out.State != StateCompleted || out.Reply != want {
					t.Errorf("streaming %v:\n got %q\nwant %q (%v)", streaming, out.Reply, want, out.Err)
				}
			}
			// Without a text, no text part goes.
			m := newMsg("")
			m.Parts = []Part{DataPart([]byte(`{"only":true}`))}
			if out := deliver(ctx, c, m, false, &deliveryLog{}); out.Reply != interoptest.PartLine(1, "data", "", "", `json={"only":true}`) {
				t.Errorf("parts only: %+v", out)
			}
			// A2A 0.3 data parts are objects: anything else is refused
			// before it is sent.
			m = newMsg("x")
			m.Parts = []Part{DataPart([]byte(`[1,2]`))}
			out := deliver(ctx, c, m, false, &deliveryLog{})
			switch {
			case w.dialect == V03 && (out.State != StateRejected || !IsKind(out.Err, KindBadRequest) || !strings.Contains(out.Reason, "JSON objects only")):
				t.Errorf("an array in 0.3: %+v", out)
			case w.dialect == V10 && out.Reply != interoptest.PartLine(1, "text", "", "", `size=1 text="x"`)+"\n"+interoptest.PartLine(2, "data", "", "", "json=[1,2]"):
				t.Errorf("an array in 1.0: %+v", out)
			}
		})
	}
}

// TestReplyFilesAreDecoded reads the files agent's answer in every dialect
// and binding, as a Task (streamed and polled) and as a Message: the file
// parts come back decoded with their names and media types, the file by
// URL as a URL, the data part as its JSON; the artifact's parts apart from
// the status message's.
func TestReplyFilesAreDecoded(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	png, _ := base64.StdEncoding.DecodeString(interoptest.FilesPNG)
	for _, w := range jsWays {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx := deadline(t, 60*time.Second)
			c := w.connect(t, ctx, js, interoptest.AgentFiles, "")
			for _, mode := range []string{"streamed", "polled", "message"} {
				text := "go"
				if mode == "message" {
					text = "as a message"
				}
				out := deliver(ctx, c, newMsg(text), mode == "streamed", &deliveryLog{})
				source, reply := SourceArtifact, interoptest.FilesIntro+"\n"+interoptest.FilesStatus
				if mode == "message" {
					source, reply = SourceMessage, interoptest.FilesIntro
				}
				if out.State != StateCompleted || out.Reply != reply {
					t.Fatalf("%s: %+v", mode, out)
				}
				ps := out.Parts
				if mode != "message" {
					if len(ps) != 6 || ps[5].Source != SourceStatus || ps[5].Text != interoptest.FilesStatus {
						t.Fatalf("%s: parts %+v", mode, ps)
					}
					ps = ps[:5]
				}
				if len(ps) != 5 {
					t.Fatalf("%s: parts %+v", mode, ps)
				}
				for _, p := range ps {
					if p.Source != source || source == SourceArtifact && (p.ArtifactName != "files" || p.ArtifactID == "") {
						t.Errorf("%s: source of %+v", mode, p)
					}
				}
				textType := ""
				if w.dialect == V10 {
					textType = "text/plain" // 0.3 text parts carry no media type
				}
				check := func(i int, want Part) {
					t.Helper()
					got := ps[i].Part
					if got.Kind != want.Kind || got.Name != want.Name || got.MediaType != want.MediaType || string(got.Bytes) != string(want.Bytes) ||
						got.URL != want.URL || got.Text != want.Text || got.Problem != "" {
						t.Errorf("%s: part %d\n got %+v\nwant %+v", mode, i, got, want)
					}
				}
				check(0, Part{Kind: PartText, Text: interoptest.FilesIntro, MediaType: textType})
				check(1, Part{Kind: PartFile, Name: "hello.txt", MediaType: "text/plain", Bytes: []byte(interoptest.FilesText)})
				check(2, Part{Kind: PartFile, Name: "pixel.png", MediaType: "image/png", Bytes: png})
				check(3, Part{Kind: PartFile, Name: "report.pdf", MediaType: "application/pdf", URL: interoptest.FilesURL})
				dataType := "application/json"
				if w.dialect == V03 {
					dataType = "" // 0.3 data parts carry no media type
				}
				if d := ps[4]; d.Kind != PartData || string(d.Data) != interoptest.FilesData || d.MediaType != dataType {
					t.Errorf("%s: data part %+v (%s)", mode, d, d.Data)
				}
			}
		})
	}
}

// TestSlowAgentAnswerIsArtifactsThenStatus: the slow agent streams its
// artifact in chunks and ends with the status message "done after N
// chunks"; the reply is both, in every dialect and binding, streamed,
// polled, or read back later, with the parts kept apart.
func TestSlowAgentAnswerIsArtifactsThenStatus(t *testing.T) {
	t.Parallel()
	gos, js := interoptest.StartGo(t), interoptest.StartJS(t)
	type way struct {
		jsWay
		srv *interoptest.Server
	}
	ways := []way{{jsWay{"a2a-go v0.3 JSON-RPC", interoptest.MountGo, V03, BindingJSONRPC}, gos}}
	for _, w := range jsWays {
		ways = append(ways, way{jsWay{"a2a-js " + w.name, w.mount, w.dialect, w.binding}, js})
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx := deadline(t, 60*time.Second)
			c := w.connect(t, ctx, w.srv, interoptest.AgentSlow, "")
			check := func(how string, out Outcome) {
				t.Helper()
				if out.State != StateCompleted || out.Reply != slowAnswer3 {
					t.Fatalf("%s: %+v", how, out)
				}
				var arts, status []string
				for _, p := range out.Parts {
					switch p.Source {
					case SourceArtifact:
						arts = append(arts, p.Text)
						if p.ArtifactName != "slow-output" {
							t.Errorf("%s: artifact name %q", how, p.ArtifactName)
						}
					case SourceStatus:
						status = append(status, p.Text)
					}
				}
				if !slices.Equal(arts, []string{"chunk 1/3\n", "chunk 2/3\n", "chunk 3/3\n"}) || !slices.Equal(status, []string{"done after 3 chunks"}) {
					t.Errorf("%s: parts %+v", how, out.Parts)
				}
			}
			var taskID string
			for _, streaming := range []bool{true, false} {
				out := deliver(ctx, c, newMsg("chunks=3 delay=20ms"), streaming, &deliveryLog{})
				check(fmt.Sprintf("streaming %v", streaming), out)
				taskID = out.TaskID
			}
			res, err := c.GetTask(ctx, taskID)
			if err != nil {
				t.Fatal(err)
			}
			if res.ArtifactText != "chunk 1/3\nchunk 2/3\nchunk 3/3\n" || res.StatusText != "done after 3 chunks" {
				t.Errorf("read back: %+v", res)
			}
			out, _ := res.Outcome()
			check("read back", out)
		})
	}
}

// TestResolveAgentBindings: the card chooses the binding (JSON-RPC where
// it is offered, else HTTP+JSON), a caller's choice overrides it, and a
// card offering only gRPC is refused by name.
func TestResolveAgentBindings(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	var cards sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0]
		card, ok := cards.Load(name)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.ReplaceAll(card.(string), "{{origin}}", "http://"+r.Host))
	}))
	t.Cleanup(srv.Close)
	cards.Store("both", `{"name":"both","supportedInterfaces":[
		{"url":"{{origin}}/both/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
		{"url":"{{origin}}/both/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0","tenant":"t1"}]}`)
	cards.Store("grpc", `{"name":"grpc","supportedInterfaces":[{"url":"{{origin}}/grpc","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`)
	cards.Store("grpc03", `{"name":"grpc03","url":"{{origin}}/grpc03","preferredTransport":"GRPC","protocolVersion":"0.3.0"}`)
	cards.Store("rest03", `{"name":"rest03","url":"{{origin}}/rest03","preferredTransport":"HTTP+JSON","protocolVersion":"0.3.0"}`)
	cards.Store("rest-and-rpc03", `{"name":"rest-and-rpc03","supportedInterfaces":[
		{"url":"{{origin}}/r/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
		{"url":"{{origin}}/r/rpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`)

	for _, tc := range []struct {
		name, url string
		prefer    Binding
		endpoint  string
		dialect   Dialect
		binding   Binding
		tenant    string
		err       string
	}{
		{name: "HTTP+JSON only (a2a-js rest)", url: js.URL(interoptest.MountREST, interoptest.AgentEcho), endpoint: js.URL(interoptest.MountREST, interoptest.AgentEcho), dialect: V10, binding: BindingREST},
		{name: "HTTP+JSON only, asked for", url: js.URL(interoptest.MountREST, interoptest.AgentEcho), prefer: BindingREST, endpoint: js.URL(interoptest.MountREST, interoptest.AgentEcho), dialect: V10, binding: BindingREST},
		{name: "HTTP+JSON only, JSON-RPC asked for", url: js.URL(interoptest.MountREST, interoptest.AgentEcho), prefer: BindingJSONRPC,
			err: "the card offers no JSON-RPC interface of A2A 0.3 or 1.x (it offers HTTP+JSON 1.0); drop the binding choice to use HTTP+JSON"},
		{name: "JSON-RPC only (a2a-js v1), HTTP+JSON asked for", url: js.URL(interoptest.MountV1, interoptest.AgentEcho), prefer: BindingREST,
			err: "the card offers no HTTP+JSON interface of A2A 1.x (it offers JSONRPC 1.0); drop the binding choice to use JSON-RPC"},
		{name: "JSON-RPC only (a2a-js v1)", url: js.URL(interoptest.MountV1, interoptest.AgentEcho), endpoint: js.URL(interoptest.MountV1, interoptest.AgentEcho), dialect: V10, binding: BindingJSONRPC},
		{name: "both: JSON-RPC first", url: srv.URL + "/both", endpoint: srv.URL + "/both/rpc", dialect: V10, binding: BindingJSONRPC},
		{name: "both, HTTP+JSON asked for", url: srv.URL + "/both", prefer: BindingREST, endpoint: srv.URL + "/both/rest", dialect: V10, binding: BindingREST, tenant: "t1"},
		{name: "JSON-RPC 0.3 beats HTTP+JSON 1.0", url: srv.URL + "/rest-and-rpc03", endpoint: srv.URL + "/r/rpc", dialect: V03, binding: BindingJSONRPC},
		{name: "gRPC only", url: srv.URL + "/grpc", err: "gRPC is not supported: the agent offers no JSON-RPC or HTTP+JSON interface (it offers GRPC 1.0)"},
		{name: "gRPC only, 0.3 card", url: srv.URL + "/grpc03", err: "gRPC is not supported: the agent offers no JSON-RPC or HTTP+JSON interface (it offers GRPC 0.3.0)"},
		{name: "gRPC only, HTTP+JSON asked for", url: srv.URL + "/grpc", prefer: BindingREST, err: "gRPC is not supported: the agent offers no JSON-RPC or HTTP+JSON interface (it offers GRPC 1.0)"},
		{name: "HTTP+JSON of 0.3 only", url: srv.URL + "/rest03",
			err: "the card offers no JSON-RPC interface of A2A 0.3 or 1.x, nor an HTTP+JSON interface of A2A 1.x (it offers HTTP+JSON 0.3.0) (gRPC, and HTTP+JSON of A2A 0.3, are not supported)"},
	} {
		ra, err := ResolveAgentWith(ctx, nil, tc.url, ResolveOptions{UserAgent: "test", Binding: tc.prefer})
		switch {
		case tc.err != "":
			var ce *Error
			if !errors.As(err, &ce) || ce.Message != tc.err || ce.Kind != KindProtocol {
				t.Errorf("%s: %v\nwant %s", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case ra.Endpoint != tc.endpoint || ra.Dialect != tc.dialect || ra.Binding != tc.binding || ra.Tenant != tc.tenant:
			t.Errorf("%s: %s %s %s tenant %q", tc.name, ra.Endpoint, ra.Dialect, ra.Binding, ra.Tenant)
		}
	}

	// ResolveAgent, for callers that speak JSON-RPC only, refuses an
	// HTTP+JSON-only card as before, and still takes the others.
	restOnly := js.URL(interoptest.MountREST, interoptest.AgentEcho)
	_, err := ResolveAgent(ctx, nil, restOnly, "test")
	if ce := (*Error)(nil); !errors.As(err, &ce) || ce.Message != "the card offers no JSON-RPC interface of A2A 0.3 or 1.x (it offers HTTP+JSON 1.0); HTTP+JSON is not spoken here" {
		t.Errorf("ResolveAgent, HTTP+JSON only: %v", err)
	}
	if _, err := ResolveAgent(ctx, nil, srv.URL+"/grpc", "test"); err == nil || !strings.Contains(err.Error(), "gRPC is not supported") {
		t.Errorf("ResolveAgent, gRPC only: %v", err)
	}
	if ra, err := ResolveAgent(ctx, nil, srv.URL+"/both", "test"); err != nil || ra.Binding != BindingJSONRPC || ra.Endpoint != srv.URL+"/both/rpc" {
		t.Errorf("ResolveAgent, both: %+v %v", ra, err)
	}

	// --protocol 0.3 on an HTTP+JSON-only agent: not offered, and then
	// spoken over JSON-RPC (0.3 has no HTTP+JSON here).
	ra, err := ResolveAgentWith(ctx, nil, restOnly, ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Use(V03) || ra.Binding != BindingJSONRPC || ra.Dialect != V03 {
		t.Errorf("Use(0.3): %+v", ra)
	}
	if _, err := ParseBinding("grpc"); err == nil {
		t.Error("ParseBinding took grpc")
	}
}

// checkTaskListLimit: a limit stops the listing of a context's 3
// completed tasks (tids, oldest first): the newest, and the count.
func checkTaskListLimit(t *testing.T, ctx context.Context, c *A2A, ctxID string, tids []string) {
	t.Helper()
	l, err := c.TaskList(ctx, TaskFilter{ContextID: ctxID, State: "completed"}, 2)
	if err != nil || len(l.Tasks) != 2 || l.Tasks[0].ID != tids[2] || l.Tasks[1].ID != tids[1] || l.Total != 3 || !l.More {
		t.Errorf("limit 2: %+v %v", l, err)
	}
	if l, err = c.TaskList(ctx, TaskFilter{ContextID: ctxID, State: "completed"}, 3); err != nil || len(l.Tasks) != 3 || l.Total != 3 || l.More {
		t.Errorf("limit 3: %+v %v", l, err)
	}
}
