package interoptest

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// These tests characterise what the third-party servers actually put on the
// wire, scenario by scenario, in every protocol version each mount speaks.
// docs/interop-wire.md summarises them; when a server changes behaviour,
// this file and that table change together.

func TestWireGo(t *testing.T) {
	t.Parallel()
	srv := StartGo(t)
	runWire(t, srv)
}

func TestWireJS(t *testing.T) {
	t.Parallel()
	srv := StartJS(t)
	runWire(t, srv)
}

func runWire(t *testing.T, srv *Server) {
	for _, m := range srv.Mounts {
		if m.Binding != BindingJSONRPC {
			continue // wire_rest_test.go
		}
		for _, v := range m.Versions {
			tg := target{srv: srv, mount: m.Name, ver: v}
			t.Run(tg.String(), func(t *testing.T) {
				t.Run("card", func(t *testing.T) { testCard(t, tg) })
				t.Run("echo_message", func(t *testing.T) { testEcho(t, tg) })
				t.Run("content_type", func(t *testing.T) { testContentType(t, tg) })
				t.Run("blocking_task", func(t *testing.T) { testBlocking(t, tg) })
				t.Run("non_blocking_task", func(t *testing.T) { testNonBlocking(t, tg) })
				t.Run("blocking_default", func(t *testing.T) { testBlockingDefault(t, tg) })
				t.Run("stream_task", func(t *testing.T) { testStreamTask(t, tg) })
				t.Run("stream_message", func(t *testing.T) { testStreamMessage(t, tg) })
				t.Run("failed_task", func(t *testing.T) { testFailed(t, tg) })
				t.Run("input_required", func(t *testing.T) { testInputRequired(t, tg) })
				t.Run("cancel", func(t *testing.T) { testCancel(t, tg) })
				t.Run("unknown_task", func(t *testing.T) { testUnknownTask(t, tg) })
				t.Run("stream_errors", func(t *testing.T) { testStreamErrors(t, tg) })
				t.Run("bearer", func(t *testing.T) { testBearer(t, tg) })
				t.Run("version_mismatch", func(t *testing.T) { testVersionMismatch(t, tg) })
				t.Run("list_tasks", func(t *testing.T) { testListTasks(t, tg) })
			})
		}
	}
}

func getCard(t *testing.T, tg target, agent string, header map[string]string) (*http.Response, gjson.Result) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, tg.srv.CardURL(tg.mount, agent), nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("card: HTTP %d: %s", resp.StatusCode, b.String())
	}
	if !gjson.Valid(b.String()) {
		t.Fatalf("card is not JSON: %q", b.String())
	}
	return resp, gjson.Parse(b.String())
}

func testCard(t *testing.T, tg target) {
	// A client of version v fetches the card the way it sends requests:
	// with A2A-Version: 1.0 for v1.0, with no header for v0.3.
	hdr := map[string]string{}
	if tg.ver == V10 {
		hdr["A2A-Version"] = V10
	}
	resp, card := getCard(t, tg, AgentSlow, hdr)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("card Content-Type %q", ct)
	}
	if card.Get("name").String() != AgentSlow || !card.Get("capabilities.streaming").Bool() {
		t.Errorf("card name/capabilities: %s", card.Raw)
	}
	url := tg.url(AgentSlow)
	switch {
	case tg.isGo():
		// Pure v0.3 card: url + preferredTransport + protocolVersion "0.3.0",
		// no supportedInterfaces; CORS open; no caching headers.
		expectJSON(t, card, map[string]string{"url": url, "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0"})
		if card.Get("supportedInterfaces").Exists() {
			t.Errorf("a2a-go card has supportedInterfaces: %s", card.Raw)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("ETag") != "" {
			t.Errorf("a2a-go card headers: %v", resp.Header)
		}
		// The header makes no difference to a2a-go.
		_, again := getCard(t, tg, AgentSlow, map[string]string{"A2A-Version": V10})
		if again.Raw != card.Raw {
			t.Errorf("a2a-go card changed with A2A-Version: 1.0: %s", again.Raw)
		}
	case tg.ver == V03:
		// a2a-js legacy card (no A2A-Version header): v0.3 top-level
		// fields with protocolVersion "0.3" (not "0.3.0") PLUS the v1.0
		// supportedInterfaces array, i.e. a hybrid.
		expectJSON(t, card, map[string]string{"url": url, "preferredTransport": "JSONRPC", "protocolVersion": "0.3"})
		wantIfaces := mountVersions(tg)
		if got := ifaceVersions(card); !slices.Equal(got, wantIfaces) {
			t.Errorf("hybrid card supportedInterfaces versions %v, want %v: %s", got, wantIfaces, card.Raw)
		}
		if resp.Header.Get("Vary") != "A2A-Version" || !strings.HasPrefix(resp.Header.Get("ETag"), `W/"`) ||
			resp.Header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("a2a-js card caching headers: %v", resp.Header)
		}
	default:
		// a2a-js v1.0 card: no url/protocolVersion/preferredTransport.
		for _, k := range []string{"url", "protocolVersion", "preferredTransport"} {
			if card.Get(k).Exists() {
				t.Errorf("v1.0 card has v0.3 field %s: %s", k, card.Raw)
			}
		}
		if got, want := ifaceVersions(card), mountVersions(tg); !slices.Equal(got, want) {
			t.Errorf("supportedInterfaces versions %v, want %v", got, want)
		}
		for _, i := range card.Get("supportedInterfaces").Array() {
			expectJSON(t, i, map[string]string{"url": url, "protocolBinding": "JSONRPC", "tenant": ""})
		}
		// Vary: A2A-Version only where the compat layer is on.
		if got, want := resp.Header.Get("Vary"), map[bool]string{true: "", false: "A2A-Version"}[tg.mount == MountV1]; got != want {
			t.Errorf("Vary %q, want %q", got, want)
		}
	}
	// What a v1.0-only mount sends to a header-less (v0.3) card request:
	// the v1.0 card, unchanged (no compat layer to translate it).
	if !tg.isGo() && tg.mount == MountV1 {
		_, legacy := getCard(t, tg, AgentSlow, nil)
		if legacy.Get("url").Exists() || !legacy.Get("supportedInterfaces").Exists() {
			t.Errorf("v1-only mount, header-less card request: %s", legacy.Raw)
		}
	}
}

