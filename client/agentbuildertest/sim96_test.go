package agentbuildertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Kibana 9.6+ features: non-blocking tasks, tasks/get, message/stream.

const otherKey = "b3RoZXI=" // another owner, all spaces

func server96(t *testing.T, mod func(*Options)) *Server {
	t.Helper()
	return testServer(t, func(o *Options) {
		o.Version = V96
		o.Keys = append(o.Keys, Key{APIKey: otherKey, Username: "other"})
		o.Agents = append(o.Agents,
			Agent{ID: "long", Name: "Long", RunTime: time.Second},
			Agent{ID: "tools", Name: "Tools", Tools: []string{"platform.core.search", "platform.core.execute_esql"},
				Reply: "Answer to “{{input}}”: 3 indices, ünïcödé and more text to cut in chunks.", RunTime: 300 * time.Millisecond},
			Agent{ID: "hitl", Name: "HITL", AwaitPrompt: "Delete index logs-old?", RunTime: 50 * time.Millisecond},
		)
		if mod != nil {
			mod(o)
		}
	})
}

func rpc(method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": "q1", "method": method, "params": params}
}

func sendNB(ctxID, text string) map[string]any {
	b := send(ctxID, text)
	b["params"].(map[string]any)["configuration"] = map[string]any{"blocking": false}
	return b
}

func streamBody(ctxID, text string) map[string]any {
	b := send(ctxID, text)
	b["method"] = "message/stream"
	delete(b["params"].(map[string]any), "configuration")
	return b
}

func result(t *testing.T, r resp) map[string]any {
	t.Helper()
	res, ok := r.body["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %d %s", r.status, r.raw)
	}
	return res
}

func rpcErr(r resp) (float64, string) {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

func getTask(t *testing.T, s *Server, path, auth, taskID string) resp {
	t.Helper()
	return call(t, "POST", s.URL+path, auth, rpc("tasks/get", map[string]any{"id": taskID}))
}

func taskState(task map[string]any) string {
	return task["status"].(map[string]any)["state"].(string)
}

func statusText(task map[string]any) string {
	m, _ := task["status"].(map[string]any)["message"].(map[string]any)
	if m == nil {
		return ""
	}
	return m["parts"].([]any)[0].(map[string]any)["text"].(string)
}

func TestNonBlockingSendAndTasksGet(t *testing.T) {
	t.Parallel()
	s := server96(t, nil)
	r := call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, sendNB("c-nb", "hello"))
	task := result(t, r)
	taskID, _ := task["id"].(string)
	if task["kind"] != "task" || taskID == "" || task["contextId"] != "c-nb" || taskState(task) != "working" ||
		task["status"].(map[string]any)["timestamp"] == nil {
		t.Fatalf("non-blocking result %s", r.raw)
	}
	// It answered before the run ended: the run is still going. Until Task
	// Manager picks it up nothing is written; once it runs, the
	// conversation exists (the execution persists the message first) with
	// no round yet.
	if s.ActiveRuns() != 1 {
		t.Errorf("active runs %d, want 1", s.ActiveRuns())
	}
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-nb", key, nil); c.status != 404 {
		t.Errorf("before Task Manager picked it up: %d %s", c.status, c.raw)
	}
	var states []string
	var last map[string]any
	sawRunning := false
	waitFor(t, func() bool {
		g := getTask(t, s, "/api/agent_builder/a2a/long", key, taskID)
		last = result(t, g)
		if st := taskState(last); len(states) == 0 || states[len(states)-1] != st {
			states = append(states, st)
		}
		if taskState(last) == "working" && !sawRunning {
			sawRunning = true
			if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-nb", key, nil); c.status != 200 || len(c.body["rounds"].([]any)) != 0 {
				t.Errorf("while running: %d %s", c.status, c.raw)
			}
		}
		return taskState(last) == "completed"
	})
	order := map[string]int{"submitted": 0, "working": 1, "completed": 2}
	for i, st := range states {
		if _, ok := order[st]; !ok || i > 0 && order[st] <= order[states[i-1]] {
			t.Fatalf("states %v", states)
		}
	}
	if !strings.Contains(strings.Join(states, ","), "working") {
		t.Errorf("never saw working: %v", states)
	}
	if last["id"] != taskID || last["contextId"] != "c-nb" || statusText(last) != "Echo: hello more" {
		t.Errorf("completed task %v", last)
	}
	if h, ok := last["history"].([]any); !ok || len(h) != 0 {
		t.Errorf("history %v, want []", last["history"])
	}
	c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-nb", key, nil)
	if c.status != 200 || len(c.body["rounds"].([]any)) != 1 || s.Runs("c-nb") != 1 {
		t.Errorf("after: %d %s, runs %d", c.status, c.raw, s.Runs("c-nb"))
	}
	// A message naming the ended task is refused as the SDK does.
	b := send("c-nb", "again")
	b["params"].(map[string]any)["message"].(map[string]any)["taskId"] = taskID
	code, msg := rpcErr(call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, b))
	if code != -32600 || msg != "Task "+taskID+" is in a terminal state (completed) and cannot be modified." {
		t.Errorf("taskId of an ended task: %v %q", code, msg)
	}
}

