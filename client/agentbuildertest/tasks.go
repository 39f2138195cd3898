package agentbuildertest

// Kibana 9.6+ tasks, as kibana_agent_executor.ts and kibana_task_store.ts
// (elastic/kibana, x-pack/platform/plugins/shared/agent_builder/server/
// utils/a2a/) do them:
//
//   - message/send with configuration.blocking:false schedules the run on
//     Task Manager with executionId = the A2A taskId and answers at once
//     with a Task {kind:"task", id, contextId, status:{state:"working"}}.
//   - tasks/get loads the execution document by that id, checks its space
//     (and nothing else: the document has no owner) and maps its status:
//     scheduled→submitted, running→working, completed→completed (message:
//     the round's reply), failed→failed (message: the error), aborted→
//     canceled. status.timestamp is the document's @timestamp, set when the
//     run was scheduled. The SDK's getTask adds "history": [] unless the
//     request gives historyLength ≥ 0.
//   - Blocking sends run without an execution id of their own, so tasks/get
//     never finds their taskId.
//   - tasks/cancel: the SDK (a2a-js ≥ 0.3.5 DefaultRequestHandler.cancelTask)
//     loads the task; a terminal one is -32002 "Task not cancelable". For a
//     running one it looks for the task's event bus, which only exists in
//     the handler of the request that started it (Kibana builds a handler
//     per request), so the executor's cancelTask ("Task was canceled.") is
//     never called: the SDK writes a canceled copy through
//     KibanaTaskStore.save, a no-op, reloads the unchanged task and answers
//     -32002 "Task not cancelable: <id>". The run goes on and is stored.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Execution statuses (Kibana's ExecutionStatus).
const (
	execScheduled = "scheduled"
	execRunning   = "running"
	execCompleted = "completed"
	execFailed    = "failed"
	execAborted   = "aborted"
)

// Agent Builder events a run emits, as the executor sees them.
const (
	evReasoning       = "reasoning"
	evToolCall        = "tool_call"
	evToolProgress    = "tool_progress"
	evToolResult      = "tool_result"
	evChunk           = "message_chunk"
	evMessageComplete = "message_complete"
	evPrompt          = "prompt_request"
	evRoundComplete   = "round_complete"
	evFailed          = "error"
)

type runEvent struct {
	kind      string
	text      string
	tool      string
	messageID string
}

// run is one agent run: its A2A task, its status and the events it
// emitted so far. Fields after mu-guarded are guarded by Sim.mu.
type run struct {
	taskID, contextID, space string
	// findable: a non-blocking run, scheduled first and found by tasks/get.
	findable bool
	// detached: a blocking:false send (not a stream), the one run that
	// belongs to Task Manager and not to its request.
	detached bool
	// persistInput writes the conversation of a 9.6 run when its execution
	// starts (called with Sim.mu held).
	persistInput func()
	created      time.Time
	done         chan runResult
	aborted      chan struct{}
	stopOnce     sync.Once

	// Sim.mu-guarded:
	status  string // exec* constants
	text    string // the reply (completed) or the failure reason (failed)
	events  []runEvent
	changed chan struct{} // closed and replaced at each new event
	// staleReads is how many tasks/get still read the ended run working
	// (Faults.StaleTaskReads).
	staleReads int
}

func (s *Sim) newRun(space, contextID string, findable bool) *run {
	status := execRunning
	if findable {
		status = execScheduled
	}
	return &run{
		taskID: newUUID(), contextID: contextID, space: space, findable: findable,
		created: s.now(), done: make(chan runResult, 1), aborted: make(chan struct{}),
		status: status, changed: make(chan struct{}),
	}
}

// stop aborts the run: it stores nothing and its task becomes canceled.
func (rn *run) stop() { rn.stopOnce.Do(func() { close(rn.aborted) }) }

// disconnected is called when the connection of a blocking send or a
// stream ends before the answer. With AbortOnDisconnect the run ends with
// it, streams sent blocking:false included (the newest adapter keeps the
// abort subscription of a stream for its whole life); only a detached run
// (a blocking:false send, answered at once) belongs to Task Manager and
// goes on.
func (s *Sim) disconnected(rn *run) {
	if s.opts.abortOnDisconnect() && !rn.detached {
		s.logf("run aborted on disconnect: context %s", rn.contextID)
		rn.stop()
	}
}