func mountVersions(tg target) []string {
	m, _ := tg.srv.Mount(tg.mount)
	return m.Versions
}

func ifaceVersions(card gjson.Result) []string {
	var out []string
	for _, i := range card.Get("supportedInterfaces").Array() {
		out = append(out, i.Get("protocolVersion").String())
	}
	return out
}

func expectJSON(t *testing.T, obj gjson.Result, want map[string]string) {
	t.Helper()
	for path, v := range want {
		if got := obj.Get(path); !got.Exists() || got.String() != v {
			t.Errorf("%s = %q, want %q in %s", path, got.String(), v, obj.Raw)
		}
	}
}

func testEcho(t *testing.T, tg target) {
	r := tg.call(t, AgentEcho, "send", tg.msg("hello", "", "", ptr(true)))
	k, m := tg.kindOf(t, mustResult(t, r))
	if k != "message" {
		t.Fatalf("echo answered a %s: %s", k, r.raw)
	}
	if got := tg.text(m.Get("parts")); got != "echo: hello" {
		t.Errorf("echo text %q", got)
	}
	if m.Get("role").String() != tg.agentRole() || m.Get("messageId").String() == "" || m.Get("contextId").String() == "" {
		t.Errorf("echo message fields: %s", m.Raw)
	}
	if m.Get("taskId").Exists() {
		t.Errorf("a Message reply carries a taskId: %s", m.Raw)
	}
	if tg.ver == V10 && m.Get("parts.0.mediaType").String() != "text/plain" {
		t.Errorf("v1.0 part has no mediaType: %s", m.Raw)
	}
	// A client-chosen contextId is kept.
	r = tg.call(t, AgentEcho, "send", tg.msg("again", "", "ctx-chosen-by-client", ptr(true)))
	if _, m := tg.kindOf(t, mustResult(t, r)); m.Get("contextId").String() != "ctx-chosen-by-client" {
		t.Errorf("client contextId not kept: %s", m.Raw)
	}
}

func testContentType(t *testing.T, tg target) {
	r := tg.call(t, AgentEcho, "send", tg.msg("ct", "", "", ptr(true)))
	ct := r.header.Get("Content-Type")
	errResp := tg.call(t, AgentEcho, "get", map[string]any{"id": "no-such-task"})
	if tg.isGo() {
		// a2a-go never sets Content-Type on unary replies; net/http sniffs
		// the JSON as text.
		if ct != "text/plain; charset=utf-8" || errResp.header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("a2a-go Content-Type %q / error %q", ct, errResp.header.Get("Content-Type"))
		}
		// It ignores the request Content-Type altogether.
		r = tg.call(t, AgentEcho, "send", tg.msg("ct", "", "", ptr(true)), withContentType("text/plain"))
		mustResult(t, r)
		return
	}
	if ct != "application/json; charset=utf-8" || errResp.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("a2a-js Content-Type %q / error %q", ct, errResp.header.Get("Content-Type"))
	}
	// a2a-js refuses a request whose Content-Type is not application/json,
	// with HTTP 200 and a JSON-RPC error whose id is null.
	r = tg.call(t, AgentEcho, "send", tg.msg("ct", "", "", ptr(true)), withContentType("text/plain"))
	e := mustError(t, r, -32005)
	if r.status != http.StatusOK || r.body().Get("id").Type != gjson.Null || !strings.Contains(e.Get("message").String(), "Content-Type") {
		t.Errorf("a2a-js wrong Content-Type: %s", r)
	}
}