func TestTasksGetFailedUnknownAndBlocking(t *testing.T) {
	t.Parallel()
	s := server96(t, func(o *Options) { o.Faults.FailRuns = 1; o.Faults.FailReason = "model timeout" })
	task := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, sendNB("c-f", "q")))
	id := task["id"].(string)
	var last map[string]any
	waitFor(t, func() bool {
		last = result(t, getTask(t, s, "/api/agent_builder/a2a/echo", key, id))
		return taskState(last) == "failed"
	})
	if statusText(last) != "model timeout" {
		t.Errorf("failed task message %q", statusText(last))
	}
	// The conversation was created at receipt; the failed run never
	// reaches its rounds.
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-f", key, nil); c.status != 200 || len(c.body["rounds"].([]any)) != 0 {
		t.Errorf("a failed run stored a round: %d %s", c.status, c.raw)
	}
	if code, msg := rpcErr(getTask(t, s, "/api/agent_builder/a2a/echo", key, "nope")); code != -32001 || msg != "Task not found: nope" {
		t.Errorf("unknown id: %v %q", code, msg)
	}
	// Blocking sends (blocking true or absent) answer a Message whose
	// taskId tasks/get cannot find.
	for _, blocking := range []any{true, nil} {
		b := send("c-b", "q")
		b["params"].(map[string]any)["configuration"] = map[string]any{"blocking": blocking}
		m := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, b))
		if m["kind"] != "message" {
			t.Fatalf("blocking=%v: %v", blocking, m)
		}
		tid := m["taskId"].(string)
		if code, _ := rpcErr(getTask(t, s, "/api/agent_builder/a2a/echo", key, tid)); code != -32001 {
			t.Errorf("blocking=%v: its taskId was found", blocking)
		}
	}
}

func TestTasksGetIsSpaceScopedNotOwnerScoped(t *testing.T) {
	t.Parallel()
	s := server96(t, nil)
	id := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, sendNB("c-s", "q")))["id"].(string)
	// Another space: not found (KibanaTaskStore checks the space).
	if code, _ := rpcErr(getTask(t, s, "/s/prod/api/agent_builder/a2a/prod-agent", key, id)); code != -32001 {
		t.Error("found from another space")
	}
	// Another owner in the same space: found, as in Kibana, whose execution
	// documents have no owner (the conversation itself stays private).
	if r := getTask(t, s, "/api/agent_builder/a2a/echo", otherKey, id); r.body["result"] == nil {
		t.Errorf("another owner: %s", r.raw)
	}
	// Any agent's URL in the space reaches the task store.
	if r := getTask(t, s, "/api/agent_builder/a2a/slow", key, id); r.body["result"] == nil {
		t.Errorf("through another agent: %s", r.raw)
	}
	waitFor(t, func() bool { return s.ActiveRuns() == 0 })
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-s", otherKey, nil); c.status != 404 {
		t.Errorf("the other owner reads the conversation: %d", c.status)
	}
}

