package interoptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// This file is a deliberately dumb A2A client: net/http, JSON and an SSE
// line reader, so the characterisation tests see exactly what the servers
// send, with no SDK in between.

// target is one protocol version on one mount of one server.
type target struct {
	srv   *Server
	mount string
	ver   string
}

func (tg target) isGo() bool { return tg.srv.Impl == goImpl }

func (tg target) String() string {
	impl := "a2a-go"
	if !tg.isGo() {
		impl = "a2a-js/" + tg.mount
	}
	return impl + "/v" + tg.ver
}

func (tg target) url(agent string) string { return tg.srv.URL(tg.mount, agent) }

const goImpl = "a2a-go v0.3.3"

// methods maps an operation to its JSON-RPC method name per version.
var methods = map[string]map[string]string{
	V03: {"send": "message/send", "stream": "message/stream", "get": "tasks/get", "cancel": "tasks/cancel", "resubscribe": "tasks/resubscribe"},
	V10: {"send": "SendMessage", "stream": "SendStreamingMessage", "get": "GetTask", "cancel": "CancelTask", "resubscribe": "SubscribeToTask"},
}

func (tg target) method(op string) string { return methods[tg.ver][op] }

// msg builds send params in the target's dialect. blocking nil leaves the
// configuration out entirely.
func (tg target) msg(text, taskID, contextID string, blocking *bool) map[string]any {
	m := map[string]any{"messageId": uuid.NewString()}
	if tg.ver == V03 {
		m["kind"] = "message"
		m["role"] = "user"
		m["parts"] = []any{map[string]any{"kind": "text", "text": text}}
	} else {
		m["role"] = "ROLE_USER"
		m["parts"] = []any{map[string]any{"text": text}}
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	p := map[string]any{"message": m}
	if blocking != nil {
		if tg.ver == V03 {
			p["configuration"] = map[string]any{"blocking": *blocking}
		} else {
			p["configuration"] = map[string]any{"returnImmediately": !*blocking}
		}
	}
	return p
}

func ptr[T any](v T) *T { return &v }

type reqOpts struct {
	bearer      string
	headers     map[string]string
	contentType string
	rawBody     []byte
}

type reqOpt func(*reqOpts)

func withBearer(tok string) reqOpt { return func(o *reqOpts) { o.bearer = tok } }
func withHeader(k, v string) reqOpt {
	return func(o *reqOpts) {
		if o.headers == nil {
			o.headers = map[string]string{}
		}
		o.headers[k] = v
	}
}
func withContentType(ct string) reqOpt { return func(o *reqOpts) { o.contentType = ct } }

// rpcResp is a non-streaming JSON-RPC exchange.
type rpcResp struct {
	status int
	header http.Header
	raw    string
	id     string
}

func (r rpcResp) body() gjson.Result   { return gjson.Parse(r.raw) }
func (r rpcResp) result() gjson.Result { return r.body().Get("result") }
func (r rpcResp) errCode() int64       { return r.body().Get("error.code").Int() }

func (r rpcResp) String() string {
	return fmt.Sprintf("HTTP %d %s: %s", r.status, r.header.Get("Content-Type"), r.raw)
}

const httpTimeout = 30 * time.Second

func newRequest(t *testing.T, ctx context.Context, tg target, url, method string, params any, opts []reqOpt) (*http.Request, string) {
	t.Helper()
	var o reqOpts
	for _, f := range opts {
		f(&o)
	}
	id := "req-" + uuid.NewString()[:8]
	body := o.rawBody
	if body == nil {
		var err error
		body, err = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ct := "application/json"
	if o.contentType != "" {
		ct = o.contentType
	}
	if ct != "-" {
		req.Header.Set("Content-Type", ct)
	}
	if tg.ver == V10 {
		req.Header.Set("A2A-Version", V10)
	}
	if o.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+o.bearer)
	}
	for k, v := range o.headers {
		req.Header.Set(k, v)
	}
	return req, id
}