func testBlocking(t *testing.T, tg target) {
	r := tg.call(t, AgentSlow, "send", tg.msg("chunks=3 delay=20ms", "", "", ptr(true)))
	task := tg.mustTask(t, mustResult(t, r))
	if st := tg.state(t, task); st != "completed" {
		t.Fatalf("blocking send: state %s: %s", st, task.Raw)
	}
	if task.Get("id").String() == "" || task.Get("contextId").String() == "" {
		t.Errorf("task without ids: %s", task.Raw)
	}
	// The appended chunks arrive as one artifact with one part per chunk.
	arts := task.Get("artifacts").Array()
	if len(arts) != 1 || len(arts[0].Get("parts").Array()) != 3 || arts[0].Get("name").String() != "slow-output" {
		t.Errorf("artifacts: %s", task.Get("artifacts").Raw)
	}
	if got := tg.artifactText(task); got != "chunk 1/3\nchunk 2/3\nchunk 3/3\n" {
		t.Errorf("artifact text %q", got)
	}
	if got := tg.text(task.Get("status.message.parts")); got != "done after 3 chunks" {
		t.Errorf("status message %q", got)
	}
	if !task.Get("status.timestamp").Exists() {
		t.Errorf("no status timestamp: %s", task.Raw)
	}
	// tasks/get returns the same task, bare (not wrapped) in both versions.
	got := mustResult(t, tg.call(t, AgentSlow, "get", map[string]any{"id": task.Get("id").String()}))
	if got.Get("id").String() != task.Get("id").String() || tg.state(t, got) != "completed" {
		t.Errorf("get: %s", got.Raw)
	}
	if tg.ver == V03 && got.Get("kind").String() != "task" {
		t.Errorf("v0.3 get result kind: %s", got.Raw)
	}
	if tg.ver == V10 && got.Get("task").Exists() {
		t.Errorf("v1.0 GetTask result is wrapped: %s", got.Raw)
	}
	// History starts with the user message. a2a-go moves each replaced
	// status message into history (so "working", not the final "done");
	// a2a-js appends every status message as it arrives, the current one
	// included.
	hist := got.Get("history").Array()
	if len(hist) == 0 || tg.text(hist[0].Get("parts")) != "chunks=3 delay=20ms" {
		t.Errorf("history: %s", got.Get("history").Raw)
	}
	wantLen := 2
	if !tg.isGo() {
		wantLen = 3
	}
	if len(hist) != wantLen {
		t.Errorf("history has %d messages, want %d: %s", len(hist), wantLen, got.Get("history").Raw)
	}
}

func testNonBlocking(t *testing.T, tg target) {
	r := tg.call(t, AgentSlow, "send", tg.msg("chunks=3 delay=100ms", "", "", ptr(false)))
	task := tg.mustTask(t, mustResult(t, r))
	// a2a-js answers with the executor's first Task event (submitted).
	// a2a-go loads the task from its store when the first event reaches the
	// request, by which time later events may have been applied: submitted
	// or, usually, working.
	st := tg.state(t, task)
	if tg.isGo() && st != "submitted" && st != "working" || !tg.isGo() && st != "submitted" {
		t.Errorf("non-blocking send: state %s: %s", st, task.Raw)
	}
	done := tg.poll(t, AgentSlow, task.Get("id").String(), "completed")
	if got := tg.artifactText(done); got != "chunk 1/3\nchunk 2/3\nchunk 3/3\n" {
		t.Errorf("artifact after polling %q", got)
	}
}