func TestTasksCancelCannotCancel(t *testing.T) {
	t.Parallel()
	s := server96(t, nil)
	id := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, sendNB("c-x", "q")))["id"].(string)
	r := call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, rpc("tasks/cancel", map[string]any{"id": id}))
	if code, msg := rpcErr(r); code != -32002 || msg != "Task not cancelable: "+id {
		t.Errorf("cancel of a running task: %s", r.raw)
	}
	// The run goes on and is stored.
	waitFor(t, func() bool {
		return taskState(result(t, getTask(t, s, "/api/agent_builder/a2a/long", key, id))) == "completed"
	})
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-x", key, nil); c.status != 200 {
		t.Errorf("not stored after cancel: %d", c.status)
	}
	if code, _ := rpcErr(call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, rpc("tasks/cancel", map[string]any{"id": id}))); code != -32002 {
		t.Errorf("cancel of a completed task: %v", code)
	}
	if code, _ := rpcErr(call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, rpc("tasks/cancel", map[string]any{"id": "nope"}))); code != -32001 {
		t.Errorf("cancel of an unknown task: %v", code)
	}
}

func TestNonBlockingTasksFollowTheVersion(t *testing.T) {
	t.Parallel()
	off := false
	for name, mod := range map[string]func(*Options){
		"9.5":          func(o *Options) { o.Version = V95 },
		"9.6 switched": func(o *Options) { o.NonBlockingTasks = &off },
	} {
		s := server96(t, mod)
		m := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, sendNB("c-v", "q")))
		if m["kind"] != "message" || m["parts"].([]any)[0].(map[string]any)["text"] != "Echo: q more" {
			t.Errorf("%s: blocking:false gave %v", name, m)
		}
		if code, _ := rpcErr(getTask(t, s, "/api/agent_builder/a2a/echo", key, m["taskId"].(string))); code != -32001 {
			t.Errorf("%s: tasks/get found a task", name)
		}
	}
}

// --- streams ---

type frame struct {
	id, event, comment string
	data               map[string]any
}

// openStream posts body and returns the response and a frame reader.
func openStream(t *testing.T, url, auth string, body any) (*http.Response, func() (frame, error)) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Authorization", "ApiKey "+auth)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	br := bufio.NewReader(res.Body)
	return res, func() (frame, error) {
		var f frame
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if err == io.EOF && line != "" {
					err = io.ErrUnexpectedEOF
				}
				return f, err
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				return f, nil
			case strings.HasPrefix(line, ": "):
				f.comment = line[2:]
			case strings.HasPrefix(line, "id: "):
				f.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				f.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &f.data); err != nil {
					t.Fatalf("data %q: %v", line, err)
				}
			default:
				t.Fatalf("unexpected line %q", line)
			}
		}
	}
}

// readAll reads frames to the end of the stream; keep-alives are counted
// apart. err is the error that ended the stream (nil for a clean end).
func readAll(t *testing.T, next func() (frame, error)) (frames []frame, keepAlives int, err error) {
	t.Helper()
	for {
		f, err := next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return frames, keepAlives, err
		}
		if f.comment == "keep-alive" && f.data == nil {
			keepAlives++
			continue
		}
		frames = append(frames, f)
	}
}

func frameResult(f frame) map[string]any { r, _ := f.data["result"].(map[string]any); return r }

func TestCardStreamingCapability(t *testing.T) {
	t.Parallel()
	on := true
	for _, tt := range []struct {
		streaming *bool
		want      bool
	}{{nil, false}, {&on, true}} {
		s := server96(t, func(o *Options) { o.Streaming = tt.streaming })
		r := call(t, "GET", s.URL+"/api/agent_builder/a2a/echo.json", key, nil)
		if got := r.body["capabilities"].(map[string]any)["streaming"]; got != tt.want {
			t.Errorf("streaming=%v: card says %v", tt.streaming, got)
		}
	}
	// Off: message/stream and tasks/resubscribe keep -32004 as plain JSON.
	s := server96(t, nil)
	for _, m := range []string{"message/stream", "tasks/resubscribe"} {
		b := streamBody("c-off", "q")
		b["method"] = m
		r := call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, b)
		if code, msg := rpcErr(r); code != -32004 || msg != "Unsupported operation: Method "+m+" requires streaming capability." {
			t.Errorf("%s with streaming off: %s", m, r.raw)
		}
	}
}

