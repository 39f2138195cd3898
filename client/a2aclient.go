package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// A2AConfig says how to reach one A2A agent (see ResolveAgent).
type A2AConfig struct {
	Endpoint string
	Dialect  Dialect
	Tenant   string
	Auth     Auth
	// Credential is sent as Auth says; with no Auth header it is not sent.
	Credential       Secret
	HTTPClient       *http.Client
	UserAgent        string
	MaxResponseBytes int64
	// ReadBudget bounds the bytes that response reads hold at once; nil
	// means SharedReadBudget(), shared by every client of the process.
	ReadBudget *ReadBudget
}

// A2A is a JSON-RPC client of one A2A agent, in dialect 0.3 or 1.0.
type A2A struct {
	t       *transport
	dialect Dialect
	tenant  string
	// pageSize is the ListTasks page size (tests make it small).
	pageSize int
}

// NewA2A returns a client for cfg.
func NewA2A(cfg A2AConfig) (*A2A, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid A2A endpoint %q", cfg.Endpoint)
	}
	u.Fragment = ""
	if cfg.Dialect != V03 && cfg.Dialect != V10 {
		return nil, fmt.Errorf("unknown A2A dialect %q", cfg.Dialect)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(nil)
	}
	t := &transport{http: hc, base: u, userAgent: cfg.UserAgent, maxBody: cfg.MaxResponseBytes, budget: cfg.ReadBudget,
		retries: 2, maxRetryWait: 20 * time.Second, sleep: SleepContext, headers: map[string]string{}}
	if t.maxBody <= 0 {
		t.maxBody = DefaultMaxResponseBytes
	}
	if t.budget == nil {
		t.budget = SharedReadBudget()
	}
	if cfg.Dialect == V10 {
		t.headers["A2A-Version"] = string(V10)
	}
	if cfg.Credential != "" {
		a := cfg.Auth
		if a.Header == "" {
			a = Auth{Header: "Authorization", Prefix: "Bearer "}
		}
		t.authName, t.authValue, t.secret = a.Header, Secret(a.Prefix+cfg.Credential.Reveal()), cfg.Credential
	}
	return &A2A{t: t, dialect: cfg.Dialect, tenant: cfg.Tenant, pageSize: taskPageSize}, nil
}

// Dialect returns the protocol version spoken.
func (c *A2A) Dialect() Dialect { return c.dialect }

func (c *A2A) method(v03, v10 string) string {
	if c.dialect == V10 {
		return v10
	}
	return v03
}

func (c *A2A) call(ctx context.Context, op, method string, params any, idempotent bool) (gjson.Result, error) {
	body, id, err := encodeRPC(method, params)
	if err != nil {
		return gjson.Result{}, &Error{Kind: KindUnexpected, Op: op, Err: err}
	}
	resp, err := c.t.do(ctx, &request{op: op, method: http.MethodPost, body: body, idempotent: idempotent})
	if err != nil {
		return gjson.Result{}, err
	}
	res, err := rpcResult(op, resp.status, resp.body, id)
	return res, c.t.redact(err)
}

func encodeRPC(method string, params any) ([]byte, string, error) {
	id := uuid.NewString()
	b, err := json.Marshal(jsonrpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	return b, id, err
}

func rpcResult(op string, status int, body []byte, reqID string) (gjson.Result, error) {
	doc := gjson.ParseBytes(body)
	if e := doc.Get("error"); e.Exists() && e.Type != gjson.Null {
		return gjson.Result{}, rpcError(op, status, e)
	}
	if id := doc.Get("id"); id.Exists() && id.Type != gjson.Null && id.String() != reqID {
		return gjson.Result{}, &Error{Kind: KindProtocol, Op: op, StatusCode: status, Message: "the JSON-RPC response answers another request id", Processed: true}
	}
	res := doc.Get("result")
	if !res.Exists() {
		return gjson.Result{}, &Error{Kind: KindProtocol, Op: op, StatusCode: status, Message: "the JSON-RPC response has neither result nor error", Processed: true}
	}
	return res, nil
}

func (c *A2A) messageParams(m OutgoingMessage, returnImmediately bool) any {
	if c.dialect == V10 {
		msg := map[string]any{"messageId": m.MessageID, "role": "ROLE_USER", "parts": []map[string]string{{"text": m.Text}}}
		if m.ContextID != "" {
			msg["contextId"] = m.ContextID
		}
		if m.TaskID != "" {
			msg["taskId"] = m.TaskID
		}
		p := map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": returnImmediately}}
		if c.tenant != "" {
			p["tenant"] = c.tenant
		}
		return p
	}
	msg := map[string]any{"kind": "message", "role": "user", "messageId": m.MessageID,
		"parts": []map[string]string{{"kind": "text", "text": m.Text}}}
	if m.ContextID != "" {
		msg["contextId"] = m.ContextID
	}
	if m.TaskID != "" {
		msg["taskId"] = m.TaskID
	}
	// blocking is always explicit: a2a-js takes a configuration without it
	// as non-blocking.
	return map[string]any{"message": msg, "configuration": map[string]any{"blocking": !returnImmediately}}
}

func (c *A2A) idParams(id string) any {
	p := map[string]any{"id": id}
	if c.tenant != "" && c.dialect == V10 {
		p["tenant"] = c.tenant
	}
	return p
}

// Send posts message/send (SendMessage) once; it is never retried.
func (c *A2A) Send(ctx context.Context, m OutgoingMessage, returnImmediately bool) (*SendResult, error) {
	const op = "send message"
	res, err := c.call(ctx, op, c.method("message/send", "SendMessage"), c.messageParams(m, returnImmediately), false)
	if err != nil {
		return nil, err
	}
	ev := parseEvent(res)
	if ev.Kind != "message" && ev.Kind != "task" {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Message: "the result is neither a message nor a task", Processed: true}
	}
	return ev.result(), nil
}