func testBlockingDefault(t *testing.T, tg target) {
	// No configuration at all: every server blocks.
	task := tg.mustTask(t, mustResult(t, tg.call(t, AgentSlow, "send", tg.msg("chunks=2 delay=50ms", "", "", nil))))
	if st := tg.state(t, task); st != "completed" {
		t.Errorf("no configuration: state %s, want completed (blocking)", st)
	}
	// A configuration object without blocking/returnImmediately.
	p := tg.msg("chunks=2 delay=50ms", "", "", nil)
	p["configuration"] = map[string]any{"acceptedOutputModes": []string{"text/plain"}}
	task = tg.mustTask(t, mustResult(t, tg.call(t, AgentSlow, "send", p)))
	st := tg.state(t, task)
	switch {
	case tg.ver == V03 && !tg.isGo():
		// a2a-js compat quirk: a present configuration without
		// `blocking` means returnImmediately = true.
		if st != "submitted" {
			t.Errorf("a2a-js v0.3, configuration without blocking: state %s, want submitted (non-blocking)", st)
		}
	default:
		if st != "completed" {
			t.Errorf("configuration without blocking flag: state %s, want completed", st)
		}
	}
}

func testStreamTask(t *testing.T, tg target) {
	s := tg.stream(t, AgentSlow, "stream", tg.msg("chunks=3 delay=20ms", "", "", nil))
	res := s.results(t)
	if s.header.Get("Cache-Control") != "no-cache" || s.header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("SSE headers: %v", s.header)
	}
	for _, e := range s.events {
		// a2a-go gives every event an `id:` (a UUID); a2a-js none. Neither
		// names events (no `event:` line) on success.
		if tg.isGo() != (e.id != "") || e.event != "" {
			t.Errorf("SSE framing: id %q event %q", e.id, e.event)
		}
	}
	var kinds, states []string
	var chunks []gjson.Result
	taskID := ""
	for _, r := range res {
		k, obj := tg.kindOf(t, r)
		kinds = append(kinds, k)
		id := obj.Get("taskId").String()
		if k == "task" {
			id = obj.Get("id").String()
		}
		if taskID == "" {
			taskID = id
		} else if id != taskID {
			t.Errorf("event for task %s in a stream of %s", id, taskID)
		}
		switch k {
		case "task", "status-update":
			states = append(states, tg.state(t, obj))
		case "artifact-update":
			chunks = append(chunks, obj)
		}
	}
	// a2a-go streams what the executor wrote: it starts with a
	// status-update (submitted); a2a-js always starts with the Task.
	wantKinds := []string{"task", "status-update", "artifact-update", "artifact-update", "artifact-update", "status-update"}
	if tg.isGo() {
		wantKinds = append([]string{"status-update"}, wantKinds[1:]...)
	}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("event kinds %v, want %v", kinds, wantKinds)
	}
	if !slices.Equal(states, []string{"submitted", "working", "completed"}) {
		t.Errorf("states %v", states)
	}
	// Chunks: same artifactId; append false/absent then true; lastChunk only on
	// the last.
	for i, c := range chunks {
		if c.Get("artifact.artifactId").String() != chunks[0].Get("artifact.artifactId").String() {
			t.Errorf("chunk %d has another artifactId", i)
		}
		if c.Get("append").Bool() != (i > 0) || c.Get("lastChunk").Bool() != (i == len(chunks)-1) {
			t.Errorf("chunk %d append=%v lastChunk=%v", i, c.Get("append").Raw, c.Get("lastChunk").Raw)
		}
		if tg.text(c.Get("artifact.parts")) != "chunk "+string(rune('1'+i))+"/3\n" {
			t.Errorf("chunk %d text %q", i, tg.text(c.Get("artifact.parts")))
		}
	}
	// How false flags are written differs: a2a-go omits false; the a2a-js
	// v0.3 layer writes append:false/lastChunk:false; v1.0 omits them.
	if len(chunks) > 0 {
		first := chunks[0]
		writesFalse := tg.ver == V03 && !tg.isGo()
		if first.Get("append").Exists() != writesFalse || first.Get("lastChunk").Exists() != writesFalse {
			t.Errorf("first chunk flags: %s", first.Raw)
		}
	}
	// End of stream: v0.3 marks the last status update final:true (and every
	// earlier one final:false); v1.0 has no final field at all and the stream
	// just ends (EOF).
	_, last := tg.kindOf(t, res[len(res)-1])
	for i, r := range res {
		k, obj := tg.kindOf(t, r)
		if k != "status-update" {
			continue
		}
		if tg.ver == V03 {
			if !obj.Get("final").Exists() || obj.Get("final").Bool() != (i == len(res)-1) {
				t.Errorf("event %d final = %s", i, obj.Get("final").Raw)
			}
		} else if obj.Get("final").Exists() {
			t.Errorf("v1.0 status update has final: %s", obj.Raw)
		}
	}
	if tg.state(t, last) != "completed" {
		t.Errorf("last event: %s", last.Raw)
	}
}