func TestStreamFramesInOrder(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) { o.Streaming = &on })
	hres, next := openStream(t, s.URL+"/api/agent_builder/a2a/tools", key, streamBody("c-st", "hi"))
	if hres.StatusCode != 200 || hres.Header.Get("Content-Type") != "text/event-stream" || hres.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("headers %d %v", hres.StatusCode, hres.Header)
	}
	frames, _, err := readAll(t, next)
	if err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	if len(frames) < 4 {
		t.Fatalf("%d frames", len(frames))
	}
	for i, f := range frames {
		if _, err := strconv.ParseInt(f.id, 10, 64); err != nil || f.event != "" || f.data["jsonrpc"] != "2.0" || f.data["id"] != "r1" || frameResult(f) == nil {
			t.Fatalf("frame %d: %+v", i, f)
		}
	}
	first := frameResult(frames[0])
	taskID := first["id"].(string)
	if first["kind"] != "task" || taskState(first) != "working" || first["contextId"] != "c-st" {
		t.Errorf("first frame %v", first)
	}
	var texts []string
	var reply strings.Builder
	artifactID := ""
	chunks, sawLast := 0, false
	for i, f := range frames[1:] {
		r := frameResult(f)
		if r["taskId"] != taskID || r["contextId"] != "c-st" {
			t.Errorf("frame %d: %v", i+1, r)
		}
		switch r["kind"] {
		case "status-update":
			if i+1 < len(frames)-1 {
				if taskState(r) != "working" || r["final"] != false {
					t.Errorf("frame %d before the end: %v", i+1, r)
				}
				texts = append(texts, statusText(r))
			}
		case "artifact-update":
			a := r["artifact"].(map[string]any)
			if artifactID == "" {
				artifactID = a["artifactId"].(string)
			}
			if a["artifactId"] != artifactID || sawLast || r["append"] != (chunks > 0) {
				t.Errorf("artifact frame %d: %v (chunks so far %d)", i+1, r, chunks)
			}
			chunks++
			sawLast = r["lastChunk"] == true
			for _, p := range a["parts"].([]any) {
				reply.WriteString(p.(map[string]any)["text"].(string))
			}
		default:
			t.Errorf("frame %d kind %v", i+1, r["kind"])
		}
	}
	last := frameResult(frames[len(frames)-1])
	if last["kind"] != "status-update" || taskState(last) != "completed" || last["final"] != true {
		t.Errorf("last frame %v", last)
	}
	want := "Answer to “hi more”: 3 indices, ünïcödé and more text to cut in chunks."
	if reply.String() != want || !sawLast || chunks < 3 {
		t.Errorf("reply %q in %d chunks (last %v), want %q", reply.String(), chunks, sawLast, want)
	}
	joined := strings.Join(texts, "\n")
	for _, w := range []string{"Calling tool platform.core.search...", "Tool platform.core.execute_esql completed", ReasoningMarker, ProgressMarker} {
		if !strings.Contains(joined, w) {
			t.Errorf("status texts lack %q:\n%s", w, joined)
		}
	}
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-st", key, nil); c.status != 200 || len(c.body["rounds"].([]any)) != 1 {
		t.Errorf("round after the stream: %d %s", c.status, c.raw)
	}
	if s.Runs("c-st") != 1 {
		t.Errorf("runs %d", s.Runs("c-st"))
	}
	// A blocking stream's task is not in the task store.
	if code, _ := rpcErr(getTask(t, s, "/api/agent_builder/a2a/tools", key, taskID)); code != -32001 {
		t.Error("tasks/get found a blocking stream's task")
	}
}

