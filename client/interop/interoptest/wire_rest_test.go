package interoptest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// TestWireJSREST characterises a2a-js's HTTP+JSON binding (its restHandler,
// the rest mount) with raw HTTP, as TestWireJS does its JSON-RPC: what
// docs/interop-wire.md says of HTTP+JSON is asserted here.
func TestWireJSREST(t *testing.T) {
	t.Parallel()
	srv := StartJS(t)
	rt := restTarget{srv: srv}
	for name, f := range map[string]func(*testing.T, restTarget){
		"card":           testRESTCard,
		"echo_message":   testRESTEcho,
		"content_type":   testRESTContentType,
		"version":        testRESTVersion,
		"blocking_task":  testRESTBlocking,
		"non_blocking":   testRESTNonBlocking,
		"stream_task":    testRESTStreamTask,
		"stream_message": testRESTStreamMessage,
		"failed_task":    testRESTFailed,
		"input_required": testRESTInputRequired,
		"cancel":         testRESTCancel,
		"unknown_task":   testRESTUnknownTask,
		"subscribe":      testRESTSubscribe,
		"bearer":         testRESTBearer,
		"list_tasks":     testRESTListTasks,
		"tenant":         testRESTTenant,
		"parts":          testRESTParts,
		"files":          testRESTFiles,
		"unknown_route":  testRESTUnknownRoute,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, rt)
		})
	}
}

// restTarget is the rest mount of an a2a-js server.
type restTarget struct{ srv *Server }

func (rt restTarget) url(agent, path string) string { return rt.srv.URL(MountREST, agent) + path }

// restResp is one HTTP+JSON exchange read to its end.
type restResp struct {
	status int
	header http.Header
	raw    string
}

func (r restResp) body() gjson.Result { return gjson.Parse(r.raw) }

func (r restResp) String() string {
	return r.header.Get("Content-Type") + " HTTP " + http.StatusText(r.status) + ": " + r.raw
}

type restOpts struct {
	header map[string]string
	noVer  bool
}

func restHeader(k, v string) func(*restOpts) {
	return func(o *restOpts) {
		if o.header == nil {
			o.header = map[string]string{}
		}
		o.header[k] = v
	}
}

func noVersion(o *restOpts) { o.noVer = true }

// do sends one request: body nil means none; a value is sent as JSON with
// Content-Type application/a2a+json unless an option sets another.
func (rt restTarget) do(t *testing.T, method, agent, path string, body any, opts ...func(*restOpts)) restResp {
	t.Helper()
	resp := rt.open(t, method, agent, path, body, opts...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return restResp{status: resp.StatusCode, header: resp.Header, raw: string(b)}
}

func (rt restTarget) open(t *testing.T, method, agent, path string, body any, opts ...func(*restOpts)) *http.Response {
	t.Helper()
	var o restOpts
	for _, f := range opts {
		f(&o)
	}
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, rt.url(agent, path), rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	if !o.noVer {
		req.Header.Set("A2A-Version", V10)
	}
	for k, v := range o.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, req.URL, err)
	}
	return resp
}

