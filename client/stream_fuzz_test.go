package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// fuzzToken is the credential of the fuzzed A2A clients; no error text may
// ever show it.
const fuzzToken = "tok-7Hq2xVb9Lr4Nc8Zs"

// memTransport answers every request with one canned response, without a
// network: {{id}} in the body becomes the request's JSON-RPC id and
// {{auth}} its Authorization header, so that fuzzed bodies can answer the
// request they were sent for, or echo the credential.
type memTransport struct {
	status int
	header http.Header
	body   []byte
	sizes  []byte // read sizes of the body
	broken bool   // the body ends with a broken read instead of EOF

	reqID string // the JSON-RPC id of the last request
	sent  []byte // the body last sent, placeholders filled
}

func (m *memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	body := substitute(m.body, reqBody, req.Header.Get("Authorization"))
	m.reqID, m.sent = gjson.GetBytes(reqBody, "id").String(), body
	r := &chunkReader{data: body, sizes: m.sizes}
	if m.broken {
		r.err = errors.New("read: connection reset by peer")
	}
	return &http.Response{StatusCode: m.status, Status: http.StatusText(m.status), Header: m.header.Clone(),
		Body: io.NopCloser(r), ContentLength: -1, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// substitute fills the placeholders of a fuzzed body.
func substitute(body, reqBody []byte, auth string) []byte {
	body = bytes.ReplaceAll(body, []byte("{{id}}"), []byte(gjson.GetBytes(reqBody, "id").String()))
	return bytes.ReplaceAll(body, []byte("{{auth}}"), []byte(auth))
}

// checkClientError checks what every failure must be: a *Error of a known
// kind whose text is one line of bounded length that never shows the
// credential.
func checkClientError(t *testing.T, err error, secrets ...string) *Error {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v is not a *client.Error", err, err)
	}
	if _, ok := kindNames[ce.Kind]; !ok {
		t.Fatalf("unknown kind %d in %v", ce.Kind, err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") || len([]rune(msg)) > 500 {
		t.Fatalf("error text is not one short line (%d runes): %q", len([]rune(msg)), msg)
	}
	for _, s := range secrets {
		if strings.Contains(msg, s) || strings.Contains(ce.Message, s) {
			t.Fatalf("error text shows the credential %q: %q", s, msg)
		}
	}
	if ce.RetryAfter < 0 || ce.RetryAfter > 24*time.Hour {
		t.Fatalf("RetryAfter %v out of [0, 24h]: %v", ce.RetryAfter, err)
	}
	return ce
}

// checkEvent checks what parseEvent promises of every event.
func checkEvent(t *testing.T, ev StreamEvent) {
	t.Helper()
	switch ev.Kind {
	case "message", "task", "status", "artifact":
	default:
		t.Fatalf("event kind %q", ev.Kind)
	}
	if ev.State != strings.ToLower(ev.State) || strings.Contains(ev.State, "_") {
		t.Fatalf("state %q is not normalised to the v0.3 names", ev.State)
	}
	if strings.HasPrefix(ev.State, "task-state-") {
		t.Fatalf("state %q is a v1.0 name left half translated", ev.State)
	}
}

// FuzzStream feeds an arbitrary event stream to A2A.Stream (SSE reading,
// JSON-RPC envelope, parseEvent, the end-of-stream rule) and checks:
//
//   - it never panics and returns;
//   - the events passed on are those of the reference reader's events, in
//     order, each parseEvent of its JSON-RPC result, and none after one
//     that ends the stream (a message or final:true; a terminal or
//     interrupted state ends it only when the callback says so, since an
//     answer's follow-up restates the question first); results of no
//     known kind are skipped;
//   - every event is of a known kind with its state in the v0.3 names;
//   - the error is nil (an ending event, or the callback said stop),
//     errStreamCut (the body ended, even in the middle of an event), or a
//     *Error of a known kind: KindConnection for a broken read,
//     KindProtocol for an event that is not JSON or is over the cap,
//     KindRPC for an error event; one line, never the credential.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		// a2a-go: a task streamed, then final:true.
		"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"submitted\"},\"final\":false}}\n\n" +
			"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"artifact\":{\"artifactId\":\"a1\",\"parts\":[{\"kind\":\"text\",\"text\":\"chunk 1/2\\n\"}]}}}\n\n" +
			"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"append\":true,\"lastChunk\":true,\"artifact\":{\"artifactId\":\"a1\",\"parts\":[{\"kind\":\"text\",\"text\":\"chunk 2/2\\n\"}]}}}\n\n" +
			"id: 4\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n",
		// a2a-js v1.0: wrapped events, no final flag.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"task\":{\"id\":\"t2\",\"contextId\":\"c2\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"statusUpdate\":{\"taskId\":\"t2\",\"contextId\":\"c2\",\"status\":{\"state\":\"TASK_STATE_INPUT_REQUIRED\",\"message\":{\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"Your name?\"}]}}}}}\n\n",
		// a2a-js v0.3: input-required with final:false, then EOF.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t3\",\"status\":{\"state\":\"input-required\"},\"final\":false}}\n\n",
		// A message reply.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"message\",\"messageId\":\"m\",\"role\":\"agent\",\"parts\":[{\"kind\":\"text\",\"text\":\"Hello\"}]}}\n\n",
		// The simulator's error event and a keep-alive.
		": keep-alive\n\nid: 1764500000000\nevent: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"error\":{\"code\":-32001,\"message\":\"Task not found: t\"}}\n\n",
		// An error event that is not JSON-RPC, echoing the credential.
		"event: error\ndata: {\"message\":\"bad token {{auth}}\"}\n\n",
		// Cut in the middle of an event.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"sta",
		// Another request's id; a proto enum number as the state.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"other\",\"result\":{\"kind\":\"message\"}}\n\n",
		"data: {\"jsonrpc\":\"2.0\",\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":4}}}}\n\n",
	} {
		f.Add([]byte(s), false, uint8(255), false, []byte{})
		f.Add([]byte(s), true, uint8(1), true, []byte{3, 0, 40})
	}
	f.Fuzz(func(t *testing.T, body []byte, v10 bool, stopAt uint8, broken bool, sizes []byte) {
		const max = 2048
		rt := &memTransport{status: 200, header: http.Header{"Content-Type": {"text/event-stream"}}, body: body, sizes: sizes, broken: broken}
		dialect := V03
		if v10 {
			dialect = V10
		}
		c, err := NewA2A(A2AConfig{Endpoint: "http://agent.test/a2a", Dialect: dialect, Credential: fuzzToken,
			HTTPClient: &http.Client{Transport: rt}, MaxResponseBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var got []StreamEvent
		err = c.Stream(ctx, OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1"}, func(ev StreamEvent) bool {
			got = append(got, ev)
			return len(got)-1 != int(stopAt)
		})
		if ctx.Err() != nil {
			t.Fatal("Stream did not return within 10s")
		}

		// The reference: refSSE's events through the JSON-RPC rules.
		want, wantErr := refStream(rt.sent, rt.reqID, max, stopAt)
		if len(got) != len(want) {
			t.Fatalf("%d events passed on, want %d (err %v)\n got %+v\nwant %+v", len(got), len(want), err, got, want)
		}
		for i := range got {
			checkEvent(t, got[i])
			if !sameEvent(got[i], want[i]) {
				t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
		switch wantErr {
		case "nil":
			if err != nil {
				t.Fatalf("got %v, want nil after the ending event", err)
			}
			return
		case "end":
			if !broken {
				if err != errStreamCut {
					t.Fatalf("got %v, want errStreamCut at the end of the body", err)
				}
				return
			}
		}
		ce := checkClientError(t, err, fuzzToken)
		switch {
		case wantErr == "end" && broken:
			if ce.Kind != KindConnection || !MayHaveArrived(err) {
				t.Fatalf("a broken read: got %v, want KindConnection", err)
			}
		case wantErr == "cap", wantErr == "protocol":
			if ce.Kind != KindProtocol {
				t.Fatalf("got %v (%v), want KindProtocol", err, ce.Kind)
			}
		case wantErr == "rpc":
			if ce.Kind != KindRPC {
				t.Fatalf("got %v (%v), want KindRPC", err, ce.Kind)
			}
		}
	})
}

// refStream is what Stream should pass on of a body sent with request id
// reqID, and how it should end: "nil" (an ending event, or the callback
// stopped at stopAt), "end" (the body ended), "cap", "protocol" or "rpc".
func refStream(sent []byte, reqID string, max int, stopAt uint8) ([]StreamEvent, string) {
	events, capped := refSSE(sent, max)
	var want []StreamEvent
	wantErr := "end"
	if capped {
		wantErr = "cap"
	}
events:
	for _, e := range events {
		if strings.TrimSpace(e.data) == "" {
			continue
		}
		switch {
		case !gjson.Valid(e.data):
			wantErr = "protocol"
			break events
		case e.event == "error" && !gjson.Get(e.data, "error").Exists():
			wantErr = "rpc"
			break events
		}
		doc := gjson.Parse(e.data)
		if er := doc.Get("error"); er.Exists() && er.Type != gjson.Null {
			wantErr = "rpc"
			break
		}
		if id := doc.Get("id"); id.Exists() && id.Type != gjson.Null && id.String() != reqID {
			wantErr = "protocol"
			break
		}
		res := doc.Get("result")
		if !res.Exists() {
			wantErr = "protocol"
			break
		}
		ev := parseEvent(res)
		if ev.Kind == "" {
			continue // not a kind the caller knows
		}
		want = append(want, ev)
		if len(want)-1 == int(stopAt) {
			wantErr = "nil"
			break
		}
		if ev.Kind == "message" || ev.Final {
			wantErr = "nil"
			break
		}
	}
	return want, wantErr
}

func sameEvent(a, b StreamEvent) bool {
	if len(a.Artifacts) != len(b.Artifacts) {
		return false
	}
	for i := range a.Artifacts {
		if !reflect.DeepEqual(a.Artifacts[i], b.Artifacts[i]) {
			return false
		}
	}
	a.Artifacts, b.Artifacts = nil, nil
	return a.Kind == b.Kind && a.TaskID == b.TaskID && a.ContextID == b.ContextID && a.MessageID == b.MessageID &&
		a.State == b.State && a.Text == b.Text && reflect.DeepEqual(a.Artifact, b.Artifact) && reflect.DeepEqual(a.Parts, b.Parts) && a.Append == b.Append &&
		a.LastChunk == b.LastChunk && a.Final == b.Final
}

// TestStateNames: v1.0's enum names and numbers, v0.3's names in any case,
// and v1.0 names this client does not know (the prefix dropped, never
// "task-state-…").
func TestStateNames(t *testing.T) {
	for in, want := range map[string]string{
		"TASK_STATE_INPUT_REQUIRED": "input-required",
		"task_state_working":        "working",
		"input-required":            "input-required",
		"CANCELLED":                 "canceled",
		"TASK_STATE_":               "unknown",
		"TASK_STATE_PAUSED_BY_USER": "paused-by-user",
		"task-state-x":              "x",
		"Task-State-Completed":      "completed",
	} {
		if got := normStateName(in); got != want {
			t.Errorf("normStateName(%q) = %q, want %q", in, got, want)
		}
	}
}