func TestStreamFailureAndInputRequired(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) {
		o.Streaming = &on
		o.Faults.FailRuns = 1
		o.Faults.FailReason = "model timeout"
	})
	_, next := openStream(t, s.URL+"/api/agent_builder/a2a/echo", key, streamBody("c-sf", "q"))
	frames, _, err := readAll(t, next)
	if err != nil || len(frames) < 2 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	last := frameResult(frames[len(frames)-1])
	if taskState(last) != "failed" || last["final"] != true || statusText(last) != "Error: model timeout" {
		t.Errorf("last frame %v", last)
	}
	for _, f := range frames {
		if frameResult(f)["kind"] == "artifact-update" {
			t.Errorf("a failed run streamed a reply: %v", frameResult(f))
		}
	}

	_, next = openStream(t, s.URL+"/api/agent_builder/a2a/hitl", key, streamBody("c-h", "drop it"))
	frames, _, err = readAll(t, next)
	if err != nil || len(frames) < 2 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	last = frameResult(frames[len(frames)-1])
	parts := last["status"].(map[string]any)["message"].(map[string]any)["parts"].([]any)
	data, _ := parts[1].(map[string]any)["data"].(map[string]any)
	if taskState(last) != "input-required" || last["final"] != true || statusText(last) != "Delete index logs-old?" ||
		parts[1].(map[string]any)["kind"] != "data" || data["type"] != "confirmation" {
		t.Errorf("last frame %v", last)
	}
	c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-h", key, nil)
	if c.status != 200 || c.body["rounds"].([]any)[0].(map[string]any)["status"] != "awaiting_prompt" {
		t.Errorf("HITL round %d %s", c.status, c.raw)
	}
}

func TestStreamErrorsAsFrames(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) { o.Streaming = &on })
	b := streamBody("c-e", "q")
	delete(b["params"].(map[string]any)["message"].(map[string]any), "messageId")
	hres, next := openStream(t, s.URL+"/api/agent_builder/a2a/echo", key, b)
	frames, _, err := readAll(t, next)
	if hres.StatusCode != 200 || err != nil || len(frames) != 1 || frames[0].event != "error" {
		t.Fatalf("%d %v %+v", hres.StatusCode, err, frames)
	}
	if e := frames[0].data["error"].(map[string]any); e["code"] != float64(-32602) || frames[0].data["id"] != "r1" {
		t.Errorf("error frame %v", frames[0].data)
	}
	if s.TotalRuns() != 0 {
		t.Errorf("a refused stream ran")
	}
}

func TestStreamKeepAlives(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) { o.Streaming = &on; o.StreamKeepAlive = 20 * time.Millisecond })
	_, next := openStream(t, s.URL+"/api/agent_builder/a2a/slow", key, streamBody("c-k", "q"))
	frames, keepAlives, err := readAll(t, next)
	if err != nil || keepAlives == 0 || taskState(frameResult(frames[len(frames)-1])) != "completed" {
		t.Errorf("%d keep-alives, %d frames, %v", keepAlives, len(frames), err)
	}
}

func TestStreamProxyCutAndIdleClose(t *testing.T) {
	t.Parallel()
	on := true
	t.Run("proxy cut mid-stream", func(t *testing.T) {
		t.Parallel()
		s := server96(t, func(o *Options) { o.Streaming = &on; o.Faults.ProxyCutAfter = 150 * time.Millisecond })
		hres, next := openStream(t, s.URL+"/api/agent_builder/a2a/long", key, streamBody("c-pc", "q"))
		if hres.StatusCode != 200 {
			t.Fatalf("status %d: the stream had started, a proxy cannot answer 502 any more", hres.StatusCode)
		}
		frames, _, err := readAll(t, next)
		if err == nil || len(frames) == 0 || frameResult(frames[0])["kind"] != "task" {
			t.Fatalf("want a cut after the first frame: %d frames, err %v", len(frames), err)
		}
		for _, f := range frames {
			if frameResult(f)["final"] == true {
				t.Fatal("the stream ended normally")
			}
		}
		waitFor(t, func() bool {
			return call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-pc", key, nil).status == 200
		})
		if s.Runs("c-pc") != 1 {
			t.Errorf("runs %d", s.Runs("c-pc"))
		}
	})
	t.Run("idle close without keep-alives", func(t *testing.T) {
		t.Parallel()
		s := server96(t, func(o *Options) { o.Streaming = &on; o.Faults.IdleCloseAfter = 100 * time.Millisecond })
		// long: reasoning at once, then nothing until the answer at 500 ms.
		_, next := openStream(t, s.URL+"/api/agent_builder/a2a/long", key, streamBody("c-ic", "q"))
		if _, _, err := readAll(t, next); err == nil {
			t.Fatal("the idle stream was not dropped")
		}
		waitFor(t, func() bool {
			return call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-ic", key, nil).status == 200
		})
	})
	t.Run("keep-alives prevent the idle close", func(t *testing.T) {
		t.Parallel()
		s := server96(t, func(o *Options) {
			o.Streaming = &on
			o.Faults.IdleCloseAfter = 300 * time.Millisecond
			o.StreamKeepAlive = 20 * time.Millisecond
		})
		_, next := openStream(t, s.URL+"/api/agent_builder/a2a/long", key, streamBody("c-ka", "q"))
		frames, _, err := readAll(t, next)
		if err != nil || taskState(frameResult(frames[len(frames)-1])) != "completed" {
			t.Errorf("%d frames, %v", len(frames), err)
		}
	})
}