func testStreamMessage(t *testing.T, tg target) {
	s := tg.stream(t, AgentEcho, "stream", tg.msg("streamed", "", "", nil))
	res := s.results(t)
	if len(res) != 1 {
		t.Fatalf("message stream has %d events: %s", len(res), s.raw)
	}
	k, m := tg.kindOf(t, res[0])
	if k != "message" || tg.text(m.Get("parts")) != "echo: streamed" {
		t.Errorf("message stream: %s", res[0].Raw)
	}
}

func testFailed(t *testing.T, tg target) {
	task := tg.mustTask(t, mustResult(t, tg.call(t, AgentFail, "send", tg.msg("please fail", "", "", ptr(true)))))
	if st := tg.state(t, task); st != "failed" {
		t.Fatalf("state %s: %s", st, task.Raw)
	}
	if got := tg.text(task.Get("status.message.parts")); got != FailReason {
		t.Errorf("failure reason %q", got)
	}
	// Streaming: the failed state ends the stream (final:true in v0.3).
	res := tg.stream(t, AgentFail, "stream", tg.msg("please fail", "", "", nil)).results(t)
	_, last := tg.kindOf(t, res[len(res)-1])
	if tg.state(t, last) != "failed" || (tg.ver == V03 && !last.Get("final").Bool()) {
		t.Errorf("last stream event: %s", last.Raw)
	}
}

func testInputRequired(t *testing.T, tg target) {
	task := tg.mustTask(t, mustResult(t, tg.call(t, AgentAsk, "send", tg.msg("start", "", "", ptr(true)))))
	if st := tg.state(t, task); st != "input-required" {
		t.Fatalf("blocking send to ask: state %s: %s", st, task.Raw)
	}
	if got := tg.text(task.Get("status.message.parts")); got != AskQuestion {
		t.Errorf("question %q", got)
	}
	id, ctx := task.Get("id").String(), task.Get("contextId").String()
	// A follow-up whose contextId is not the task's is refused: -32602 on
	// both (the task stays input-required).
	mustError(t, tg.call(t, AgentAsk, "send", tg.msg("Ada", id, "some-other-context", ptr(true))), -32602)
	// The follow-up names the task (and its context); the same task completes.
	done := tg.mustTask(t, mustResult(t, tg.call(t, AgentAsk, "send", tg.msg("Ada", id, ctx, ptr(true)))))
	if done.Get("id").String() != id || done.Get("contextId").String() != ctx || tg.state(t, done) != "completed" {
		t.Fatalf("follow-up: %s", done.Raw)
	}
	if got := tg.artifactText(done); got != "Hello, Ada!" {
		t.Errorf("greeting %q", got)
	}
	// A follow-up to a finished task is refused; the codes differ.
	r := tg.call(t, AgentAsk, "send", tg.msg("again", id, ctx, ptr(true)))
	if tg.isGo() {
		mustError(t, r, -32602) // invalid params: "task in a terminal state"
	} else {
		mustError(t, r, -32004) // unsupported operation: "terminal state (3)"
	}
	// A follow-up with only the taskId works too (context inferred).
	task = tg.mustTask(t, mustResult(t, tg.call(t, AgentAsk, "send", tg.msg("start", "", "", ptr(true)))))
	done = tg.mustTask(t, mustResult(t, tg.call(t, AgentAsk, "send", tg.msg("Grace", task.Get("id").String(), "", ptr(true)))))
	if tg.state(t, done) != "completed" || tg.artifactText(done) != "Hello, Grace!" {
		t.Errorf("follow-up without contextId: %s", done.Raw)
	}

	// Streaming: the stream ends at input-required.
	s := tg.stream(t, AgentAsk, "stream", tg.msg("start", "", "", nil))
	res := s.results(t)
	_, last := tg.kindOf(t, res[len(res)-1])
	if tg.state(t, last) != "input-required" {
		t.Fatalf("stream ended in %s: %s", tg.state(t, last), s.raw)
	}
	// v0.3 final flag on the interrupted state: a2a-go true (the executor
	// sets it; a2a-go ends the execution only on final), a2a-js false (its
	// compat layer sets final only for terminal states) although it closes
	// the stream all the same.
	if tg.ver == V03 && last.Get("final").Bool() != tg.isGo() {
		t.Errorf("v0.3 input-required update final = %s", last.Get("final").Raw)
	}
	sid := last.Get("taskId").String()
	res = tg.stream(t, AgentAsk, "stream", tg.msg("Lin", sid, "", nil)).results(t)
	_, last = tg.kindOf(t, res[len(res)-1])
	if tg.state(t, last) != "completed" {
		t.Errorf("streamed follow-up ended: %s", last.Raw)
	}
	// a2a-js restates the task as the first event of the follow-up stream.
	if k, _ := tg.kindOf(t, res[0]); (k == "task") == tg.isGo() {
		t.Errorf("follow-up stream starts with %s", k)
	}
}