// events reads an SSE answer to its end; each data line is a bare
// StreamResponse (no JSON-RPC envelope).
func (rt restTarget) events(t *testing.T, method, agent, path string, body any, opts ...func(*restOpts)) (restResp, []sseEvent) {
	t.Helper()
	resp := rt.open(t, method, agent, path, body, append(opts, restHeader("Accept", "text/event-stream"))...)
	defer resp.Body.Close()
	var raw strings.Builder
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(io.TeeReader(resp.Body, &raw))
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	flush := func() {
		if len(data) > 0 {
			cur.data = strings.Join(data, "\n")
			out = append(out, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			flush()
		case field == "data":
			data = append(data, value)
		case field == "event":
			cur.event = value
		case field == "id":
			cur.id = value
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: read the stream: %v", path, err)
	}
	flush()
	return restResp{status: resp.StatusCode, header: resp.Header, raw: raw.String()}, out
}

// msg is a v1.0 SendMessageRequest; blocking nil leaves the configuration
// out.
func restMsg(text, taskID, contextID string, blocking *bool) map[string]any {
	return target{ver: V10}.msg(text, taskID, contextID, blocking)
}

// ok fails unless the answer is HTTP 200 in application/a2a+json.
func (r restResp) ok(t *testing.T) gjson.Result {
	t.Helper()
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/a2a+json") {
		t.Fatalf("want HTTP 200 application/a2a+json, got %s", r)
	}
	return r.body()
}

// mustRESTError fails unless the answer is the binding's error object with
// the HTTP status, google.rpc status name and ErrorInfo reason.
func mustRESTError(t *testing.T, r restResp, status int, statusName, reason string) gjson.Result {
	t.Helper()
	e := r.body().Get("error")
	if r.status != status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/a2a+json") || e.Get("code").Int() != int64(status) ||
		e.Get("status").String() != statusName || e.Get("message").String() == "" {
		t.Fatalf("want HTTP %d %s, got %s", status, statusName, r)
	}
	d := e.Get("details").Array()
	if len(d) != 1 || d[0].Get("@type").String() != "type.googleapis.com/google.rpc.ErrorInfo" || d[0].Get("reason").String() != reason ||
		d[0].Get("domain").String() != "a2a-protocol.org" {
		t.Fatalf("error details (want reason %s): %s", reason, e.Raw)
	}
	return e
}

func v1Kind(t *testing.T, r gjson.Result) (string, gjson.Result) {
	t.Helper()
	return target{ver: V10}.kindOf(t, r)
}

func v1State(t *testing.T, obj gjson.Result) string {
	t.Helper()
	return target{ver: V10}.state(t, obj)
}

func v1Text(parts gjson.Result) string { return target{ver: V10}.text(parts) }

func testRESTCard(t *testing.T, rt restTarget) {
	tg := target{srv: rt.srv, mount: MountREST, ver: V10}
	resp, card := getCard(t, tg, AgentSlow, map[string]string{"A2A-Version": V10})
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" || resp.Header.Get("Vary") != "" {
		t.Errorf("card headers: %v", resp.Header)
	}
	ifaces := card.Get("supportedInterfaces").Array()
	if len(ifaces) != 1 || card.Get("url").Exists() {
		t.Fatalf("card interfaces: %s", card.Raw)
	}
	expectJSON(t, ifaces[0], map[string]string{"url": rt.url(AgentSlow, ""), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": ""})
	// A header-less card request gets the same v1.0 card (no compat layer).
	if _, legacy := getCard(t, tg, AgentSlow, nil); legacy.Raw != card.Raw {
		t.Errorf("header-less card: %s", legacy.Raw)
	}
}

func testRESTEcho(t *testing.T, rt restTarget) {
	r := rt.do(t, http.MethodPost, AgentEcho, "/message:send", restMsg("hello", "", "", ptr(true)))
	k, m := v1Kind(t, r.ok(t))
	if k != "message" || v1Text(m.Get("parts")) != "echo: hello" || m.Get("role").String() != "ROLE_AGENT" || m.Get("parts.0.mediaType").String() != "text/plain" {
		t.Errorf("echo: %s", r.raw)
	}
	// A client-chosen contextId is kept.
	r = rt.do(t, http.MethodPost, AgentEcho, "/message:send", restMsg("again", "", "ctx-rest-client", ptr(true)))
	if _, m := v1Kind(t, r.ok(t)); m.Get("contextId").String() != "ctx-rest-client" {
		t.Errorf("contextId: %s", r.raw)
	}
}

func testRESTContentType(t *testing.T, rt restTarget) {
	// application/json is taken as well as application/a2a+json; the
	// answer is application/a2a+json either way.
	r := rt.do(t, http.MethodPost, AgentEcho, "/message:send", restMsg("ct", "", "", ptr(true)), restHeader("Content-Type", "application/json"))
	r.ok(t)
	// Anything else: 400, reason CONTENT_TYPE_NOT_SUPPORTED, before the
	// body is read.
	r = rt.do(t, http.MethodPost, AgentEcho, "/message:send", []byte("not json"), restHeader("Content-Type", "text/plain"))
	e := mustRESTError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")
	if !strings.Contains(e.Get("message").String(), "Content-Type") {
		t.Errorf("message: %s", e.Raw)
	}
	// Malformed JSON: 400 INVALID_PARAMS.
	r = rt.do(t, http.MethodPost, AgentEcho, "/message:send", []byte("{"))
	mustRESTError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
}

func testRESTVersion(t *testing.T, rt restTarget) {
	// No A2A-Version means 0.3, which this mount does not speak.
	r := rt.do(t, http.MethodPost, AgentEcho, "/message:send", restMsg("v", "", "", ptr(true)), noVersion)
	e := mustRESTError(t, r, http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
	if !strings.Contains(e.Get("message").String(), "'0.3' is not supported") {
		t.Errorf("message: %s", e.Raw)
	}
	for _, v := range []string{"0.3", "2.0"} {
		r = rt.do(t, http.MethodGet, AgentEcho, "/tasks/x", nil, restHeader("A2A-Version", v))
		mustRESTError(t, r, http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
	}
}

func testRESTBlocking(t *testing.T, rt restTarget) {
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=3 delay=20ms", "", "", ptr(true))).ok(t))
	if v1State(t, task) != "completed" || (target{ver: V10}).artifactText(task) != "chunk 1/3\nchunk 2/3\nchunk 3/3\n" ||
		v1Text(task.Get("status.message.parts")) != "done after 3 chunks" {
		t.Fatalf("blocking task: %s", task.Raw)
	}
	id := task.Get("id").String()
	// GET /tasks/{id}: the bare Task; historyLength in the query.
	got := rt.do(t, http.MethodGet, AgentSlow, "/tasks/"+id, nil).ok(t)
	if got.Get("id").String() != id || got.Get("task").Exists() || len(got.Get("history").Array()) != 3 {
		t.Errorf("get: %s", got.Raw)
	}
	got = rt.do(t, http.MethodGet, AgentSlow, "/tasks/"+id+"?historyLength=1", nil).ok(t)
	if len(got.Get("history").Array()) != 1 {
		t.Errorf("historyLength=1: %s", got.Get("history").Raw)
	}
}

func testRESTNonBlocking(t *testing.T, rt restTarget) {
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=2 delay=50ms", "", "", ptr(false))).ok(t))
	if v1State(t, task) != "submitted" {
		t.Fatalf("returnImmediately: %s", task.Raw)
	}
	rt.waitState(t, AgentSlow, task.Get("id").String(), "completed")
}

// waitState reads a task until it is in state.
func (rt restTarget) waitState(t *testing.T, agent, id, state string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := rt.do(t, http.MethodGet, agent, "/tasks/"+id, nil).ok(t)
		if v1State(t, got) == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %s: %s", state, got.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testRESTStreamTask(t *testing.T, rt restTarget) {
	resp, evs := rt.events(t, http.MethodPost, AgentSlow, "/message:stream", restMsg("chunks=3 delay=20ms", "", "", nil))
	if resp.status != http.StatusOK || resp.header.Get("Content-Type") != "text/event-stream" || resp.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("stream: %s", resp)
	}
	var kinds []string
	for _, e := range evs {
		if e.event != "" || e.id != "" {
			t.Errorf("SSE framing: event %q id %q", e.event, e.id)
		}
		j := e.json()
		if j.Get("jsonrpc").Exists() || j.Get("result").Exists() {
			t.Fatalf("a JSON-RPC envelope in an HTTP+JSON stream: %s", e.data)
		}
		k, _ := v1Kind(t, j)
		kinds = append(kinds, k)
	}
	want := []string{"task", "status-update", "artifact-update", "artifact-update", "artifact-update", "status-update"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if _, last := v1Kind(t, evs[len(evs)-1].json()); v1State(t, last) != "completed" || last.Get("final").Exists() {
		t.Errorf("last event: %s", evs[len(evs)-1].data)
	}
}

func testRESTStreamMessage(t *testing.T, rt restTarget) {
	_, evs := rt.events(t, http.MethodPost, AgentEcho, "/message:stream", restMsg("streamed", "", "", nil))
	if len(evs) != 1 {
		t.Fatalf("events: %v", evs)
	}
	if k, m := v1Kind(t, evs[0].json()); k != "message" || v1Text(m.Get("parts")) != "echo: streamed" {
		t.Errorf("message stream: %s", evs[0].data)
	}
}

func testRESTFailed(t *testing.T, rt restTarget) {
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentFail, "/message:send", restMsg("fail", "", "", ptr(true))).ok(t))
	if v1State(t, task) != "failed" || v1Text(task.Get("status.message.parts")) != FailReason {
		t.Errorf("failed: %s", task.Raw)
	}
}

func testRESTInputRequired(t *testing.T, rt restTarget) {
	send := func(body any) restResp { return rt.do(t, http.MethodPost, AgentAsk, "/message:send", body) }
	task := target{ver: V10}.mustTask(t, send(restMsg("start", "", "", ptr(true))).ok(t))
	if v1State(t, task) != "input-required" || v1Text(task.Get("status.message.parts")) != AskQuestion {
		t.Fatalf("ask: %s", task.Raw)
	}
	id, ctx := task.Get("id").String(), task.Get("contextId").String()
	mustRESTError(t, send(restMsg("Ada", id, "other-context", ptr(true))), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	done := target{ver: V10}.mustTask(t, send(restMsg("Ada", id, ctx, ptr(true))).ok(t))
	if v1State(t, done) != "completed" || (target{ver: V10}).artifactText(done) != "Hello, Ada!" {
		t.Fatalf("follow-up: %s", done.Raw)
	}
	// A follow-up to a finished task: 400 UNSUPPORTED_OPERATION (JSON-RPC
	// -32004).
	mustRESTError(t, send(restMsg("again", id, ctx, ptr(true))), http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

func testRESTCancel(t *testing.T, rt restTarget) {
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=100 delay=100ms", "", "", ptr(false))).ok(t))
	id := task.Get("id").String()
	// With an empty body, and with {}: both are taken.
	got := rt.do(t, http.MethodPost, AgentSlow, "/tasks/"+id+":cancel", nil).ok(t)
	if v1State(t, got) != "canceled" || got.Get("id").String() != id || got.Get("task").Exists() {
		t.Fatalf("cancel: %s", got.Raw)
	}
	if again := rt.do(t, http.MethodPost, AgentSlow, "/tasks/"+id+":cancel", map[string]any{}).ok(t); v1State(t, again) != "canceled" {
		t.Errorf("cancel again: %s", again.Raw)
	}
	done := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=1 delay=1ms", "", "", ptr(true))).ok(t))
	r := rt.do(t, http.MethodPost, AgentSlow, "/tasks/"+done.Get("id").String()+":cancel", map[string]any{})
	mustRESTError(t, r, http.StatusBadRequest, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
}

func testRESTUnknownTask(t *testing.T, rt restTarget) {
	mustRESTError(t, rt.do(t, http.MethodGet, AgentSlow, "/tasks/no-such-task", nil), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	mustRESTError(t, rt.do(t, http.MethodPost, AgentSlow, "/tasks/no-such-task:cancel", map[string]any{}), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	mustRESTError(t, rt.do(t, http.MethodPost, AgentAsk, "/message:send", restMsg("hi", "no-such-task", "", ptr(true))), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	// Before the first event of a stream, the error is a plain JSON answer
	// with the HTTP status, not SSE.
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/message:stream", restMsg("x", "no-such-task", "", nil)},
		{http.MethodPost, "/tasks/no-such-task:subscribe", map[string]any{}},
		{http.MethodGet, "/tasks/no-such-task:subscribe", nil},
	} {
		resp, evs := rt.events(t, c.method, AgentAsk, c.path, c.body)
		if len(evs) != 0 {
			t.Errorf("%s %s: events %v", c.method, c.path, evs)
		}
		mustRESTError(t, resp, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	}
}

func testRESTSubscribe(t *testing.T, rt restTarget) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		// Slow enough to be running when the subscription opens.
		task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=4 delay=200ms", "", "", ptr(false))).ok(t))
		id := task.Get("id").String()
		var body any
		if method == http.MethodPost {
			body = map[string]any{}
		}
		resp, evs := rt.events(t, method, AgentSlow, "/tasks/"+id+":subscribe", body)
		if resp.status != http.StatusOK || len(evs) < 2 {
			t.Fatalf("%s subscribe: %s", method, resp)
		}
		// The first event is the task as it stands; the stream ends at the
		// terminal state.
		if k, first := v1Kind(t, evs[0].json()); k != "task" || first.Get("id").String() != id {
			t.Errorf("%s subscribe, first event: %s", method, evs[0].data)
		}
		if _, last := v1Kind(t, evs[len(evs)-1].json()); v1State(t, last) != "completed" {
			t.Errorf("%s subscribe, last event: %s", method, evs[len(evs)-1].data)
		}
	}
	// A finished task cannot be subscribed to.
	done := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=1 delay=1ms", "", "", ptr(true))).ok(t))
	resp, _ := rt.events(t, http.MethodPost, AgentSlow, "/tasks/"+done.Get("id").String()+":subscribe", map[string]any{})
	mustRESTError(t, resp, http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

func testRESTBearer(t *testing.T, rt restTarget) {
	for name, opts := range map[string][]func(*restOpts){
		"no token":    nil,
		"wrong token": {restHeader("Authorization", "Bearer nope")},
	} {
		r := rt.do(t, http.MethodPost, AgentSecure, "/message:send", restMsg("secret", "", "", ptr(true)), opts...)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") || r.body().Get("error").String() != "missing or invalid bearer token" {
			t.Errorf("%s: %s", name, r)
		}
	}
	r := rt.do(t, http.MethodPost, AgentSecure, "/message:send", restMsg("secret", "", "", ptr(true)), restHeader("Authorization", "Bearer "+rt.srv.Token))
	if _, m := v1Kind(t, r.ok(t)); v1Text(m.Get("parts")) != "echo: secret" {
		t.Errorf("with token: %s", r.raw)
	}
}

func testRESTListTasks(t *testing.T, rt restTarget) {
	ctxID := "rest-list-" + uuid.NewString()
	var ids []string
	for _, text := range []string{"chunks=1 delay=1ms", "chunks=1 delay=1ms"} {
		task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg(text, "", ctxID, ptr(true))).ok(t))
		ids = append(ids, task.Get("id").String())
		time.Sleep(5 * time.Millisecond)
	}
	ask := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/message:send", restMsg("chunks=100 delay=100ms", "", ctxID, ptr(false))).ok(t))
	defer rt.do(t, http.MethodPost, AgentSlow, "/tasks/"+ask.Get("id").String()+":cancel", map[string]any{})
	rt.waitState(t, AgentSlow, ask.Get("id").String(), "working")
	list := func(q url.Values) gjson.Result {
		q.Set("contextId", ctxID)
		return rt.do(t, http.MethodGet, AgentSlow, "/tasks?"+q.Encode(), nil).ok(t)
	}
	page := list(url.Values{"pageSize": {"1"}, "status": {"TASK_STATE_COMPLETED"}})
	tasks := page.Get("tasks").Array()
	if len(tasks) != 1 || tasks[0].Get("id").String() != ids[1] || page.Get("totalSize").Int() != 2 || page.Get("nextPageToken").String() == "" {
		t.Fatalf("first page of completed tasks (want %s): %s", ids[1], page.Raw)
	}
	page = list(url.Values{"pageSize": {"1"}, "status": {"TASK_STATE_COMPLETED"}, "pageToken": {page.Get("nextPageToken").String()}})
	if tasks := page.Get("tasks").Array(); len(tasks) != 1 || tasks[0].Get("id").String() != ids[0] || page.Get("nextPageToken").String() != "" {
		t.Errorf("second page (want %s): %s", ids[0], page.Raw)
	}
	// Without a filter on the state: the three tasks; the running one by
	// its state name, or its number.
	if page = list(url.Values{"historyLength": {"0"}}); page.Get("totalSize").Int() != 3 || len(page.Get("tasks.0.history").Array()) != 0 {
		t.Errorf("all tasks, no history: %s", page.Raw)
	}
	for _, st := range []string{"TASK_STATE_WORKING", "2"} {
		if page = list(url.Values{"status": {st}}); page.Get("totalSize").Int() != 1 || page.Get("tasks.0.id").String() != ask.Get("id").String() {
			t.Errorf("status=%s: %s", st, page.Raw)
		}
	}
	if page = list(url.Values{"includeArtifacts": {"true"}, "status": {"TASK_STATE_COMPLETED"}}); len(page.Get("tasks.0.artifacts").Array()) != 1 {
		t.Errorf("includeArtifacts: %s", page.Raw)
	}
	mustRESTError(t, rt.do(t, http.MethodGet, AgentSlow, "/tasks?pageSize=0", nil), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
	mustRESTError(t, rt.do(t, http.MethodGet, AgentSlow, "/tasks?status=NO_SUCH_STATE", nil), http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_PARAMS")
}

func testRESTTenant(t *testing.T, rt restTarget) {
	// /{tenant}/… scopes the task store: a task made under a tenant is
	// found under it only.
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentSlow, "/acme/message:send", restMsg("chunks=1 delay=1ms", "", "", ptr(true))).ok(t))
	id := task.Get("id").String()
	if got := rt.do(t, http.MethodGet, AgentSlow, "/acme/tasks/"+id, nil).ok(t); got.Get("id").String() != id {
		t.Errorf("under the tenant: %s", got.Raw)
	}
	for _, path := range []string{"/tasks/" + id, "/other/tasks/" + id} {
		mustRESTError(t, rt.do(t, http.MethodGet, AgentSlow, path, nil), http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	}
	if page := rt.do(t, http.MethodGet, AgentSlow, "/acme/tasks?contextId="+task.Get("contextId").String(), nil).ok(t); page.Get("totalSize").Int() != 1 {
		t.Errorf("list under the tenant: %s", page.Raw)
	}
}

func testRESTParts(t *testing.T, rt restTarget) {
	content := []byte("a,b\n1,2\n")
	sum := sha256.Sum256(content)
	m := restMsg("look at these", "", "", ptr(true))
	parts := m["message"].(map[string]any)["parts"].([]any)
	m["message"].(map[string]any)["parts"] = append(parts,
		map[string]any{"raw": base64.StdEncoding.EncodeToString(content), "filename": "t.csv", "mediaType": "text/csv"},
		map[string]any{"data": map[string]any{"k": []int{1, 2}}},
		map[string]any{"url": "https://x.invalid/y.pdf", "filename": "y.pdf", "mediaType": "application/pdf"})
	_, msg := v1Kind(t, rt.do(t, http.MethodPost, AgentParts, "/message:send", m).ok(t))
	want := strings.Join([]string{
		PartLine(1, "text", "", "", `size=13 text="look at these"`),
		PartLine(2, "raw", "t.csv", "text/csv", "size=8 sha256="+hex.EncodeToString(sum[:])),
		PartLine(3, "data", "", "", `json={"k":[1,2]}`),
		PartLine(4, "url", "y.pdf", "application/pdf", `url="https://x.invalid/y.pdf"`),
	}, "\n")
	if got := v1Text(msg.Get("parts")); got != want {
		t.Errorf("parts agent:\n got %s\nwant %s", got, want)
	}
}

func testRESTFiles(t *testing.T, rt restTarget) {
	task := target{ver: V10}.mustTask(t, rt.do(t, http.MethodPost, AgentFiles, "/message:send", restMsg("go", "", "", ptr(true))).ok(t))
	if v1State(t, task) != "completed" || v1Text(task.Get("status.message.parts")) != FilesStatus {
		t.Fatalf("files task: %s", task.Raw)
	}
	parts := task.Get("artifacts.0.parts").Array()
	if len(parts) != 5 || task.Get("artifacts.0.name").String() != "files" {
		t.Fatalf("files artifact: %s", task.Get("artifacts").Raw)
	}
	expectJSON(t, parts[0], map[string]string{"text": FilesIntro})
	expectJSON(t, parts[1], map[string]string{"raw": base64.StdEncoding.EncodeToString([]byte(FilesText)), "filename": "hello.txt", "mediaType": "text/plain"})
	expectJSON(t, parts[2], map[string]string{"raw": FilesPNG, "filename": "pixel.png", "mediaType": "image/png"})
	expectJSON(t, parts[3], map[string]string{"url": FilesURL, "filename": "report.pdf", "mediaType": "application/pdf"})
	if parts[4].Get("data").Raw != FilesData || parts[4].Get("mediaType").String() != "application/json" {
		t.Errorf("data part: %s", parts[4].Raw)
	}
	_, m := v1Kind(t, rt.do(t, http.MethodPost, AgentFiles, "/message:send", restMsg("as a message", "", "", ptr(true))).ok(t))
	if len(m.Get("parts").Array()) != 5 || m.Get("parts.2.filename").String() != "pixel.png" {
		t.Errorf("files message: %s", m.Raw)
	}
}

func testRESTUnknownRoute(t *testing.T, rt restTarget) {
	// Routes the binding does not have: Express's own 404 (or, for a known
	// path, a method it does not route), an HTML page, no A2A error.
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/no/such/route"},
		{http.MethodPut, "/tasks/x"},
		{http.MethodGet, "/message:send"},
	} {
		r := rt.do(t, c.method, AgentEcho, c.path, nil)
		if r.status != http.StatusNotFound || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s %s: %s", c.method, c.path, r)
		}
	}
}