// GetTask reads a task (tasks/get, GetTask).
func (c *A2A) GetTask(ctx context.Context, id string) (*SendResult, error) {
	return c.taskCall(ctx, "get task "+id, c.method("tasks/get", "GetTask"), id, true)
}

// CancelTask asks the server to cancel a task (tasks/cancel, CancelTask).
func (c *A2A) CancelTask(ctx context.Context, id string) (*SendResult, error) {
	return c.taskCall(ctx, "cancel task "+id, c.method("tasks/cancel", "CancelTask"), id, false)
}

// taskCall calls a method that takes a task id and answers with the task.
func (c *A2A) taskCall(ctx context.Context, op, method, id string, idempotent bool) (*SendResult, error) {
	res, err := c.call(ctx, op, method, c.idParams(id), idempotent)
	if err != nil {
		return nil, err
	}
	ev := parseEvent(res)
	if ev.Kind != "task" {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Message: "the result is not a task", Processed: true}
	}
	return ev.result(), nil
}

// ErrNoTaskList means the agent cannot list the tasks of a context: it
// speaks A2A 0.3, whose JSON-RPC binding has no task list, or its server
// does not offer ListTasks.
var ErrNoTaskList = errors.New("the agent cannot list tasks by contextId")

// TaskInfo is one task of a context, as ListTasks shows it.
type TaskInfo struct {
	ID        string
	ContextID string
	// State is normalised to the v0.3 names ("working", "input-required").
	State string
	// Timestamp is the status's timestamp, as sent.
	Timestamp string
	// MessageIDs are the ids of the messages in the task's history, when
	// the history was asked for.
	MessageIDs []string
}

// maxTaskPages bounds a listing: at most this many pages of
// taskPageSize tasks are read, or of historyPageSize tasks with their
// history, each with its taskHistoryLength newest messages. Without these
// bounds on history, a server's default (which may be the whole history)
// could make one page larger than the response size cap.
const (
	maxTaskPages      = 20
	taskPageSize      = 100
	historyPageSize   = 20
	taskHistoryLength = 100
)