func TestAbortOnDisconnect(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) {
		o.Streaming = &on
		o.Faults.ProxyCutAfter = 150 * time.Millisecond
	})
	cut := func(ctx string, blocking bool) string {
		b := streamBody(ctx, "q")
		b["params"].(map[string]any)["configuration"] = map[string]any{"blocking": blocking}
		_, next := openStream(t, s.URL+"/api/agent_builder/a2a/long", key, b)
		frames, _, err := readAll(t, next)
		if err == nil || len(frames) == 0 {
			t.Fatalf("%s: %d frames, %v", ctx, len(frames), err)
		}
		return frameResult(frames[0])["id"].(string)
	}
	rounds := func(ctx string) int {
		c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-"+ctx, key, nil)
		if c.status != 200 {
			t.Fatalf("%s: %d %s", ctx, c.status, c.raw)
		}
		return len(c.body["rounds"].([]any))
	}
	// A blocking stream dies with its connection: nothing is stored.
	cut("c-ab", true)
	// So does a blocking:false stream: the newest adapter keeps a stream's
	// abort subscription for the stream's whole life; tasks/get then
	// reports it canceled.
	taskID := cut("c-nbs", false)
	// A blocking send cut by the proxy is aborted too.
	if r := call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, send("c-abs", "q")); r.status != 502 {
		t.Fatalf("blocking send: %d", r.status)
	}
	// Only a blocking:false send, answered at once with its Task, belongs
	// to Task Manager and goes on.
	nb := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, sendNB("c-nb", "q")))
	waitFor(t, func() bool { return s.ActiveRuns() == 0 })
	for _, ctx := range []string{"c-ab", "c-nbs", "c-abs"} {
		if n := rounds(ctx); n != 0 {
			t.Errorf("%s: an aborted run was stored (%d rounds)", ctx, n)
		}
	}
	if n := rounds("c-nb"); n != 1 {
		t.Errorf("the non-blocking send was not stored: %d rounds", n)
	}
	if st := taskState(result(t, getTask(t, s, "/api/agent_builder/a2a/long", key, taskID))); st != "canceled" {
		t.Errorf("the aborted stream's task is %s", st)
	}
	if st := taskState(result(t, getTask(t, s, "/api/agent_builder/a2a/long", key, nb["id"].(string)))); st != "completed" {
		t.Errorf("the non-blocking send's task is %s", st)
	}
	for _, ctx := range []string{"c-ab", "c-nbs", "c-abs", "c-nb"} {
		if s.Runs(ctx) != 1 {
			t.Errorf("%s: %d runs", ctx, s.Runs(ctx))
		}
	}
	// Before 9.6 the run goes on after a cut and is stored.
	old := testServer(t, func(o *Options) {
		o.Agents = append(o.Agents, Agent{ID: "long", Name: "Long", RunTime: 300 * time.Millisecond})
		o.Faults.ProxyCutAfter = 100 * time.Millisecond
	})
	if r := call(t, "POST", old.URL+"/api/agent_builder/a2a/long", key, send("c-95", "q")); r.status != 502 {
		t.Fatalf("9.5 blocking send: %d", r.status)
	}
	waitFor(t, func() bool { return old.ActiveRuns() == 0 })
	if c := call(t, "GET", old.URL+"/api/agent_builder/conversations/a2a-c-95", key, nil); c.status != 200 || len(c.body["rounds"].([]any)) != 1 {
		t.Errorf("9.5: the run was not stored after the cut: %d %s", c.status, c.raw)
	}
}