func testCancel(t *testing.T, tg target) {
	task := tg.mustTask(t, mustResult(t, tg.call(t, AgentSlow, "send", tg.msg("chunks=100 delay=100ms", "", "", ptr(false)))))
	id := task.Get("id").String()
	tg.poll(t, AgentSlow, id, "working")
	r := tg.call(t, AgentSlow, "cancel", map[string]any{"id": id})
	got := mustResult(t, r)
	if tg.ver == V03 && got.Get("kind").String() != "task" {
		t.Errorf("cancel result kind: %s", got.Raw)
	}
	if tg.state(t, got) != "canceled" || got.Get("id").String() != id {
		t.Fatalf("cancel: %s", got.Raw)
	}
	time.Sleep(150 * time.Millisecond) // a chunk would have arrived by now
	after := mustResult(t, tg.call(t, AgentSlow, "get", map[string]any{"id": id}))
	if tg.state(t, after) != "canceled" || got.Get("artifacts").Raw != after.Get("artifacts").Raw {
		t.Errorf("after cancel: %s", after.Raw)
	}
	// Canceling again returns the canceled task.
	again := mustResult(t, tg.call(t, AgentSlow, "cancel", map[string]any{"id": id}))
	if tg.state(t, again) != "canceled" {
		t.Errorf("second cancel: %s", again.Raw)
	}
	// A completed task cannot be canceled.
	done := tg.mustTask(t, mustResult(t, tg.call(t, AgentSlow, "send", tg.msg("chunks=1 delay=1ms", "", "", ptr(true)))))
	mustError(t, tg.call(t, AgentSlow, "cancel", map[string]any{"id": done.Get("id").String()}), -32002)
	// An input-required task (no execution running) can.
	ask := tg.mustTask(t, mustResult(t, tg.call(t, AgentAsk, "send", tg.msg("start", "", "", ptr(true)))))
	c := mustResult(t, tg.call(t, AgentAsk, "cancel", map[string]any{"id": ask.Get("id").String()}))
	if tg.state(t, c) != "canceled" {
		t.Errorf("cancel input-required task: %s", c.Raw)
	}
}

func testUnknownTask(t *testing.T, tg target) {
	for _, op := range []string{"get", "cancel"} {
		e := mustError(t, tg.call(t, AgentSlow, op, map[string]any{"id": "no-such-task"}), -32001)
		checkErrorData(t, tg, e, "TASK_NOT_FOUND")
	}
	// A message naming an unknown task.
	e := mustError(t, tg.call(t, AgentAsk, "send", tg.msg("hi", "no-such-task", "", ptr(true))), -32001)
	checkErrorData(t, tg, e, "TASK_NOT_FOUND")
}

// testStreamErrors shows how an error before the first event reaches a
// streaming client: inside the SSE stream, or as a plain JSON reply.
func testStreamErrors(t *testing.T, tg target) {
	for _, c := range []struct {
		op     string
		params any
	}{
		{"stream", tg.msg("x", "no-such-task", "", nil)},
		{"resubscribe", map[string]any{"id": "no-such-task"}},
	} {
		s := tg.stream(t, AgentAsk, c.op, c.params)
		ct := s.header.Get("Content-Type")
		if s.status != http.StatusOK {
			t.Errorf("%s: HTTP %d", c.op, s.status)
		}
		var e gjson.Result
		switch {
		case tg.isGo() || (tg.ver == V03 && c.op == "resubscribe"):
			// An SSE stream holding one error event, then EOF. a2a-go
			// writes a plain data line; a2a-js's v0.3 resubscribe names it
			// `event: error`.
			if !strings.HasPrefix(ct, "text/event-stream") || len(s.events) != 1 {
				t.Fatalf("%s: want one SSE event, got %s: %q", c.op, ct, s.raw)
			}
			wantEvent := ""
			if !tg.isGo() {
				wantEvent = "error"
			}
			if s.events[0].event != wantEvent {
				t.Errorf("%s: SSE event name %q", c.op, s.events[0].event)
			}
			e = s.events[0].json().Get("error")
		default:
			// a2a-js answers a failure before the first event with an
			// ordinary JSON-RPC error body, not SSE.
			if !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("%s: want application/json, got %s: %q", c.op, ct, s.raw)
			}
			e = gjson.Get(s.raw, "error")
			if gjson.Get(s.raw, "id").String() != s.id {
				t.Errorf("%s: id: %s", c.op, s.raw)
			}
		}
		if e.Get("code").Int() != -32001 {
			t.Errorf("%s: error %s", c.op, e.Raw)
		}
	}
}