// afterDisconnect says, for the log, what becomes of a run whose
// connection ended.
func (s *Sim) afterDisconnect(rn *run) string {
	if s.opts.abortOnDisconnect() && !rn.detached {
		return "the run is aborted"
	}
	return "the run goes on"
}

func (s *Sim) emit(rn *run, ev runEvent) {
	s.mu.Lock()
	s.emitLocked(rn, ev)
	s.mu.Unlock()
}

func (s *Sim) emitLocked(rn *run, ev runEvent) {
	rn.events = append(rn.events, ev)
	close(rn.changed)
	rn.changed = make(chan struct{})
}

// endRunLocked records the end of a run and emits its last event.
func (s *Sim) endRunLocked(rn *run, status, text, prompt string) {
	rn.status, rn.text = status, text
	rn.staleReads = s.faults.StaleTaskReads
	switch {
	case status == execFailed:
		s.emitLocked(rn, runEvent{kind: evFailed, text: text})
	case prompt != "":
		s.emitLocked(rn, runEvent{kind: evPrompt, text: prompt})
	default:
		s.emitLocked(rn, runEvent{kind: evRoundComplete})
	}
}

// waitUntil sleeps until t; false if the run was aborted or the simulator
// closed meanwhile.
func (s *Sim) waitUntil(rn *run, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-rn.aborted:
			return false
		case <-s.runCtx.Done():
			return false
		default:
			return true
		}
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-rn.aborted:
		return false
	case <-s.runCtx.Done():
		return false
	}
}

// play spreads a run's events over runTime: a non-blocking run waits on
// Task Manager first (a tenth of the run, at most 3 s, Task Manager's poll
// interval), then reasoning, each tool's call, progress and result, and
// the answer streamed in chunks over the last step. The caller ends the
// run. It returns false if the run was aborted.
func (s *Sim) play(rn *run, agent *Agent, input string, runTime time.Duration, answer string) bool {
	start := time.Now()
	end := start.Add(runTime)
	if rn.findable {
		if !s.waitUntil(rn, start.Add(min(runTime/10, 3*time.Second))) {
			return false
		}
		s.mu.Lock()
		rn.status = execRunning
		if rn.persistInput != nil {
			rn.persistInput()
		}
		s.mu.Unlock()
	}
	at := time.Now()
	slot := end.Sub(at) / time.Duration(2+3*len(agent.Tools))
	next := func() bool { at = at.Add(slot); return s.waitUntil(rn, at) }
	s.emit(rn, runEvent{kind: evReasoning, text: ReasoningMarker + ": deciding which tools answer “" + input + "”"})
	if !next() {
		return false
	}
	for _, tool := range agent.Tools {
		s.emit(rn, runEvent{kind: evToolCall, tool: tool})
		if !next() {
			return false
		}
		s.emit(rn, runEvent{kind: evToolProgress, tool: tool, text: ProgressMarker + ": selecting the best target for this query"})
		if !next() {
			return false
		}
		s.emit(rn, runEvent{kind: evToolResult, tool: tool})
		if !next() {
			return false
		}
	}
	if answer != "" {
		msgID := newUUID()
		chunks := splitChunks(answer, 32)
		for i, c := range chunks {
			s.emit(rn, runEvent{kind: evChunk, messageID: msgID, text: c})
			if !s.waitUntil(rn, at.Add(slot*time.Duration(i+1)/time.Duration(len(chunks)))) {
				return false
			}
		}
		s.emit(rn, runEvent{kind: evMessageComplete, messageID: msgID, text: answer})
	}
	return s.waitUntil(rn, end)
}

// splitChunks cuts text into at most n pieces on rune boundaries.
func splitChunks(text string, n int) []string {
	size := max(len(text)/n+1, 12)
	var out []string
	for len(text) > 0 {
		i := min(size, len(text))
		for i < len(text) && !utf8.RuneStart(text[i]) {
			i++
		}
		out = append(out, text[:i])
		text = text[i:]
	}
	return out
}

func (p *sendParams) input() (input, contextID string) {
	var texts []string
	for _, part := range p.Message.Parts {
		if part.Kind == "text" {
			texts = append(texts, part.Text)
		}
	}
	contextID = p.Message.ContextID
	if contextID == "" {
		contextID = newUUID()
	}
	return strings.Join(texts, " "), contextID
}

// nonBlocking is Kibana's isBlockingRequest negated: only a literal false.
func (p *sendParams) nonBlocking() bool {
	return p.Configuration != nil && p.Configuration.Blocking != nil && !*p.Configuration.Blocking
}