// ContextTasks lists the tasks of a context with v1.0 ListTasks, following
// the pages, newest first (by status timestamp; tasks without one last, in
// the server's order). withHistory asks for each task's history (its
// taskHistoryLength newest messages, historyPageSize tasks a page), to match
// message ids; without it no history is sent. In v0.3, or when the server
// has no ListTasks (JSON-RPC -32601 or -32004, HTTP 404 or 405), the error
// wraps ErrNoTaskList.
func (c *A2A) ContextTasks(ctx context.Context, contextID string, withHistory bool) ([]TaskInfo, error) {
	if c.dialect != V10 {
		return nil, ErrNoTaskList
	}
	var out []TaskInfo
	seen := map[string]bool{}
	token := ""
	for page := 0; page < maxTaskPages; page++ {
		p := map[string]any{"contextId": contextID, "pageSize": c.pageSize, "historyLength": 0}
		if withHistory {
			p["pageSize"], p["historyLength"] = min(c.pageSize, historyPageSize), taskHistoryLength
		}
		if token != "" {
			p["pageToken"] = token
		}
		if c.tenant != "" {
			p["tenant"] = c.tenant
		}
		res, err := c.call(ctx, "list tasks of context "+contextID, "ListTasks", p, true)
		if err != nil {
			if noTaskList(err) {
				return nil, errors.Join(ErrNoTaskList, err)
			}
			return nil, err
		}
		res.Get("tasks").ForEach(func(_, t gjson.Result) bool {
			id := t.Get("id").String()
			// A server that ignores the filter lists other contexts too.
			if id == "" || seen[id] || t.Get("contextId").String() != contextID {
				return true
			}
			seen[id] = true
			ti := TaskInfo{ID: id, ContextID: contextID, State: normState(t.Get("status.state")), Timestamp: t.Get("status.timestamp").String()}
			t.Get("history").ForEach(func(_, m gjson.Result) bool {
				if mid := m.Get("messageId").String(); mid != "" {
					ti.MessageIDs = append(ti.MessageIDs, mid)
				}
				return true
			})
			out = append(out, ti)
			return true
		})
		next := res.Get("nextPageToken").String()
		if next == "" || next == token {
			break
		}
		token = next
	}
	sortTasksNewestFirst(out)
	return out, nil
}

// sortTasksNewestFirst orders tasks by status timestamp, newest first; tasks
// whose timestamp does not parse keep their order after the others.
func sortTasksNewestFirst(tasks []TaskInfo) {
	at := func(t TaskInfo) (time.Time, bool) {
		ts, err := time.Parse(time.RFC3339Nano, t.Timestamp)
		return ts, err == nil
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		ti, iok := at(tasks[i])
		tj, jok := at(tasks[j])
		switch {
		case iok && jok:
			return ti.After(tj)
		default:
			return iok && !jok
		}
	})
}