func TestStatusRoute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v              Version
		number, flavor string
	}{{V92, "9.2.4", "traditional"}, {V95, "9.5.1", "traditional"}, {V96, "9.6.0", "traditional"}, {VServerless, "9.7.0", "serverless"}} {
		s := testServer(t, func(o *Options) { o.Version = tc.v })
		for _, path := range []string{"/api/status", "/s/default/api/status"} {
			r := call(t, "GET", s.URL+path, key, nil)
			v, _ := r.body["version"].(map[string]any)
			if r.status != 200 || v["number"] != tc.number || v["build_flavor"] != tc.flavor {
				t.Errorf("%s %s: %d %s", tc.v, path, r.status, r.raw)
			}
		}
		if r := call(t, "GET", s.URL+"/api/status", "", nil); r.status != 401 {
			t.Errorf("%s without a key: %d", tc.v, r.status)
		}
	}
	s := testServer(t, func(o *Options) {
		o.StatusNumber = "9.5.9"
		o.Faults.Statuses = []StatusFault{{Route: RouteStatus, Status: 403, Times: 1}}
	})
	if r := call(t, "GET", s.URL+"/api/status", key, nil); r.status != 403 {
		t.Errorf("injected: %d", r.status)
	}
	if r := call(t, "GET", s.URL+"/api/status", key, nil); r.body["version"].(map[string]any)["number"] != "9.5.9" {
		t.Errorf("status_number: %s", r.raw)
	}
}

func TestResubscribe(t *testing.T) {
	t.Parallel()
	on := true
	s := server96(t, func(o *Options) { o.Streaming = &on })
	id := result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, sendNB("c-r", "q")))["id"].(string)
	// A running task: one frame with its state, then the stream ends (the
	// SDK finds no event bus in this request's handler).
	_, next := openStream(t, s.URL+"/api/agent_builder/a2a/long", key, rpc("tasks/resubscribe", map[string]any{"id": id}))
	frames, _, err := readAll(t, next)
	if err != nil || len(frames) != 1 || frameResult(frames[0])["id"] != id || frameResult(frames[0])["kind"] != "task" {
		t.Fatalf("%v %+v", err, frames)
	}
	if st := taskState(frameResult(frames[0])); st != "submitted" && st != "working" {
		t.Errorf("state %s", st)
	}
	_, next = openStream(t, s.URL+"/api/agent_builder/a2a/long", key, rpc("tasks/resubscribe", map[string]any{"id": "nope"}))
	frames, _, _ = readAll(t, next)
	if len(frames) != 1 || frames[0].event != "error" || frames[0].data["error"].(map[string]any)["code"] != float64(-32001) {
		t.Errorf("unknown task: %+v", frames)
	}
}