// call sends one JSON-RPC request and reads the whole answer.
func (tg target) call(t *testing.T, agent, op string, params any, opts ...reqOpt) rpcResp {
	t.Helper()
	return tg.callMethod(t, agent, tg.method(op), params, opts...)
}

func (tg target) callMethod(t *testing.T, agent, method string, params any, opts ...reqOpt) rpcResp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), httpTimeout)
	defer cancel()
	req, id := newRequest(t, ctx, tg, tg.url(agent), method, params, opts)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, tg.url(agent), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", method, err)
	}
	return rpcResp{status: resp.StatusCode, header: resp.Header, raw: string(b), id: id}
}

// mustResult fails unless the exchange is HTTP 200 with a result echoing
// the request id.
func mustResult(t *testing.T, r rpcResp) gjson.Result {
	t.Helper()
	if r.status != http.StatusOK || !r.result().Exists() {
		t.Fatalf("want a JSON-RPC result, got %s", r)
	}
	if got := r.body().Get("id").String(); got != r.id {
		t.Fatalf("response id %q, want %q", got, r.id)
	}
	return r.result()
}

// mustError fails unless the exchange is a JSON-RPC error with the code.
func mustError(t *testing.T, r rpcResp, code int64) gjson.Result {
	t.Helper()
	if !r.body().Get("error").Exists() || r.errCode() != code {
		t.Fatalf("want JSON-RPC error %d, got %s", code, r)
	}
	if r.body().Get("result").Exists() {
		t.Fatalf("error response also has a result: %s", r)
	}
	return r.body().Get("error")
}

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	id, event string
	data      string
}

func (e sseEvent) json() gjson.Result { return gjson.Parse(e.data) }

// streamResp is a streaming exchange read to EOF.
type streamResp struct {
	status int
	header http.Header
	events []sseEvent
	raw    string // the whole body
	id     string
}

// stream sends a streaming request and reads events until the server closes
// the body. It fails if that takes longer than httpTimeout.
func (tg target) stream(t *testing.T, agent, op string, params any, opts ...reqOpt) streamResp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), httpTimeout)
	defer cancel()
	req, id := newRequest(t, ctx, tg, tg.url(agent), tg.method(op), params, opts)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", tg.method(op), err)
	}
	defer resp.Body.Close()
	var raw strings.Builder
	out := streamResp{status: resp.StatusCode, header: resp.Header, id: id}
	sc := bufio.NewScanner(io.TeeReader(resp.Body, &raw))
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var cur sseEvent
	var data []string
	flush := func() {
		if len(data) > 0 || cur.event != "" {
			cur.data = strings.Join(data, "\n")
			out.events = append(out.events, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, ":"):
			// comment / keep-alive
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				data = append(data, value)
			case "id":
				cur.id = value
			case "event":
				cur.event = value
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: reading the stream: %v (so far: %s)", tg.method(op), err, raw.String())
	}
	flush()
	out.raw = raw.String()
	return out
}

// results returns each event's JSON-RPC result, failing on an error event or
// a mismatched id.
func (s streamResp) results(t *testing.T) []gjson.Result {
	t.Helper()
	if s.status != http.StatusOK || !strings.HasPrefix(s.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("want an SSE stream, got HTTP %d %s: %s", s.status, s.header.Get("Content-Type"), s.raw)
	}
	var out []gjson.Result
	for _, e := range s.events {
		j := e.json()
		if j.Get("error").Exists() {
			t.Fatalf("error event in stream: %s", e.data)
		}
		if got := j.Get("id").String(); got != s.id {
			t.Fatalf("stream event id %q, want %q", got, s.id)
		}
		out = append(out, j.Get("result"))
	}
	if len(out) == 0 {
		t.Fatalf("empty stream: %q", s.raw)
	}
	return out
}

// --- dialect-neutral views of results ---