// noTaskList reports an answer that says the server has no ListTasks.
func noTaskList(err error) bool {
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	switch {
	case ce.Kind == KindRPC:
		return ce.RPCCode == -32601 || ce.RPCCode == -32004
	case ce.StatusCode == http.StatusNotFound, ce.StatusCode == http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// FindTask looks for the task a message started (v1.0 ListTasks by
// context, keeping only a task whose history holds messageID: an earlier
// task of the same context is never taken for it). It returns "" when none
// matches, and an error wrapping ErrNoTaskList when the dialect or the
// server cannot list tasks (or there is no context or message id to look
// for).
func (c *A2A) FindTask(ctx context.Context, contextID, messageID string) (string, error) {
	if contextID == "" || messageID == "" {
		return "", ErrNoTaskList
	}
	tasks, err := c.ContextTasks(ctx, contextID, true)
	if err != nil {
		return "", err
	}
	for _, t := range tasks {
		if slices.Contains(t.MessageIDs, messageID) {
			return t.ID, nil
		}
	}
	return "", nil
}

// StreamEvent is one event of a stream, or a unary result, in either
// dialect.
type StreamEvent struct {
	// Kind is "message", "task", "status" or "artifact".
	Kind      string
	TaskID    string
	ContextID string
	MessageID string
	// State is normalised to the v0.3 names ("working", "input-required").
	State string
	// Timestamp is the status's timestamp, as sent.
	Timestamp string
	// Text is the message's text, or the status message's.
	Text string
	// Artifacts holds a task snapshot's artifacts, in order.
	Artifacts []Artifact
	// Artifact is the chunk of an artifact update.
	Artifact  Artifact
	Append    bool
	LastChunk bool
	// Final is v0.3's final flag on status updates.
	Final bool
}

// Artifact is an artifact's id and text.
type Artifact struct {
	ID   string
	Text string
}

func (e *StreamEvent) result() *SendResult {
	r := &SendResult{Kind: e.Kind, ContextID: e.ContextID, TaskID: e.TaskID, MessageID: e.MessageID, State: e.State, Text: e.Text, Timestamp: e.Timestamp}
	if e.Kind == "task" {
		var acc artifacts
		acc.reset(e.Artifacts)
		if t := acc.String(); t != "" && e.State == "completed" {
			r.Text = t
		}
	}
	return r
}

// parseEvent reads a result or stream event of either dialect: v0.3
// objects carry "kind"; v1.0 wraps them ({"task":…}) or, for GetTask,
// sends a bare Task.
func parseEvent(r gjson.Result) StreamEvent {
	var ev StreamEvent
	body := r
	switch kind := r.Get("kind").String(); kind {
	case "message":
		ev.Kind = "message"
	case "task":
		ev.Kind = "task"
	case "status-update":
		ev.Kind = "status"
	case "artifact-update":
		ev.Kind = "artifact"
	default:
		switch {
		case r.Get("message").IsObject():
			ev.Kind, body = "message", r.Get("message")
		case r.Get("task").IsObject():
			ev.Kind, body = "task", r.Get("task")
		case r.Get("statusUpdate").IsObject():
			ev.Kind, body = "status", r.Get("statusUpdate")
		case r.Get("artifactUpdate").IsObject():
			ev.Kind, body = "artifact", r.Get("artifactUpdate")
		case r.Get("id").Exists() && r.Get("status").IsObject():
			ev.Kind = "task"
		}
	}
	ev.ContextID = body.Get("contextId").String()
	switch ev.Kind {
	case "message":
		ev.MessageID = body.Get("messageId").String()
		ev.TaskID = body.Get("taskId").String()
		ev.Text = partsText(body.Get("parts"), "\n")
	case "task":
		ev.TaskID = body.Get("id").String()
		ev.State = normState(body.Get("status.state"))
		ev.Timestamp = body.Get("status.timestamp").String()
		ev.Text = partsText(body.Get("status.message.parts"), "\n")
		body.Get("artifacts").ForEach(func(_, a gjson.Result) bool {
			ev.Artifacts = append(ev.Artifacts, Artifact{ID: a.Get("artifactId").String(), Text: partsText(a.Get("parts"), "")})
			return true
		})
	case "status":
		ev.TaskID = body.Get("taskId").String()
		ev.State = normState(body.Get("status.state"))
		ev.Timestamp = body.Get("status.timestamp").String()
		ev.Text = partsText(body.Get("status.message.parts"), "\n")
		ev.Final = body.Get("final").Bool()
	case "artifact":
		ev.TaskID = body.Get("taskId").String()
		a := body.Get("artifact")
		ev.Artifact = Artifact{ID: a.Get("artifactId").String(), Text: partsText(a.Get("parts"), "")}
		ev.Append = body.Get("append").Bool()
		ev.LastChunk = body.Get("lastChunk").Bool()
	}
	return ev
}

// partsText joins the text parts of a part list: v0.3 {kind:"text",text},
// v1.0 {text}. Data and file parts are skipped.
func partsText(parts gjson.Result, sep string) string {
	var texts []string
	parts.ForEach(func(_, p gjson.Result) bool {
		kind := p.Get("kind").String()
		if t := p.Get("text"); t.Exists() && (kind == "" || kind == "text") {
			texts = append(texts, t.String())
		}
		return true
	})
	return strings.Join(texts, sep)
}

var v10States = map[string]string{
	"TASK_STATE_SUBMITTED":      "submitted",
	"TASK_STATE_WORKING":        "working",
	"TASK_STATE_COMPLETED":      "completed",
	"TASK_STATE_FAILED":         "failed",
	"TASK_STATE_CANCELED":       "canceled",
	"TASK_STATE_INPUT_REQUIRED": "input-required",
	"TASK_STATE_REJECTED":       "rejected",
	"TASK_STATE_AUTH_REQUIRED":  "auth-required",
	"TASK_STATE_UNSPECIFIED":    "unknown",
}

// The proto enum's numbers, which some servers send instead of names.
var v10StateNumbers = []string{"unknown", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"}

func normState(s gjson.Result) string {
	if s.Type == gjson.Number {
		n := int(s.Int())
		if n >= 0 && n < len(v10StateNumbers) {
			return v10StateNumbers[n]
		}
		return "unknown"
	}
	v := s.String()
	if m, ok := v10States[strings.ToUpper(v)]; ok {
		return m
	}
	v = strings.ToLower(strings.ReplaceAll(v, "_", "-"))
	if v == "cancelled" {
		v = "canceled"
	}
	return v
}

func finalState(s string) bool {
	switch s {
	case "completed", "failed", "canceled", "rejected", "input-required", "auth-required":
		return true
	}
	return false
}

// artifacts accumulates artifact chunks: append adds to the artifact with
// the same id, a chunk without append replaces it.
type artifacts struct {
	order []string
	text  map[string]*strings.Builder
}

func (a *artifacts) reset(list []Artifact) {
	a.order, a.text = nil, nil
	for _, x := range list {
		a.apply(x.ID, false, x.Text)
	}
}

func (a *artifacts) apply(id string, appendTo bool, text string) {
	if a.text == nil {
		a.text = map[string]*strings.Builder{}
	}
	b, ok := a.text[id]
	if !ok {
		b = &strings.Builder{}
		a.text[id] = b
		a.order = append(a.order, id)
	}
	if !appendTo {
		b.Reset()
	}
	b.WriteString(text)
}

func (a *artifacts) String() string {
	var parts []string
	for _, id := range a.order {
		if t := a.text[id].String(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// Stream posts message/stream (SendStreamingMessage) once and calls fn for
// each event of a known kind until the stream ends (EOF, a final flag, or
// a terminal or interrupted state) or fn returns false. A server that
// answers with plain JSON instead of a stream (an early error) is handled
// too.
func (c *A2A) Stream(ctx context.Context, m OutgoingMessage, fn func(StreamEvent) bool) error {
	return c.streamMessage(ctx, m, false, fn)
}

// streamMessage is Stream with the configuration's blocking (0.3) or
// returnImmediately (1.0) set from returnImmediately: Kibana 9.6 runs a
// blocking:false stream on Task Manager, where tasks/get finds it and a
// dropped connection does not end it.
func (c *A2A) streamMessage(ctx context.Context, m OutgoingMessage, returnImmediately bool, fn func(StreamEvent) bool) error {
	return c.stream(ctx, "stream message", c.method("message/stream", "SendStreamingMessage"), c.messageParams(m, returnImmediately), fn)
}

// Subscribe follows a running task's events (tasks/resubscribe,
// SubscribeToTask).
func (c *A2A) Subscribe(ctx context.Context, taskID string, fn func(StreamEvent) bool) error {
	return c.stream(ctx, "subscribe to task "+taskID, c.method("tasks/resubscribe", "SubscribeToTask"), c.idParams(taskID), fn)
}

func (c *A2A) stream(ctx context.Context, op, method string, params any, fn func(StreamEvent) bool) (err error) {
	defer func() { err = c.t.redact(err) }()
	body, id, err := encodeRPC(method, params)
	if err != nil {
		return &Error{Kind: KindUnexpected, Op: op, Err: err}
	}
	// No compression on a stream: a compressing server or proxy holds
	// events (and keep-alives) back until a block fills, which delays the
	// reply and lets idle timeouts cut the connection.
	resp, err := c.t.open(ctx, &request{op: op, method: http.MethodPost, body: body,
		header: map[string]string{"Accept": "text/event-stream", "Accept-Encoding": "identity"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		// One JSON-RPC response instead of a stream: an error before the
		// first event, or a server that does not stream.
		l := c.t.budget.lease()
		defer l.release()
		data, err := readBody(ctx, resp, c.t.maxBody, l)
		if errors.Is(err, errTooLarge) {
			return tooLargeError(op, resp.StatusCode, c.t.maxBody)
		}
		if err != nil {
			return classifyBodyError(op, resp.StatusCode, err)
		}
		if nestsTooDeep(unsafeString(data)) {
			return tooDeepError(op, resp.StatusCode)
		}
		if !gjson.ValidBytes(data) {
			return &Error{Kind: KindProtocol, Op: op, StatusCode: resp.StatusCode, Message: describeNonJSON(resp, data)}
		}
		res, err := rpcResult(op, resp.StatusCode, data, id)
		if err != nil {
			return err
		}
		if ev := parseEvent(res); ev.Kind != "" {
			fn(ev)
		}
		return nil
	}
	l := c.t.budget.lease()
	defer l.release()
	return readSSEWithin(ctx, resp.Body, c.t.maxBody, l, func(event, data string) (bool, error) {
		if strings.TrimSpace(data) == "" {
			return true, nil
		}
		if nestsTooDeep(data) {
			e := tooDeepError(op, resp.StatusCode)
			e.Message = "a stream event nests deeper than " + fmt.Sprint(MaxNesting) + " levels"
			return false, e
		}
		if !gjson.Valid(data) {
			return false, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.StatusCode, Message: "a stream event is not JSON"}
		}
		if event == "error" && !gjson.Get(data, "error").Exists() {
			return false, &Error{Kind: KindRPC, Op: op, StatusCode: resp.StatusCode, Message: oneLine(gjson.Get(data, "message").String(), 300)}
		}
		res, err := rpcResult(op, resp.StatusCode, []byte(data), id)
		if err != nil {
			return false, err
		}
		ev := parseEvent(res)
		if ev.Kind == "" {
			// An event of a kind this client does not know (a later
			// version of the protocol): not for the caller.
			return true, nil
		}
		if !fn(ev) {
			return false, nil
		}
		// The callback decides when a terminal or interrupted state ends
		// the stream (an answer's follow-up restates the question first);
		// a message and v0.3's final flag always end it.
		done := ev.Kind == "message" || ev.Final
		return !done, nil
	})
}

// errStreamCut means the stream ended without a final event.
var errStreamCut = errors.New("the stream ended before the task finished")

// sseLineSlack is how much longer than the event cap one line may be: room
// for a field name beside a value that fits the cap.
const sseLineSlack = 1024

// readSSE reads server-sent events as the WHATWG event-stream format
// defines them, calling fn with each event's type and data until fn says
// stop or fails, or the body ends. Lines end in LF, CRLF or a lone CR; a
// leading BOM is skipped. An event's data, and any one line, are bounded
// by max (plus sseLineSlack for a line), so that a server sending an
// endless line cannot make the client hold it. An event still open when
// the body ends is dropped, as the format says: the stream was cut in its
// middle, and what arrived of it is not a whole event.
func readSSE(r io.Reader, max int64, fn func(event, data string) (bool, error)) error {
	return readSSEWithin(context.Background(), r, max, nil, fn)
}

// sseFree is what a stream's buffers may hold outside the read budget:
// ordinary events are small, and a stream may stay open for minutes.
const sseFree = 64 << 10

// readSSEWithin is readSSE with the stream's buffers (the line being read
// and the event's data) counted in l once they pass sseFree, waiting for
// budget as they grow, and given back (buffers and budget) after the
// event that needed them.
func readSSEWithin(ctx context.Context, r io.Reader, max int64, l *lease, fn func(event, data string) (bool, error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if bom, _ := br.Peek(3); string(bom) == "\xEF\xBB\xBF" {
		br.Discard(3)
	}
	tooLarge := func() error {
		return &Error{Kind: KindProtocol, Op: "read stream", Message: fmt.Sprintf("a stream event is larger than the size cap (%s); the server processed the request, but the event was not kept", byteSize(max)),
			Err: ErrReplyTooLarge, Processed: true}
	}
	var (
		line    []byte // the line being read, without its end
		event   string
		data    bytes.Buffer
		hasData bool
		skipLF  bool // the last line ended in CR: an LF right after belongs to it
	)
	// account reserves what the buffers hold beyond sseFree.
	account := func() error {
		if held := int64(cap(line) + data.Cap()); l != nil && held > sseFree && held > l.holding() {
			if err := l.grow(ctx, held); err != nil {
				return &Error{Kind: KindConnection, Op: "read stream", Message: "the stream broke: " + oneLine(err.Error(), 120), Err: err}
			}
		}
		return nil
	}
	// handle takes one complete line.
	handle := func(line []byte) (bool, error) {
		switch {
		case len(line) == 0:
			if hasData {
				cont, err := fn(event, data.String())
				if err != nil || !cont {
					return false, err
				}
			}
			event, hasData = "", false
			data.Reset()
			if data.Cap() > sseFree {
				data = bytes.Buffer{}
			}
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "event":
				event = string(value)
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(value)
				hasData = true
				if int64(data.Len()) > max {
					return false, tooLarge()
				}
				if err := account(); err != nil {
					return false, err
				}
			}
		}
		return true, nil
	}
	for {
		chunk, err := br.ReadSlice('\n')
		for len(chunk) > 0 {
			if skipLF {
				skipLF = false
				if chunk[0] == '\n' {
					chunk = chunk[1:]
					continue
				}
			}
			i := bytes.IndexAny(chunk, "\r\n")
			if i < 0 {
				i = len(chunk)
			}
			if int64(len(line)+i) > max+sseLineSlack {
				return tooLarge()
			}
			line = append(line, chunk[:i]...)
			if err := account(); err != nil {
				return err
			}
			if i == len(chunk) {
				break
			}
			skipLF = chunk[i] == '\r'
			chunk = chunk[i+1:]
			cont, ferr := handle(line)
			if ferr != nil {
				return ferr
			}
			if !cont {
				return nil
			}
			line = line[:0]
			if cap(line) > sseFree {
				line = nil
			}
			if int64(cap(line)+data.Cap()) <= sseFree {
				l.release()
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return errStreamCut
		default:
			return &Error{Kind: KindConnection, Op: "read stream", Message: "the stream broke: " + oneLine(rootMessage(err), 120), Err: err}
		}
	}
}
