package agentbuildertest

// message/stream and tasks/resubscribe over SSE, as the newest Kibana
// serves them (elastic/kibana, agent_builder/server/utils/a2a/:
// kibana_a2a_adapter.ts, a2a_sse_stream.ts, kibana_agent_executor.ts):
//
//   - Headers: text/event-stream, Content-Encoding identity, no-cache,
//     nosniff, X-Accel-Buffering no (routes/utils.ts getSSEResponseHeaders).
//   - Frames "id: <ms>\ndata: <JSON-RPC response>\n\n"; ": keep-alive\n\n"
//     every 10 s whatever else is sent; an error the SDK throws inside the
//     stream (no messageId, unknown task) is one "event: error" frame with
//     a JSON-RPC error, still HTTP 200.
//   - The executor publishes a Task (working) first, then translates the
//     run's events: tool call → status-update working "Calling tool X...",
//     tool progress → its message, tool result → "Tool X completed",
//     reasoning → its text, message chunks → artifact-update (artifactId =
//     the message id, append false then true, lastChunk false), message
//     complete → an empty artifact-update with append and lastChunk true,
//     round complete → status-update completed, final. A failure is a final
//     status-update failed "Error: <reason>"; a prompt (HITL) is a final
//     status-update input-required with a text and a data part
//     (buildInputRequiredFromPrompt). Open artifacts are closed before a
//     final frame.
//   - tasks/resubscribe: the SDK loads the task from the task store (only
//     non-blocking runs are there), sends it as one frame, then looks for
//     the task's event bus, which only lives in the handler of the request
//     that started it (one handler per request), so the stream ends after
//     that frame, running task or not. An unknown task is an error frame
//     -32001.
//   - Faults: the first frame goes out at once, so a proxy that gives up
//     later cannot answer 502 any more: proxy_cut_after drops the
//     connection mid-stream (the chunked body ends without its last
//     chunk). idle_close_after drops it only after that long with nothing
//     sent; keep-alives count. The run goes on and is stored either way,
//     unless AbortOnDisconnect.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

func (s *Sim) streamRequest(w http.ResponseWriter, r *http.Request, space string, agent *Agent, key *Key, id json.RawMessage, method string, raw json.RawMessage) {
	if method == "tasks/resubscribe" {
		s.resubscribe(w, r, space, id, raw)
		return
	}
	s.messageStream(w, r, space, agent, key, id, raw)
}

// sseWriter writes SSE frames and flushes each one.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      json.RawMessage
	now     func() time.Time
	onWrite func()
}

func (s *Sim) startSSE(w http.ResponseWriter, id json.RawMessage) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Content-Encoding", "identity")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	e := &sseWriter{w: w, rc: http.NewResponseController(w), id: id, now: s.now}
	e.rc.Flush()
	return e
}

func (e *sseWriter) write(frame string) error {
	if _, err := io.WriteString(e.w, frame); err != nil {
		return err
	}
	if err := e.rc.Flush(); err != nil {
		return err
	}
	if e.onWrite != nil {
		e.onWrite()
	}
	return nil
}

func (e *sseWriter) result(v any) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.id, "result": v})
	return e.write(fmt.Sprintf("id: %d\ndata: %s\n\n", e.now().UnixMilli(), b))
}

func (e *sseWriter) error(code int, msg string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.id, "error": map[string]any{"code": code, "message": msg}})
	return e.write(fmt.Sprintf("id: %d\nevent: error\ndata: %s\n\n", e.now().UnixMilli(), b))
}

func (e *sseWriter) keepAlive() error { return e.write(": keep-alive\n\n") }