func TestLoadOptions96(t *testing.T) {
	t.Parallel()
	o, err := LoadOptions(strings.NewReader("version: '9.6'\nnon_blocking_tasks: false\nstreaming: true\nstream_keep_alive: 2s\nabort_on_disconnect: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o.nonBlockingTasks() || !o.streaming() || o.streamKeepAlive() != 2*time.Second || !o.abortOnDisconnect() {
		t.Errorf("%+v", o)
	}
	if d := (&Options{}); d.nonBlockingTasks() || d.streaming() || d.streamKeepAlive() != 10*time.Second || d.abortOnDisconnect() || d.conversationAtReceipt() {
		t.Error("defaults at 9.5")
	}
	for _, v := range []Version{V96, VServerless} {
		if d := (&Options{Version: v}); !d.nonBlockingTasks() || !d.abortOnDisconnect() || !d.conversationAtReceipt() || !d.paginatedList() {
			t.Errorf("defaults at %s", v)
		}
	}
	if _, err := LoadOptions(strings.NewReader("version: serverless\n")); err != nil {
		t.Errorf("serverless: %v", err)
	}
}

// TestNewestRoundsModel: 9.6 creates the conversation at receipt, titled
// "New conversation" until the run's title lands, and keeps no round for
// a failed run; Serverless (Kibana's newest events_to_rounds) keeps an
// interrupted run as a round with an empty response and its interruption.
func TestNewestRoundsModel(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V96, VServerless} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			s := testServer(t, func(o *Options) {
				o.Version = v
				o.Agents = append(o.Agents, Agent{ID: "long", Name: "Long", RunTime: 300 * time.Millisecond},
					Agent{ID: "bad", Name: "Bad", Fail: "model overloaded", RunTime: 50 * time.Millisecond})
				o.Faults.ProxyCutAfter = 100 * time.Millisecond
			})
			result(t, call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, sendNB("c-title", "what is the title")))
			var c resp
			waitFor(t, func() bool {
				c = call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-title", key, nil)
				return c.status == 200
			})
			if c.body["title"] != "New conversation" || len(c.body["rounds"].([]any)) != 0 {
				t.Errorf("once it runs: %d %s", c.status, c.raw)
			}
			// A blocking send the proxy cuts is aborted; a failing run fails.
			if r := call(t, "POST", s.URL+"/api/agent_builder/a2a/long", key, send("c-cut", "q")); r.status != 502 {
				t.Fatalf("cut: %d", r.status)
			}
			call(t, "POST", s.URL+"/api/agent_builder/a2a/bad", key, send("c-bad", "q"))
			waitFor(t, func() bool { return s.ActiveRuns() == 0 })
			c = call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-title", key, nil)
			if c.body["title"] != "What is the title more" || len(c.body["rounds"].([]any)) != 1 {
				t.Errorf("after: %s", c.raw)
			}
			for ctx, want := range map[string]map[string]any{
				"c-cut": {"type": "aborted"},
				"c-bad": {"type": "failed", "error": map[string]any{"code": "internalError", "message": "model overloaded"}},
			} {
				c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-"+ctx, key, nil)
				rounds := c.body["rounds"].([]any)
				if v == V96 {
					if c.status != 200 || len(rounds) != 0 {
						t.Errorf("%s: %d %s", ctx, c.status, c.raw)
					}
					continue
				}
				if len(rounds) != 1 {
					t.Fatalf("%s: %s", ctx, c.raw)
				}
				r := rounds[0].(map[string]any)
				got, _ := json.Marshal(r["interruption"])
				exp, _ := json.Marshal(want)
				if string(got) != string(exp) || r["status"] != "completed" || r["response"].(map[string]any)["message"] != "" {
					t.Errorf("%s: round %s", ctx, c.raw)
				}
			}
		})
	}
}

// TestStaleUpdatedAt: the onechat-era converter of 9.2 and 9.3 never moves
// updated_at forward on a follow-up round; 9.4 and later do.
func TestStaleUpdatedAt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v     Version
		stale bool
	}{{V92, true}, {V93, true}, {V94, false}, {V96, false}} {
		s := testServer(t, func(o *Options) { o.Version = tc.v })
		call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-up", "one"))
		first := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-up", key, nil).body["updated_at"]
		time.Sleep(5 * time.Millisecond)
		call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-up", "two"))
		c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-up", key, nil)
		if len(c.body["rounds"].([]any)) != 2 || (c.body["updated_at"] == first) != tc.stale {
			t.Errorf("%s: updated_at %v then %v", tc.v, first, c.body["updated_at"])
		}
	}
}

func TestRequestCounts(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	call(t, "GET", s.URL+"/api/status", key, nil)
	call(t, "GET", s.URL+"/api/status", "", nil)
	call(t, "GET", s.URL+"/api/agent_builder/a2a/echo.json", key, nil)
	if s.Requests(RouteStatus) != 2 || s.Requests(RouteCard) != 1 || s.Requests(RouteA2A) != 0 {
		t.Errorf("status %d, card %d, a2a %d", s.Requests(RouteStatus), s.Requests(RouteCard), s.Requests(RouteA2A))
	}
}