// checkErrorData asserts the error's data shape: a2a-go {"error": "<text>"};
// a2a-js v1.0 an array holding a google.rpc.ErrorInfo; a2a-js v0.3 none.
func checkErrorData(t *testing.T, tg target, e gjson.Result, reason string) {
	t.Helper()
	d := e.Get("data")
	switch {
	case tg.isGo():
		if !d.IsObject() || d.Get("error").String() == "" {
			t.Errorf("a2a-go error data: %s", e.Raw)
		}
	case tg.ver == V10:
		if !d.IsArray() || d.Get("0.@type").String() != "type.googleapis.com/google.rpc.ErrorInfo" ||
			d.Get("0.reason").String() != reason || d.Get("0.domain").String() != "a2a-protocol.org" {
			t.Errorf("a2a-js v1.0 error data: %s", e.Raw)
		}
	default:
		if d.Exists() {
			t.Errorf("a2a-js v0.3 error has data: %s", e.Raw)
		}
	}
}

func testBearer(t *testing.T, tg target) {
	// The card stays public and declares the scheme.
	hdr := map[string]string{}
	if tg.ver == V10 {
		hdr["A2A-Version"] = V10
	}
	_, card := getCard(t, tg, AgentSecure, hdr)
	switch {
	case tg.ver == V03 && tg.isGo():
		expectJSON(t, card, map[string]string{"securitySchemes.bearer.type": "http", "securitySchemes.bearer.scheme": "bearer", "security.0.bearer": "[]"})
	case tg.ver == V03:
		expectJSON(t, card, map[string]string{"securitySchemes.bearer.type": "http", "securitySchemes.bearer.scheme": "Bearer", "security.0.bearer": "[]"})
	default:
		// a2a-js 1.3.0 serialises the v1.0 card with JSON.stringify of its
		// in-memory protobuf-ts object: the scheme oneof leaks as
		// {"scheme":{"$case":…,"value":…}} instead of the spec's
		// {"httpAuthSecurityScheme":{…}}. securityRequirements is right.
		expectJSON(t, card, map[string]string{
			"securitySchemes.bearer.scheme.$case":        "httpAuthSecurityScheme",
			"securitySchemes.bearer.scheme.value.scheme": "Bearer",
			"securityRequirements.0.schemes.bearer.list": "[]",
		})
	}

	params := tg.msg("secret", "", "", ptr(true))
	for name, opts := range map[string][]reqOpt{
		"no token":    nil,
		"wrong token": {withBearer("not-the-token")},
		"basic":       {withHeader("Authorization", "Basic Zm9vOmJhcg==")},
	} {
		r := tg.call(t, AgentSecure, "send", params, opts...)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%s: %s (WWW-Authenticate %q)", name, r, r.header.Get("WWW-Authenticate"))
		}
		if r.body().Get("jsonrpc").Exists() {
			t.Errorf("%s: the 401 body is JSON-RPC: %s", name, r.raw)
		}
	}
	k, m := tg.kindOf(t, mustResult(t, tg.call(t, AgentSecure, "send", params, withBearer(tg.srv.Token))))
	if k != "message" || tg.text(m.Get("parts")) != "echo: secret" {
		t.Errorf("with token: %s", m.Raw)
	}
	s := tg.stream(t, AgentSecure, "stream", params)
	if s.status != http.StatusUnauthorized {
		t.Errorf("stream without token: HTTP %d", s.status)
	}
}