func (s *Sim) messageStream(w http.ResponseWriter, r *http.Request, space string, agent *Agent, key *Key, id json.RawMessage, raw json.RawMessage) {
	faults := s.Faults()
	var proxyCut <-chan time.Time
	if faults.ProxyCutAfter > 0 {
		t := time.NewTimer(faults.ProxyCutAfter)
		defer t.Stop()
		proxyCut = t.C
	}
	var p sendParams
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || p.Message == nil {
		s.rpcError(w, r, id, -32602, "Invalid method parameters.")
		return
	}
	sse := s.startSSE(w, id)
	if p.Message.MessageID == "" {
		s.logf("POST %s -> stream error -32602", r.URL.Path)
		sse.error(-32602, "message.messageId is required for streaming.")
		return
	}
	if p.Message.TaskID != "" {
		if msg := s.terminalTaskMessage(space, p.Message.TaskID); msg != "" {
			sse.error(-32600, msg)
		} else {
			sse.error(-32001, "Task not found: "+p.Message.TaskID)
		}
		s.logf("POST %s -> stream error (taskId %s)", r.URL.Path, p.Message.TaskID)
		return
	}
	input, contextID := p.input()
	// blocking:false streams run on Task Manager under the taskId, so
	// tasks/get finds them too.
	rn := s.launch(space, agent, key, contextID, input, p.nonBlocking() && s.opts.nonBlockingTasks(), false)
	s.logf("POST %s -> 200 stream, task %s (context %s)", r.URL.Path, rn.taskID, contextID)

	var idleC <-chan time.Time
	if faults.IdleCloseAfter > 0 {
		idle := time.NewTimer(faults.IdleCloseAfter)
		defer idle.Stop()
		idleC = idle.C
		sse.onWrite = func() { idle.Reset(faults.IdleCloseAfter) }
	}
	keep := time.NewTicker(s.opts.streamKeepAlive())
	defer keep.Stop()

	tr := &streamTranslator{taskID: rn.taskID, contextID: contextID, now: s.now, seen: map[string]bool{}}
	first := map[string]any{
		"kind": "task", "id": rn.taskID, "contextId": contextID,
		"status":  map[string]any{"state": "working", "timestamp": isoMillis(s.now())},
		"history": []any{}, "artifacts": []any{},
	}
	if sse.result(first) != nil {
		s.disconnected(rn)
		return
	}
	next := 0
	for {
		s.mu.Lock()
		evs := append([]runEvent(nil), rn.events[next:]...)
		next = len(rn.events)
		changed := rn.changed
		s.mu.Unlock()
		for _, ev := range evs {
			frames, final := tr.frames(ev)
			for _, f := range frames {
				if sse.result(f) != nil {
					s.logf("POST %s: stream client went away (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
					s.disconnected(rn)
					return
				}
			}
			if final {
				s.logf("POST %s: stream ended (context %s)", r.URL.Path, contextID)
				return
			}
		}
		select {
		case <-changed:
		case <-keep.C:
			if sse.keepAlive() != nil {
				s.disconnected(rn)
				return
			}
		case <-proxyCut:
			s.logf("POST %s: proxy cut the stream (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
			s.disconnected(rn)
			dropConnection(w)
			return
		case <-idleC:
			s.logf("POST %s: stream closed after idle (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
			s.disconnected(rn)
			dropConnection(w)
			return
		case <-r.Context().Done():
			s.logf("POST %s: stream client went away (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
			s.disconnected(rn)
			return
		case <-s.runCtx.Done():
			dropConnection(w)
			return
		}
	}
}

func (s *Sim) resubscribe(w http.ResponseWriter, r *http.Request, space string, id json.RawMessage, raw json.RawMessage) {
	var p struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &p) != nil || p.ID == "" {
		s.rpcError(w, r, id, -32602, "Invalid method parameters.")
		return
	}
	var rn *run
	if s.opts.nonBlockingTasks() {
		rn = s.findTask(space, p.ID)
	}
	sse := s.startSSE(w, id)
	if rn == nil {
		s.logf("POST %s -> resubscribe: task %s not found", r.URL.Path, p.ID)
		sse.error(-32001, "Task not found: "+p.ID)
		return
	}
	s.logf("POST %s -> resubscribe: task %s, one frame", r.URL.Path, p.ID)
	sse.result(s.taskJSON(rn))
}

// streamTranslator is the executor's translateAgentBuilderEvent.
type streamTranslator struct {
	taskID, contextID string
	now               func() time.Time
	seen              map[string]bool
	open              []string
}

func (t *streamTranslator) status(state string, final bool, parts ...map[string]any) map[string]any {
	st := map[string]any{"state": state, "timestamp": isoMillis(t.now())}
	if len(parts) > 0 {
		st["message"] = agentMessage(t.taskID, t.contextID, parts...)
	}
	return map[string]any{"kind": "status-update", "taskId": t.taskID, "contextId": t.contextID, "status": st, "final": final}
}

func (t *streamTranslator) artifact(artifactID string, appendTo, last bool, parts ...map[string]any) map[string]any {
	if parts == nil {
		parts = []map[string]any{}
	}
	return map[string]any{
		"kind": "artifact-update", "taskId": t.taskID, "contextId": t.contextID,
		"append": appendTo, "lastChunk": last,
		"artifact": map[string]any{"artifactId": artifactID, "parts": parts},
	}
}

// closeOpen closes the artifacts that got chunks but no last chunk.
func (t *streamTranslator) closeOpen() []map[string]any {
	var out []map[string]any
	for _, a := range t.open {
		out = append(out, t.artifact(a, true, true))
	}
	t.open = nil
	return out
}

func (t *streamTranslator) dropOpen(id string) {
	for i, a := range t.open {
		if a == id {
			t.open = append(t.open[:i], t.open[i+1:]...)
			return
		}
	}
}

func (t *streamTranslator) frames(ev runEvent) (frames []map[string]any, final bool) {
	switch ev.kind {
	case evChunk:
		appendTo := t.seen[ev.messageID]
		if !appendTo {
			t.seen[ev.messageID] = true
			t.open = append(t.open, ev.messageID)
		}
		return []map[string]any{t.artifact(ev.messageID, appendTo, false, textPart(ev.text))}, false
	case evMessageComplete:
		t.dropOpen(ev.messageID)
		if t.seen[ev.messageID] {
			return []map[string]any{t.artifact(ev.messageID, true, true)}, false
		}
		t.seen[ev.messageID] = true
		return []map[string]any{t.artifact(ev.messageID, false, true, textPart(ev.text))}, false
	case evToolCall:
		return []map[string]any{t.status("working", false, textPart("Calling tool "+ev.tool+"..."))}, false
	case evToolProgress, evReasoning:
		return []map[string]any{t.status("working", false, textPart(ev.text))}, false
	case evToolResult:
		return []map[string]any{t.status("working", false, textPart("Tool "+ev.tool+" completed"))}, false
	case evPrompt:
		data := map[string]any{"type": "confirmation", "id": newUUID(), "title": "Confirmation required"}
		return append(t.closeOpen(), t.status("input-required", true, textPart(ev.text), map[string]any{"kind": "data", "data": data})), true
	case evRoundComplete:
		return append(t.closeOpen(), t.status("completed", true)), true
	case evFailed:
		return append(t.closeOpen(), t.status("failed", true, textPart("Error: "+ev.text))), true
	}
	return nil, false
}
