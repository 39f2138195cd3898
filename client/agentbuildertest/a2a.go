package agentbuildertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Markers that the simulator writes into reasoning and tool steps, so tests
// can prove that none of it reaches a client's output.
const (
	ReasoningMarker  = "SIMULATED-REASONING"
	ToolResultMarker = "SIMULATED-TOOL-RESULT"
	ProgressMarker   = "SIMULATED-PROGRESS"
)

// DefaultProxyBody is the page a proxy sends with its 502.
const DefaultProxyBody = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
	"<center><h1>502 Bad Gateway</h1></center>\r\n<p>backend closed connection</p>\r\n</body>\r\n</html>\r\n"

type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type runResult struct {
	text   string
	failed bool
}

func (s *Sim) a2a(w http.ResponseWriter, r *http.Request, space, agentID string, key *Key) {
	if !strings.Contains(strings.ToLower(r.Header.Get("Content-Type")), "application/json") {
		s.boom(w, r, http.StatusBadRequest, "Content-Type must be application/json")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
	if err != nil {
		// The client went away before its request was whole: nothing runs,
		// as in Kibana, whose route reads the body before it starts one.
		s.logf("A2A %s: the request body could not be read (%v): nothing runs", agentID, err)
		return
	}
	if int64(len(body)) > s.opts.MaxBodyBytes {
		s.boom(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Payload content length greater than maximum allowed: %d", s.opts.MaxBodyBytes))
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		s.boom(w, r, http.StatusBadRequest, "[request body]: expected a plain object value, but found [string] instead.")
		return
	}
	agent := s.findAgent(space, agentID)
	if agent == nil {
		s.agentNotFound(w, r, "Internal server error", agentID)
		return
	}
	var env rpcEnvelope
	_ = json.Unmarshal(body, &env)
	id := env.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if env.JSONRPC != "2.0" || env.Method == "" {
		s.rpcError(w, r, id, -32600, "Invalid JSON-RPC Request.")
		return
	}
	switch env.Method {
	case "message/send":
		s.messageSend(w, r, space, agent, key, id, env.Params)
	case "tasks/get", "tasks/cancel":
		var p struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(env.Params, &p) != nil || p.ID == "" {
			s.rpcError(w, r, id, -32602, "Invalid method parameters.")
			return
		}
		if s.opts.nonBlockingTasks() {
			s.taskRequest(w, r, space, id, env.Method, env.Params)
			return
		}
		s.rpcError(w, r, id, -32001, "Task not found: "+p.ID)
	case "message/stream", "tasks/resubscribe":
		if s.opts.streaming() {
			s.streamRequest(w, r, space, agent, key, id, env.Method, env.Params)
			return
		}
		s.rpcError(w, r, id, -32004, fmt.Sprintf("Unsupported operation: Method %s requires streaming capability.", env.Method))
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		s.rpcError(w, r, id, -32003, "Push Notification is not supported")
	case "agent/getAuthenticatedExtendedCard":
		s.rpcError(w, r, id, -32007, "Extended card not configured.")
	default:
		s.rpcError(w, r, id, -32601, "Method not found: "+env.Method)
	}
}

func (s *Sim) rpcError(w http.ResponseWriter, r *http.Request, id json.RawMessage, code int, msg string) {
	s.logf("%s %s -> JSON-RPC error %d %s", r.Method, r.URL.Path, code, msg)
	writeJSON(w, r, http.StatusOK, map[string]any{
		"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg},
	}, false)
}

type sendParams struct {
	Message *struct {
		Kind      string `json:"kind"`
		Role      string `json:"role"`
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		TaskID    string `json:"taskId"`
		Parts     []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"message"`
	Configuration *struct {
		Blocking *bool `json:"blocking"`
	} `json:"configuration"`
}

func (s *Sim) messageSend(w http.ResponseWriter, r *http.Request, space string, agent *Agent, key *Key, id json.RawMessage, raw json.RawMessage) {
	var p sendParams
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil {
		s.rpcError(w, r, id, -32602, "Invalid method parameters.")
		return
	}
	if p.Message == nil {
		s.rpcError(w, r, id, -32602, "message is required.")
		return
	}
	if p.Message.MessageID == "" {
		s.rpcError(w, r, id, -32602, "message.messageId is required.")
		return
	}
	if p.Message.TaskID != "" {
		if msg := s.terminalTaskMessage(space, p.Message.TaskID); msg != "" {
			s.rpcError(w, r, id, -32600, msg)
			return
		}
		s.rpcError(w, r, id, -32001, "Task not found: "+p.Message.TaskID)
		return
	}
	input, contextID := p.input()
	if s.opts.nonBlockingTasks() && p.nonBlocking() {
		s.sendNonBlocking(w, r, space, agent, key, id, contextID, input)
		return
	}
	rn := s.launch(space, agent, key, contextID, input, false, false)
	done := rn.done

	faults := s.Faults()
	var proxyCut, idleClose <-chan time.Time
	if faults.ProxyCutAfter > 0 {
		t := time.NewTimer(faults.ProxyCutAfter)
		defer t.Stop()
		proxyCut = t.C
	}
	if faults.IdleCloseAfter > 0 {
		t := time.NewTimer(faults.IdleCloseAfter)
		defer t.Stop()
		idleClose = t.C
	}
	select {
	case res := <-done:
		reply := map[string]any{
			"jsonrpc": "2.0", "id": id,
			"result": map[string]any{
				"kind": "message", "role": "agent", "messageId": "msg-" + newUUID(),
				"parts":  []map[string]string{{"kind": "text", "text": res.text}},
				"taskId": newUUID(), "contextId": contextID,
			},
		}
		switch {
		case faults.NeverAnswer:
			s.logf("POST %s: run done, never answering (context %s)", r.URL.Path, contextID)
			s.disconnected(rn)
			select {
			case <-r.Context().Done():
			case <-s.runCtx.Done():
				dropConnection(w)
			}
			return
		case faults.ResetMidBody:
			s.logf("POST %s -> 200, connection reset in the middle of the body (context %s)", r.URL.Path, contextID)
			b, _ := json.Marshal(reply)
			resetMidBody(w, b)
			return
		}
		s.logf("POST %s -> 200 message (context %s, failed=%v)", r.URL.Path, contextID, res.failed)
		writeJSON(w, r, http.StatusOK, reply, !s.opts.DisableGzip)
	case <-proxyCut:
		body := faults.ProxyBody
		if body == "" {
			body = DefaultProxyBody
		}
		s.logf("POST %s -> 502 proxy cut (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
		s.disconnected(rn)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, body)
	case <-idleClose:
		s.logf("POST %s -> connection closed after idle (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
		s.disconnected(rn)
		dropConnection(w)
	case <-r.Context().Done():
		s.logf("POST %s: client went away (context %s; %s)", r.URL.Path, contextID, s.afterDisconnect(rn))
		s.disconnected(rn)
	case <-s.runCtx.Done():
		dropConnection(w)
	}
}

// resetMidBody announces the whole body, sends half of it and resets the
// connection.
func resetMidBody(w http.ResponseWriter, body []byte) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body))
	buf.Write(body[:len(body)/2])
	buf.Flush()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // RST, not FIN
	}
	conn.Close()
}

// dropConnection closes the connection without an HTTP response, as a
// socket timeout does.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// launch counts and starts a run that goes on whatever happens to the
// request, as Kibana's blocking executor does in 9.2 to 9.5: it passes no
// abort signal to the agent and stores the round when the run completes
// (AbortOnDisconnect changes that for the newest Kibana). The run emits
// its events as it goes (play, for streams) and ends on rn.done. findable
// marks a run tasks/get finds (a blocking:false send or stream); detached
// marks the one run that belongs to Task Manager rather than to its
// request: a blocking:false send that is not a stream.
func (s *Sim) launch(space string, agent *Agent, key *Key, contextID, input string, findable, detached bool) *run {
	convID := "a2a-" + contextID
	rn := s.newRun(space, contextID, findable)
	rn.detached = detached
	s.mu.Lock()
	if findable {
		s.tasks[rn.taskID] = rn
	}
	s.runs[contextID]++
	s.totalRuns++
	s.active++
	fail := agent.Fail
	if s.failRunsLeft > 0 {
		s.failRunsLeft--
		fail = s.faults.FailReason
		if fail == "" {
			fail = "No complete response received from chat service"
		}
	}
	runTime := agent.RunTime + s.faults.ExtraRunTime
	// An agent with a prompt asks in the first round of a conversation;
	// the answer (the next round) completes, so the HITL round trip can be
	// played through.
	asks := agent.AwaitPrompt != ""
	if c := s.conversations[s.conversationKey(space, convID)]; c != nil && len(c.Rounds) > 0 {
		asks = false
	}
	// The 9.6 execution runner persists the user's message when the
	// execution starts: at once for a run on the request's node, once Task
	// Manager picks it up for a detached one (play calls this then).
	// Rounds are projected from finished executions only, so the document
	// has none until the run completes, and none for ever if it fails.
	rn.persistInput = func() {
		if !s.opts.conversationAtReceipt() || s.conversations[s.conversationKey(space, convID)] != nil {
			return
		}
		ts := s.now().UTC().Format(time.RFC3339Nano)
		s.conversations[s.conversationKey(space, convID)] = &conversation{
			ID: convID, AgentID: agent.ID, Username: key.Username, Space: space,
			Title: placeholderTitle, CreatedAt: ts, UpdatedAt: ts, Rounds: []json.RawMessage{},
		}
		s.saveLocked()
	}
	if !detached {
		rn.persistInput()
	}
	if s.conversations[s.conversationKey(space, convID)] == nil {
		ts := s.now().UTC().Format(time.RFC3339Nano)
		switch {
		case s.opts.conversationAtReceipt():
		case s.opts.PrecreateEmpty:
			s.conversations[s.conversationKey(space, convID)] = &conversation{
				ID: convID, AgentID: agent.ID, Username: key.Username, Space: space,
				Title: "[A2A] " + convID, CreatedAt: ts, UpdatedAt: ts, Rounds: []json.RawMessage{},
			}
		}
	}
	s.saveLocked()
	s.mu.Unlock()
	s.logf("run started: agent %s, context %s, %s", agent.ID, contextID, runTime)

	s.runWG.Add(1)
	go func() {
		defer s.runWG.Done()
		started := s.now()
		answer := "" // the reply streamed as the run goes: none on failure or prompt
		if fail == "" && (!asks || !s.opts.roundStatus()) {
			answer = applyReply(agent, input)
		}
		if !s.play(rn, agent, input, runTime, answer) {
			s.mu.Lock()
			s.active--
			rn.status = execAborted
			s.endedAt[contextID] = s.now()
			s.counts.ended(contextID)
			if s.runCtx.Err() == nil {
				s.storeInterruptedLocked(space, convID, agent, key, input, started, map[string]any{"type": "aborted"})
			}
			s.mu.Unlock()
			if s.runCtx.Err() == nil {
				s.logf("run aborted: context %s: no round stored unless interrupted_rounds", contextID)
			}
			return
		}
		if fail != "" {
			s.mu.Lock()
			s.active--
			s.endedAt[contextID] = s.now()
			s.counts.ended(contextID)
			s.endRunLocked(rn, execFailed, fail, "")
			s.storeInterruptedLocked(space, convID, agent, key, input, started,
				map[string]any{"type": "failed", "error": map[string]any{"code": "internalError", "message": fail}})
			s.mu.Unlock()
			s.logf("run failed: context %s: %s", contextID, fail)
			rn.done <- runResult{text: "Error: " + fail, failed: true}
			return
		}
		reply := applyReply(agent, input)
		status, prompt := "", ""
		if s.opts.roundStatus() {
			status = "completed"
			if asks {
				// The round stops on a prompt: no final message, the
				// question in pending_prompts, and an empty A2A reply.
				status, prompt, reply = "awaiting_prompt", agent.AwaitPrompt, ""
			}
		}
		round := buildRound(agent, input, reply, status, prompt, started, s.now())
		s.mu.Lock()
		k := s.conversationKey(space, convID)
		c := s.conversations[k]
		ts := s.now().UTC().Format(time.RFC3339Nano)
		if c == nil {
			c = &conversation{
				ID: convID, AgentID: agent.ID, Username: key.Username, Space: space,
				Title: titleFor(input), CreatedAt: ts, UpdatedAt: ts,
			}
			s.conversations[k] = c
		}
		if c.Title == placeholderTitle {
			c.Title = titleFor(input) // the generated title lands with the round
		}
		if len(c.Rounds) == 0 || !s.opts.staleUpdatedAt() {
			c.UpdatedAt = ts
		}
		c.Rounds = append(c.Rounds, round)
		c.version++
		s.completedAt[contextID] = s.now()
		s.endedAt[contextID] = s.now()
		s.counts.ended(contextID)
		s.active--
		s.endRunLocked(rn, execCompleted, reply, prompt)
		s.saveLocked()
		n := len(c.Rounds)
		s.mu.Unlock()
		s.logf("run completed: context %s, round %d stored", contextID, n)
		rn.done <- runResult{text: reply}
	}()
	return rn
}

// placeholderTitle is the title of a conversation created at receipt,
// until the run's generated title replaces it (Kibana's
// DEFAULT_CONVERSATION_TITLE).
const placeholderTitle = "New conversation"

// storeInterruptedLocked stores the round of a failed or aborted run, when
// the newest rounds model does (InterruptedRounds): status completed, an
// empty response, and what interrupted it.
func (s *Sim) storeInterruptedLocked(space, convID string, agent *Agent, key *Key, input string, started time.Time, interruption map[string]any) {
	if !s.opts.interruptedRounds() {
		return
	}
	k := s.conversationKey(space, convID)
	c := s.conversations[k]
	ts := s.now().UTC().Format(time.RFC3339Nano)
	if c == nil {
		c = &conversation{ID: convID, AgentID: agent.ID, Username: key.Username, Space: space, Title: placeholderTitle, CreatedAt: ts}
		s.conversations[k] = c
	}
	var round map[string]any
	json.Unmarshal(buildRound(agent, input, "", "completed", "", started, s.now()), &round)
	round["interruption"] = interruption
	b, _ := json.Marshal(round)
	c.Rounds = append(c.Rounds, b)
	c.UpdatedAt = ts
	c.version++
	s.saveLocked()
}

func titleFor(input string) string {
	t := strings.Join(strings.Fields(input), " ")
	if t == "" {
		return "New conversation"
	}
	if utf8.RuneCountInString(t) > 60 {
		t = string([]rune(t)[:59]) + "…"
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

func buildRound(agent *Agent, input, reply, status, prompt string, started, ended time.Time) json.RawMessage {
	steps := []map[string]any{{"type": "reasoning", "reasoning": ReasoningMarker + ": deciding which tools answer “" + input + "”"}}
	for i, tool := range agent.Tools {
		data := map[string]any{"marker": ToolResultMarker, "tool": tool}
		if agent.ToolResultBytes > 0 {
			data["rows"] = bigToolResult(agent.ToolResultBytes)
		}
		steps = append(steps, map[string]any{
			"type": "tool_call", "tool_call_id": fmt.Sprintf("tooluse_%d", i+1), "tool_id": tool,
			"params":      map[string]any{"query": input},
			"progression": []map[string]string{{"message": ProgressMarker + ": selecting the best target for this query"}},
			"results":     []map[string]any{{"tool_result_id": fmt.Sprintf("r%d", i+1), "type": "esql_results", "data": data}},
		})
	}
	ms := ended.Sub(started).Milliseconds()
	round := map[string]any{
		"id":                  newUUID(),
		"input":               map[string]string{"message": input},
		"steps":               steps,
		"response":            map[string]string{"message": reply},
		"started_at":          started.UTC().Format(time.RFC3339Nano),
		"time_to_first_token": ms / 3,
		"time_to_last_token":  ms,
		"model_usage": map[string]any{"connector_id": "sim-connector", "llm_calls": 1 + len(agent.Tools),
			"input_tokens": 900 + len(input), "output_tokens": len(reply) / 4},
	}
	if status != "" {
		round["status"] = status
		if status == "awaiting_prompt" {
			round["pending_prompts"] = []map[string]any{{"id": newUUID(), "type": "confirmation", "title": "Confirmation required", "message": prompt}}
		}
	}
	b, _ := json.Marshal(round)
	return b
}

// bigToolResult makes a tool result of about n bytes: rows of log lines
// with characters that need JSON escaping, as real results have.
func bigToolResult(n int) []string {
	row := ToolResultMarker + ` 2026-11-03T09:59:40Z user="svc-batch" action="role_mapping.update" outcome=success src=10.0.4.17 \ "quoted"`
	count := n/len(row) + 1
	rows := make([]string, count)
	for i := range rows {
		rows[i] = row
	}
	return rows
}