func testVersionMismatch(t *testing.T, tg target) {
	switch {
	case tg.isGo():
		// a2a-go knows nothing of v1.0: the v1.0 method is unknown and the
		// A2A-Version header is ignored.
		other := target{srv: tg.srv, mount: tg.mount, ver: V10}
		e := mustError(t, other.call(t, AgentEcho, "send", other.msg("hi", "", "", ptr(true))), -32601)
		if e.Get("message").String() != "method not found" {
			t.Errorf("a2a-go -32601 message: %s", e.Raw)
		}
		mustResult(t, tg.call(t, AgentEcho, "send", tg.msg("hi", "", "", ptr(true)), withHeader("A2A-Version", "1.0")))
	case tg.mount == MountV1:
		// A v0.3 client (no header) at a v1.0-only mount: -32009 whatever
		// the method, in the v1.0 error shape.
		old := target{srv: tg.srv, mount: tg.mount, ver: V03}
		r := old.call(t, AgentEcho, "send", old.msg("hi", "", "", ptr(true)))
		e := mustError(t, r, -32009)
		if r.status != http.StatusOK || !strings.Contains(e.Get("message").String(), "'0.3' is not supported") {
			t.Errorf("v0.3 request at v1-only mount: %s", r)
		}
		checkErrorData(t, tg, e, "VERSION_NOT_SUPPORTED")
		// The v1.0 method without the header is treated as 0.3 too.
		r = old.callMethod(t, AgentEcho, "SendMessage", tg.msg("hi", "", "", ptr(true)))
		mustError(t, r, -32009)
	case tg.mount == MountV03:
		// A v1.0 client at a v0.3-only mount: -32009, v1.0 error shape.
		v1 := target{srv: tg.srv, mount: tg.mount, ver: V10}
		r := v1.call(t, AgentEcho, "send", v1.msg("hi", "", "", ptr(true)))
		e := mustError(t, r, -32009)
		if !strings.Contains(e.Get("message").String(), "'1.0' is not supported") {
			t.Errorf("v1.0 request at v0.3-only mount: %s", r)
		}
		checkErrorData(t, v1, e, "VERSION_NOT_SUPPORTED")
	default:
		// The compat mount speaks both; an unknown version is refused and
		// a v0.3 method name under A2A-Version: 1.0 is unknown.
		r := tg.call(t, AgentEcho, "send", tg.msg("hi", "", "", ptr(true)), withHeader("A2A-Version", "2.0"))
		mustError(t, r, -32009)
		if tg.ver == V10 {
			mustError(t, tg.callMethod(t, AgentEcho, "message/send", target{ver: V03}.msg("hi", "", "", ptr(true))), -32601)
		} else {
			mustError(t, tg.callMethod(t, AgentEcho, "SendMessage", target{ver: V10}.msg("hi", "", "", ptr(true))), -32601)
		}
	}
}

// testListTasks: v1.0 ListTasks pages through the tasks of a context,
// newest first, with their history but without artifacts unless asked;
// v0.3 has no task list over JSON-RPC (tasks/list and ListTasks are
// unknown methods).
func testListTasks(t *testing.T, tg target) {
	if tg.ver == V03 {
		for _, m := range []string{"tasks/list", "ListTasks"} {
			mustError(t, tg.callMethod(t, AgentSlow, m, map[string]any{"contextId": "any"}), -32601)
		}
		return
	}
	ctxID := "list-" + uuid.NewString()
	var ids []string
	for range 2 {
		task := tg.mustTask(t, mustResult(t, tg.call(t, AgentSlow, "send", tg.msg("chunks=1 delay=1ms", "", ctxID, ptr(true)))))
		ids = append(ids, task.Get("id").String())
		time.Sleep(5 * time.Millisecond) // timestamps have millisecond precision
	}
	list := func(params map[string]any) gjson.Result {
		params["contextId"] = ctxID
		return mustResult(t, tg.callMethod(t, AgentSlow, "ListTasks", params))
	}
	page := list(map[string]any{"pageSize": 1})
	tasks := page.Get("tasks").Array()
	if len(tasks) != 1 || tasks[0].Get("id").String() != ids[1] || page.Get("totalSize").Int() != 2 ||
		page.Get("pageSize").Int() != 1 || page.Get("nextPageToken").String() == "" {
		t.Fatalf("first page (want the newer task %s): %s", ids[1], page.Raw)
	}
	if len(tasks[0].Get("artifacts").Array()) != 0 {
		t.Errorf("artifacts listed without includeArtifacts: %s", tasks[0].Raw)
	}
	if h := tasks[0].Get("history").Array(); len(h) == 0 || tg.text(h[0].Get("parts")) != "chunks=1 delay=1ms" {
		t.Errorf("history: %s", tasks[0].Get("history").Raw)
	}
	page = list(map[string]any{"pageSize": 1, "pageToken": page.Get("nextPageToken").String()})
	if tasks := page.Get("tasks").Array(); len(tasks) != 1 || tasks[0].Get("id").String() != ids[0] || page.Get("nextPageToken").String() != "" {
		t.Errorf("second page (want the older task %s, last page): %s", ids[0], page.Raw)
	}
	page = list(map[string]any{"includeArtifacts": true, "historyLength": 0})
	if tasks := page.Get("tasks").Array(); len(tasks) != 2 || len(tasks[0].Get("artifacts").Array()) != 1 || len(tasks[0].Get("history").Array()) != 0 {
		t.Errorf("includeArtifacts, historyLength 0: %s", page.Raw)
	}
	mustError(t, tg.callMethod(t, AgentSlow, "ListTasks", map[string]any{"contextId": ctxID, "pageSize": 0}), -32602)
}