// kindOf tells a send/stream result apart: "message", "task",
// "status-update" or "artifact-update", with the object itself.
func (tg target) kindOf(t *testing.T, r gjson.Result) (string, gjson.Result) {
	t.Helper()
	if tg.ver == V03 {
		k := r.Get("kind").String()
		if k == "" {
			t.Fatalf("v0.3 result without kind: %s", r.Raw)
		}
		return k, r
	}
	if r.Get("kind").Exists() {
		t.Fatalf("v1.0 result carries a v0.3 kind: %s", r.Raw)
	}
	var found []string
	var kind string
	var obj gjson.Result
	for member, k := range map[string]string{"message": "message", "task": "task", "statusUpdate": "status-update", "artifactUpdate": "artifact-update"} {
		if v := r.Get(member); v.Exists() {
			found = append(found, member)
			kind, obj = k, v
		}
	}
	if len(found) != 1 {
		t.Fatalf("v1.0 result should wrap exactly one of message/task/statusUpdate/artifactUpdate, has %v: %s", found, r.Raw)
	}
	return kind, obj
}

// mustTask unwraps a send result that must be a Task.
func (tg target) mustTask(t *testing.T, r gjson.Result) gjson.Result {
	t.Helper()
	k, obj := tg.kindOf(t, r)
	if k != "task" {
		t.Fatalf("want a task, got %s: %s", k, r.Raw)
	}
	return obj
}

// v1States maps v1.0 enum names to v0.3 state names.
var v1States = map[string]string{
	"TASK_STATE_SUBMITTED":      "submitted",
	"TASK_STATE_WORKING":        "working",
	"TASK_STATE_INPUT_REQUIRED": "input-required",
	"TASK_STATE_AUTH_REQUIRED":  "auth-required",
	"TASK_STATE_COMPLETED":      "completed",
	"TASK_STATE_CANCELED":       "canceled",
	"TASK_STATE_FAILED":         "failed",
	"TASK_STATE_REJECTED":       "rejected",
	"TASK_STATE_UNSPECIFIED":    "unknown",
}

// state returns a task's (or status update's) state in v0.3 spelling,
// failing if the wire spelling does not match the version.
func (tg target) state(t *testing.T, obj gjson.Result) string {
	t.Helper()
	s := obj.Get("status.state").String()
	if tg.ver == V03 {
		if strings.HasPrefix(s, "TASK_STATE_") || s == "" {
			t.Fatalf("v0.3 state %q: %s", s, obj.Raw)
		}
		return s
	}
	v, ok := v1States[s]
	if !ok {
		t.Fatalf("v1.0 state %q is not a TASK_STATE_* name: %s", s, obj.Raw)
	}
	return v
}

// text joins the text parts of a part list.
func (tg target) text(parts gjson.Result) string {
	var b strings.Builder
	for _, p := range parts.Array() {
		if tg.ver == V03 && p.Get("kind").String() != "text" {
			continue
		}
		b.WriteString(p.Get("text").String())
	}
	return b.String()
}

// artifactText joins the text of all parts of all artifacts.
func (tg target) artifactText(task gjson.Result) string {
	var b strings.Builder
	for _, a := range task.Get("artifacts").Array() {
		b.WriteString(tg.text(a.Get("parts")))
	}
	return b.String()
}

// role returns the agent role name in the target's dialect.
func (tg target) agentRole() string {
	if tg.ver == V03 {
		return "agent"
	}
	return "ROLE_AGENT"
}

// poll calls tasks/get until the task reaches one of the states.
func (tg target) poll(t *testing.T, agent, id string, states ...string) gjson.Result {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last gjson.Result
	for time.Now().Before(deadline) {
		last = mustResult(t, tg.call(t, agent, "get", map[string]any{"id": id}))
		st := tg.state(t, last)
		for _, s := range states {
			if st == s {
				return last
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s never reached %v; last: %s", id, states, last.Raw)
	return last
}