// isoMillis formats t as JavaScript's Date.toISOString does.
func isoMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func agentMessage(taskID, contextID string, parts ...map[string]any) map[string]any {
	return map[string]any{
		"kind": "message", "role": "agent", "messageId": "msg-" + newUUID(),
		"parts": parts, "taskId": taskID, "contextId": contextID,
	}
}

func textPart(text string) map[string]any { return map[string]any{"kind": "text", "text": text} }

func (s *Sim) sendNonBlocking(w http.ResponseWriter, r *http.Request, space string, agent *Agent, key *Key, id json.RawMessage, contextID, input string) {
	rn := s.launch(space, agent, key, contextID, input, true, true)
	s.logf("POST %s -> 200 task %s working (context %s; the run goes on)", r.URL.Path, rn.taskID, contextID)
	writeJSON(w, r, http.StatusOK, map[string]any{
		"jsonrpc": "2.0", "id": id,
		"result": map[string]any{
			"kind": "task", "id": rn.taskID, "contextId": contextID,
			"status": map[string]any{"state": "working", "timestamp": isoMillis(s.now())},
		},
	}, !s.opts.DisableGzip)
}

// findTask is KibanaTaskStore.load: the execution by id, in this space.
func (s *Sim) findTask(space, taskID string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn := s.tasks[taskID]
	if rn == nil || rn.space != space {
		return nil
	}
	return rn
}

var taskStates = map[string]string{
	execScheduled: "submitted", execRunning: "working", execCompleted: "completed",
	execFailed: "failed", execAborted: "canceled",
}

// taskJSON is KibanaTaskStore's toA2ATask.
func (s *Sim) taskJSON(rn *run) map[string]any {
	s.mu.Lock()
	status, text := rn.status, rn.text
	s.mu.Unlock()
	st := map[string]any{"state": taskStates[status], "timestamp": isoMillis(rn.created)}
	if (status == execCompleted || status == execFailed) && text != "" {
		st["message"] = agentMessage(rn.taskID, rn.contextID, textPart(text))
	}
	return map[string]any{"id": rn.taskID, "contextId": rn.contextID, "kind": "task", "status": st}
}

// terminalTaskMessage is the SDK's answer to a message naming a task that
// has ended; "" when there is no such task.
func (s *Sim) terminalTaskMessage(space, taskID string) string {
	if !s.opts.nonBlockingTasks() {
		return ""
	}
	rn := s.findTask(space, taskID)
	if rn == nil {
		return ""
	}
	s.mu.Lock()
	status := rn.status
	s.mu.Unlock()
	switch status {
	case execCompleted, execFailed, execAborted:
		return fmt.Sprintf("Task %s is in a terminal state (%s) and cannot be modified.", taskID, taskStates[status])
	}
	return ""
}

// taskRequest answers tasks/get and tasks/cancel from the task store.
func (s *Sim) taskRequest(w http.ResponseWriter, r *http.Request, space string, id json.RawMessage, method string, raw json.RawMessage) {
	var p struct {
		ID            string `json:"id"`
		HistoryLength *int   `json:"historyLength"`
	}
	_ = json.Unmarshal(raw, &p)
	rn := s.findTask(space, p.ID)
	if rn == nil {
		s.rpcError(w, r, id, -32001, "Task not found: "+p.ID)
		return
	}
	if method == "tasks/cancel" {
		// See the top of this file: Kibana cannot cancel, the run goes on.
		s.rpcError(w, r, id, -32002, "Task not cancelable: "+p.ID)
		return
	}
	s.counts.looked(rn.contextID, true)
	task := s.taskJSON(rn)
	s.mu.Lock()
	if st := task["status"].(map[string]any); rn.staleReads > 0 && st["state"] != "working" && st["state"] != "submitted" {
		// Read between the final round's write and the execution's.
		rn.staleReads--
		task["status"] = map[string]any{"state": "working", "timestamp": st["timestamp"]}
	}
	s.mu.Unlock()
	if p.HistoryLength == nil || *p.HistoryLength < 0 {
		task["history"] = []any{}
	}
	s.logf("POST %s -> 200 task %s %s", r.URL.Path, p.ID, task["status"].(map[string]any)["state"])
	writeJSON(w, r, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": id, "result": task}, !s.opts.DisableGzip)
}
