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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/wire"
	"github.com/a2a-courier/a2a-courier/internal/textcut"
)

// A2AConfig says how to reach one A2A agent (see ResolveAgent).
type A2AConfig struct {
	Endpoint string
	Dialect  Dialect
	// Binding is BindingJSONRPC (also "") or BindingREST, which A2A 1.0
	// only has.
	Binding Binding
	Tenant  string
	Auth    Auth
	// Credential is sent as Auth says; with no Auth header it is not sent.
	Credential       Secret
	HTTPClient       *http.Client
	UserAgent        string
	MaxResponseBytes int64
	// ReadBudget bounds the bytes that response reads hold at once; nil
	// means SharedReadBudget(), shared by every client of the process.
	ReadBudget *ReadBudget
}

// A2A is a client of one A2A agent, in dialect 0.3 or 1.0, over JSON-RPC
// or (1.0 only) HTTP+JSON. Every method works the same over either
// binding, errors included (see restError).
type A2A struct {
	t       *transport
	dialect Dialect
	binding Binding
	tenant  string
	// pageSize is the ListTasks page size (tests make it small).
	pageSize int
	// plainJSON: the server refused application/a2a+json (HTTP+JSON).
	plainJSON atomic.Bool
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
	binding := cfg.Binding.orDefault()
	switch {
	case binding != BindingJSONRPC && binding != BindingREST:
		return nil, fmt.Errorf("unknown A2A binding %q: use jsonrpc or rest", cfg.Binding)
	case binding == BindingREST && cfg.Dialect != V10:
		// A2A 0.3's REST binding is another wire format (the gRPC
		// proto's JSON, under /v1).
		return nil, fmt.Errorf("the HTTP+JSON binding is spoken in A2A 1.0 only, not %s", cfg.Dialect)
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
	return &A2A{t: t, dialect: cfg.Dialect, binding: binding, tenant: cfg.Tenant, pageSize: taskPageSize}, nil
}

// Dialect returns the protocol version spoken.
func (c *A2A) Dialect() Dialect { return c.dialect }

// Binding returns the protocol binding spoken.
func (c *A2A) Binding() Binding { return c.binding.orDefault() }

func (c *A2A) rest() bool { return c.binding == BindingREST }

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

// messageParams builds the params of a send (the body of POST
// /message:send in HTTP+JSON, where the tenant goes in the path).
func (c *A2A) messageParams(m OutgoingMessage, returnImmediately bool) (map[string]any, error) {
	parts, err := encodeParts(c.dialect, m.Text, m.Parts)
	if err != nil {
		return nil, err
	}
	if c.dialect == V10 {
		msg := map[string]any{"messageId": m.MessageID, "role": "ROLE_USER", "parts": parts}
		if m.ContextID != "" {
			msg["contextId"] = m.ContextID
		}
		if m.TaskID != "" {
			msg["taskId"] = m.TaskID
		}
		p := map[string]any{"message": msg, "configuration": map[string]any{"returnImmediately": returnImmediately}}
		if c.tenant != "" && !c.rest() {
			p["tenant"] = c.tenant
		}
		return p, nil
	}
	msg := map[string]any{"kind": "message", "role": "user", "messageId": m.MessageID, "parts": parts}
	if m.ContextID != "" {
		msg["contextId"] = m.ContextID
	}
	if m.TaskID != "" {
		msg["taskId"] = m.TaskID
	}
	// blocking is always explicit: a2a-js takes a configuration without it
	// as non-blocking.
	return map[string]any{"message": msg, "configuration": map[string]any{"blocking": !returnImmediately}}, nil
}

// badMessage is the error of a message that cannot be encoded: nothing
// was sent.
func badMessage(op string, err error) *Error {
	return &Error{Kind: KindBadRequest, Op: op, Message: "the message cannot be sent: " + err.Error(), Err: err}
}

func (c *A2A) idParams(id string) any {
	p := map[string]any{"id": id}
	if c.tenant != "" && c.dialect == V10 {
		p["tenant"] = c.tenant
	}
	return p
}

// Send posts message/send (SendMessage, POST /message:send) once; it is
// never retried.
func (c *A2A) Send(ctx context.Context, m OutgoingMessage, returnImmediately bool) (*SendResult, error) {
	const op = "send message"
	p, err := c.messageParams(m, returnImmediately)
	if err != nil {
		return nil, badMessage(op, err)
	}
	var res gjson.Result
	if c.rest() {
		body, jerr := json.Marshal(p)
		if jerr != nil {
			return nil, badMessage(op, jerr)
		}
		res, err = c.restDo(ctx, op, http.MethodPost, "/message:send", nil, body, false)
	} else {
		res, err = c.call(ctx, op, wire.MethodSend.In(c.dialect), p, false)
	}
	if err != nil {
		return nil, err
	}
	ev := parseEvent(res)
	if ev.Kind != "message" && ev.Kind != "task" {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Message: "the result is neither a message nor a task", Processed: true}
	}
	if err := checkAnswer(op, &ev, c.t.maxBody); err != nil {
		// The task it names is still worth knowing: it may be read.
		return &SendResult{Kind: ev.Kind, TaskID: ev.TaskID, ContextID: ev.ContextID}, err
	}
	return ev.result(), nil
}

// GetTask reads a task (tasks/get, GetTask, GET /tasks/{id}).
func (c *A2A) GetTask(ctx context.Context, id string) (*SendResult, error) {
	op := "get task " + id
	if c.rest() {
		return c.taskResult(op)(c.restDo(ctx, op, http.MethodGet, "/tasks/"+escapeSegment(id), nil, nil, true))
	}
	return c.taskResult(op)(c.call(ctx, op, wire.MethodGetTask.In(c.dialect), c.idParams(id), true))
}

// CancelTask asks the server to cancel a task (tasks/cancel, CancelTask,
// POST /tasks/{id}:cancel).
func (c *A2A) CancelTask(ctx context.Context, id string) (*SendResult, error) {
	op := "cancel task " + id
	if c.rest() {
		// An empty object, not an empty body: older a2a-go servers decode
		// the body whatever the route.
		return c.taskResult(op)(c.restDo(ctx, op, http.MethodPost, "/tasks/"+escapeSegment(id)+":cancel", nil, []byte("{}"), false))
	}
	return c.taskResult(op)(c.call(ctx, op, wire.MethodCancel.In(c.dialect), c.idParams(id), false))
}

// taskResult reads an answer that must be a task.
func (c *A2A) taskResult(op string) func(gjson.Result, error) (*SendResult, error) {
	return func(res gjson.Result, err error) (*SendResult, error) {
		if err != nil {
			return nil, err
		}
		ev := parseEvent(res)
		if ev.Kind != "task" {
			return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Message: "the result is not a task", Processed: true}
		}
		if err := checkAnswer(op, &ev, c.t.maxBody); err != nil {
			return nil, err
		}
		return ev.result(), nil
	}
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
	// StatusText is the text of the task's status message.
	StatusText string
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

// TaskFilter selects the tasks ListTasks and Tasks show (A2A 1.0
// ListTasks).
type TaskFilter struct {
	// ContextID keeps the tasks of one context; "" lists every task the
	// server shows this caller.
	ContextID string
	// State keeps the tasks in one state: "submitted", "working",
	// "input-required", "auth-required", "completed", "canceled",
	// "failed" or "rejected" (a TASK_STATE_* name is accepted too); ""
	// keeps every state. It is sent as ListTasks' status filter, and
	// applied again to what comes back, for a server that ignores it.
	State string
	// HistoryLength asks for each task's newest messages (at most
	// taskHistoryLength, 100); 0 asks for none.
	HistoryLength int
}

// TaskPage is one page of a task listing.
type TaskPage struct {
	Tasks []TaskInfo
	// NextPageToken asks for the next page; "" on the last.
	NextPageToken string
	// Cut says the page held more tasks than were read (a server that
	// ignores pageSize): the tasks after them are not in Tasks, and the
	// next page does not start where these end.
	Cut bool
	// TotalSize is the number of tasks the filter matches, as the server
	// counts them (0 when it does not say).
	TotalSize int
	// read is how many tasks of the page were read, those the filter
	// passed over included.
	read int
}

// ListTasks reads one page of v1.0 ListTasks (GET /tasks over HTTP+JSON),
// in the server's order (newest first for the SDKs): pageSize 1 to 100
// (0 means 100, or 20 when history is asked for), pageToken "" for the
// first page. In v0.3, or when the server has no ListTasks (JSON-RPC
// -32601 or -32004, HTTP 404, 405 or 501), the error wraps ErrNoTaskList.
func (c *A2A) ListTasks(ctx context.Context, f TaskFilter, pageSize int, pageToken string) (TaskPage, error) {
	return c.listPage(ctx, f, pageSize, pageToken, 0)
}

// listPage is ListTasks reading at most maxItems tasks of the page (0: the
// page size asked): a server that ignores pageSize may send a page of
// hundreds of thousands. Past them the page is Cut and the rest is not
// decoded.
func (c *A2A) listPage(ctx context.Context, f TaskFilter, pageSize int, pageToken string, maxItems int) (TaskPage, error) {
	op := "list tasks"
	if f.ContextID != "" {
		op += " of context " + f.ContextID
	}
	if c.dialect != V10 {
		return TaskPage{}, ErrNoTaskList
	}
	state := ""
	if f.State != "" {
		var err error
		if state, err = restState(f.State); err != nil {
			return TaskPage{}, &Error{Kind: KindBadRequest, Op: op, Message: err.Error()}
		}
	}
	history := min(max(f.HistoryLength, 0), taskHistoryLength)
	if pageSize < 0 || pageSize > 100 {
		return TaskPage{}, &Error{Kind: KindBadRequest, Op: op, Message: fmt.Sprintf("page size %d is outside 1 to 100", pageSize)}
	}
	pageSize = c.effectivePageSize(f, pageSize)
	if maxItems <= 0 {
		maxItems = pageSize
	}
	var res gjson.Result
	var err error
	if c.rest() {
		q := url.Values{"pageSize": {strconv.Itoa(pageSize)}, "historyLength": {strconv.Itoa(history)}}
		if f.ContextID != "" {
			q.Set("contextId", f.ContextID)
		}
		if state != "" {
			q.Set("status", state)
		}
		if pageToken != "" {
			q.Set("pageToken", pageToken)
		}
		res, err = c.restDo(ctx, op, http.MethodGet, "/tasks", q, nil, true)
	} else {
		p := map[string]any{"pageSize": pageSize, "historyLength": history}
		if f.ContextID != "" {
			p["contextId"] = f.ContextID
		}
		if state != "" {
			p["status"] = state
		}
		if pageToken != "" {
			p["pageToken"] = pageToken
		}
		if c.tenant != "" {
			p["tenant"] = c.tenant
		}
		res, err = c.call(ctx, op, wire.MethodListTasks.V10, p, true)
	}
	if err != nil {
		if noTaskList(err) {
			return TaskPage{}, errors.Join(ErrNoTaskList, err)
		}
		return TaskPage{}, err
	}
	page := TaskPage{NextPageToken: strings.Clone(res.Get("nextPageToken").String()), TotalSize: int(res.Get("totalSize").Int())}
	wantState := ""
	if state != "" {
		wantState = v10States[state]
	}
	res.Get("tasks").ForEach(func(_, t gjson.Result) bool {
		if page.read == maxItems {
			page.Cut = true
			return false
		}
		page.read++
		if ti, ok := taskInfo(t, f, wantState, history > 0); ok {
			page.Tasks = append(page.Tasks, ti)
		}
		return true
	})
	return page, nil
}

// effectivePageSize is the page size ListTasks asks for: size, or for 0
// the client's (100), or 20 when history is asked for.
func (c *A2A) effectivePageSize(f TaskFilter, size int) int {
	switch {
	case size > 0:
		return size
	case f.HistoryLength > 0:
		return min(c.pageSize, historyPageSize)
	}
	return c.pageSize
}

// maxStatusText bounds the status text a listing keeps of a task: rows
// show its first line, at most 200 characters.
const maxStatusText = 4 << 10

// taskInfo reads one task of a listing; ok is false for one the filter
// does not select (a server that ignores a filter lists other contexts or
// states too). Its strings are copied out of the page, which is let go;
// the status text is cut at maxStatusText, and of its history (withHistory)
// only the taskHistoryLength newest message ids that are plain ids are
// kept.
func taskInfo(t gjson.Result, f TaskFilter, wantState string, withHistory bool) (TaskInfo, bool) {
	id := t.Get("id").String()
	ti := TaskInfo{ID: id, ContextID: t.Get("contextId").String(), State: normState(t.Get("status.state"))}
	if id == "" || f.ContextID != "" && ti.ContextID != f.ContextID || wantState != "" && ti.State != wantState {
		return TaskInfo{}, false
	}
	ti.ID, ti.ContextID, ti.State = strings.Clone(id), strings.Clone(ti.ContextID), strings.Clone(ti.State)
	ti.Timestamp = strings.Clone(oneLine(t.Get("status.timestamp").String(), 64))
	text := textOf(parseParts(t.Get("status.message.parts")), "\n")
	text = textcut.Prefix(text, maxStatusText)
	ti.StatusText = strings.Clone(text)
	if withHistory {
		t.Get("history").ForEach(func(_, m gjson.Result) bool {
			if mid := m.Get("messageId").String(); ValidID(mid) {
				if len(ti.MessageIDs) == taskHistoryLength {
					ti.MessageIDs = slices.Delete(ti.MessageIDs, 0, 1)
				}
				ti.MessageIDs = append(ti.MessageIDs, strings.Clone(mid))
			}
			return true
		})
	}
	return ti, true
}

// Tasks lists the tasks a filter selects with v1.0 ListTasks, following
// the pages (at most maxTaskPages), newest first (by status timestamp;
// tasks without one last, in the server's order). Errors are ListTasks'.
func (c *A2A) Tasks(ctx context.Context, f TaskFilter) ([]TaskInfo, error) {
	l, err := c.TaskList(ctx, f, 0)
	return l.Tasks, err
}

// TaskListing is what TaskList read.
type TaskListing struct {
	// Tasks are newest first.
	Tasks []TaskInfo
	// Total is how many tasks the filter matches: the server's count when
	// it gives one, else how many were read.
	Total int
	// More says the server has tasks past those read (the limit, or
	// maxTaskPages pages, stopped the listing).
	More bool
}

// TaskList lists at most limit tasks (0: every one, within maxTaskPages
// pages) that a filter selects, as Tasks does: the pages are read in the
// server's order (newest first for the SDKs, as A2A 1.0 asks) until limit
// tasks are read. Errors are ListTasks'.
func (c *A2A) TaskList(ctx context.Context, f TaskFilter, limit int) (TaskListing, error) {
	var l TaskListing
	seen := map[string]bool{}
	token, size := "", 0
	if limit > 0 && f.HistoryLength == 0 {
		size = min(limit, c.pageSize, taskPageSize)
	}
	// At most maxTaskPages pages' worth of tasks is read, however the
	// server pages them: one that ignores pageSize may put millions in
	// one page, and the rest of a page past the bound is not decoded.
	budget := maxTaskPages * c.effectivePageSize(f, size)
	for page := 0; page < maxTaskPages && budget > 0; page++ {
		p, err := c.listPage(ctx, f, size, token, budget)
		if err != nil {
			return TaskListing{}, err
		}
		if page == 0 {
			l.Total = p.TotalSize
		}
		budget -= p.read
		for _, t := range p.Tasks {
			if !seen[t.ID] {
				seen[t.ID] = true
				if limit == 0 || len(l.Tasks) < limit {
					l.Tasks = append(l.Tasks, t)
				}
			}
		}
		l.More = p.Cut || p.NextPageToken != "" && p.NextPageToken != token
		if !l.More || p.Cut || limit > 0 && len(seen) >= limit {
			break
		}
		token = p.NextPageToken
	}
	// Every task read: the count is ours (a server that ignores the
	// filter counts others too).
	if l.Total = max(l.Total, len(seen)); !l.More {
		l.Total = len(seen)
	}
	l.More = l.More || len(seen) > len(l.Tasks)
	sortTasksNewestFirst(l.Tasks)
	return l, nil
}

// ContextTasks lists the tasks of a context (Tasks with the context as
// filter). withHistory asks for each task's history (its
// taskHistoryLength newest messages, historyPageSize tasks a page), to
// match message ids; without it no history is sent. In v0.3, or when the
// server has no ListTasks (JSON-RPC -32601 or -32004, HTTP 404, 405 or 501),
// the error wraps ErrNoTaskList.
func (c *A2A) ContextTasks(ctx context.Context, contextID string, withHistory bool) ([]TaskInfo, error) {
	f := TaskFilter{ContextID: contextID}
	if withHistory {
		f.HistoryLength = TaskHistoryLength
	}
	return c.Tasks(ctx, f)
}

// TaskHistoryLength is the history ContextTasks asks of each task (its
// newest messages), for TaskList callers that match message ids.
const TaskHistoryLength = taskHistoryLength

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
	case ce.StatusCode == http.StatusNotFound, ce.StatusCode == http.StatusMethodNotAllowed, ce.StatusCode == http.StatusNotImplemented:
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
	// Parts are the message's parts, or the status message's.
	Parts []Part
	// Artifacts holds a task snapshot's artifacts, in order.
	Artifacts []Artifact
	// Artifact is the chunk of an artifact update.
	Artifact  Artifact
	Append    bool
	LastChunk bool
	// Final is v0.3's final flag on status updates.
	Final bool
}

// Artifact is an artifact (or a chunk of one): its id, name, text and
// parts.
type Artifact struct {
	ID   string
	Name string
	// Text joins the text parts.
	Text  string
	Parts []Part
}

func (e *StreamEvent) result() *SendResult {
	r := &SendResult{Kind: e.Kind, ContextID: e.ContextID, TaskID: e.TaskID, MessageID: e.MessageID, State: e.State, Text: e.Text, Timestamp: e.Timestamp}
	if e.Kind == "message" {
		r.Parts = replyParts(SourceMessage, e.Parts)
		return r
	}
	if e.Kind == "task" {
		var acc artifacts
		acc.reset(e.Artifacts)
		r.StatusText, r.ArtifactText = e.Text, acc.String()
		r.Parts = append(acc.replyParts(), replyParts(SourceStatus, e.Parts)...)
		if e.State == "completed" {
			r.Text = composeAnswer(r.ArtifactText, r.StatusText)
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
		ev.Parts = parseParts(body.Get("parts"))
		ev.Text = textOf(ev.Parts, "\n")
	case "task":
		ev.TaskID = body.Get("id").String()
		ev.State = normState(body.Get("status.state"))
		ev.Timestamp = body.Get("status.timestamp").String()
		ev.Parts = parseParts(body.Get("status.message.parts"))
		ev.Text = textOf(ev.Parts, "\n")
		body.Get("artifacts").ForEach(func(_, a gjson.Result) bool {
			ev.Artifacts = append(ev.Artifacts, parseArtifact(a))
			// One past the bound says the task is over it (checkAnswer).
			return len(ev.Artifacts) <= MaxReplyParts
		})
	case "status":
		ev.TaskID = body.Get("taskId").String()
		ev.State = normState(body.Get("status.state"))
		ev.Timestamp = body.Get("status.timestamp").String()
		ev.Parts = parseParts(body.Get("status.message.parts"))
		ev.Text = textOf(ev.Parts, "\n")
		ev.Final = body.Get("final").Bool()
	case "artifact":
		ev.TaskID = body.Get("taskId").String()
		ev.Artifact = parseArtifact(body.Get("artifact"))
		ev.Append = body.Get("append").Bool()
		ev.LastChunk = body.Get("lastChunk").Bool()
	}
	return ev
}

func parseArtifact(a gjson.Result) Artifact {
	parts := parseParts(a.Get("parts"))
	return Artifact{ID: boundArtifactID(a.Get("artifactId").String()), Name: BoundName(a.Get("name").String()), Text: textOf(parts, ""), Parts: parts}
}

var v10States = wire.V10States

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
	return normStateName(s.String())
}

// normStateName reads a state name of either dialect.
func normStateName(v string) string { return wire.NormState(v) }

func finalState(s string) bool {
	switch s {
	case "completed", "failed", "canceled", "rejected", "input-required", "auth-required":
		return true
	}
	return false
}

// artifacts accumulates artifact chunks: append adds the chunk's parts to
// the artifact with the same id, a chunk without append replaces it. It
// counts what it holds, for the answer cap (overCap).
type artifacts struct {
	order []string
	byID  map[string]*Artifact
	// size is what the parts, ids and names hold (partBytes); parts
	// counts the parts.
	size  int64
	parts int
	// over is set once the chunks came to more than the answer cap: they
	// are dropped, and only the task read whole can give the answer.
	over error
}

func (a *artifacts) reset(list []Artifact) {
	a.order, a.byID, a.size, a.parts, a.over = nil, nil, 0, 0, nil
	for _, x := range list {
		a.apply(x, false)
	}
}

func (a *artifacts) apply(x Artifact, appendTo bool) {
	if a.byID == nil {
		a.byID = map[string]*Artifact{}
	}
	cur, ok := a.byID[x.ID]
	if !ok {
		cur = &Artifact{ID: strings.Clone(x.ID)}
		a.byID[x.ID] = cur
		a.order = append(a.order, cur.ID)
		a.size += int64(len(cur.ID))
	}
	if !appendTo {
		a.size -= partsBytes(cur.Parts) + int64(len(cur.Name))
		a.parts -= len(cur.Parts)
		cur.Name, cur.Parts = "", nil
	}
	if cur.Name == "" && x.Name != "" {
		cur.Name = strings.Clone(x.Name)
		a.size += int64(len(cur.Name))
	}
	for _, p := range x.Parts {
		cur.Parts = append(cur.Parts, clonePart(p))
	}
	a.size += partsBytes(x.Parts)
	a.parts += len(x.Parts)
}

// overCap checks what the artifacts hold, with extra (the final status
// message's parts), against the answer cap max: over it, the artifacts
// are dropped and the error (kept in over) says why.
func (a *artifacts) overCap(op string, max int64, extra []Part) error {
	var err error
	switch {
	case a.parts+len(extra) > MaxReplyParts:
		err = answerOverCap(op, max, fmt.Sprintf("more than %d parts over its stream", MaxReplyParts))
	case len(a.order) > MaxReplyParts:
		err = answerOverCap(op, max, fmt.Sprintf("more than %d artifacts over its stream", MaxReplyParts))
	case a.size+partsBytes(extra) > max:
		err = answerOverCap(op, max, "")
		err.(*Error).Message = fmt.Sprintf("the agent's streamed answer comes to more than the %s cap (its artifact chunks and status message together); the server processed the request, but its answer was not kept", byteSize(max))
	default:
		return nil
	}
	a.reset(nil)
	a.over = err
	return err
}

// String joins the text of the artifacts, one artifact a line.
func (a *artifacts) String() string {
	var parts []string
	for _, id := range a.order {
		if t := textOf(a.byID[id].Parts, ""); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// empty reports whether no artifact holds a part.
func (a *artifacts) empty() bool {
	for _, id := range a.order {
		if len(a.byID[id].Parts) > 0 {
			return false
		}
	}
	return true
}

// replyParts lists the artifacts' parts, in order.
func (a *artifacts) replyParts() []ReplyPart {
	var out []ReplyPart
	for _, id := range a.order {
		x := a.byID[id]
		for _, p := range x.Parts {
			out = append(out, ReplyPart{Part: p, Source: SourceArtifact, ArtifactID: x.ID, ArtifactName: x.Name})
		}
	}
	return out
}

// Stream posts message/stream (SendStreamingMessage, POST
// /message:stream) once and calls fn for each event of a known kind until
// the stream ends (EOF, a final flag, or a terminal or interrupted state)
// or fn returns false. A server that answers with plain JSON instead of a
// stream (an early error) is handled too.
func (c *A2A) Stream(ctx context.Context, m OutgoingMessage, fn func(StreamEvent) bool) error {
	return c.streamMessage(ctx, m, false, fn)
}

// streamMessage is Stream with the configuration's blocking (0.3) or
// returnImmediately (1.0) set from returnImmediately: Kibana 9.6 runs a
// blocking:false stream on Task Manager, where tasks/get finds it and a
// dropped connection does not end it.
func (c *A2A) streamMessage(ctx context.Context, m OutgoingMessage, returnImmediately bool, fn func(StreamEvent) bool) error {
	const op = "stream message"
	p, err := c.messageParams(m, returnImmediately)
	if err != nil {
		return badMessage(op, err)
	}
	if c.rest() {
		body, err := json.Marshal(p)
		if err != nil {
			return badMessage(op, err)
		}
		return c.restStream(ctx, op, http.MethodPost, "/message:stream", body, fn)
	}
	return c.stream(ctx, op, wire.MethodStream.In(c.dialect), p, fn)
}

// Subscribe follows a running task's events (tasks/resubscribe,
// SubscribeToTask, POST /tasks/{id}:subscribe). Over HTTP+JSON, a server
// that answers the POST with 405, or with a 404 that names no A2A error
// (a route it does not have), is asked again with GET, as a2a.proto's
// HTTP annotation has it: a subscription reads, so asking twice is safe.
func (c *A2A) Subscribe(ctx context.Context, taskID string, fn func(StreamEvent) bool) error {
	op := "subscribe to task " + taskID
	if c.rest() {
		path := "/tasks/" + escapeSegment(taskID) + ":subscribe"
		err := c.restStream(ctx, op, http.MethodPost, path, []byte("{}"), fn)
		var ce *Error
		if errors.As(err, &ce) && ce.RPCCode == 0 && (ce.StatusCode == http.StatusMethodNotAllowed || ce.Kind == KindNotFound && ce.Reason == "") {
			err = c.restStream(ctx, op, http.MethodGet, path, nil, fn)
		}
		return err
	}
	return c.stream(ctx, op, wire.MethodSubscribe.In(c.dialect), c.idParams(taskID), fn)
}

// stream sends one JSON-RPC streaming request and reads its events.
func (c *A2A) stream(ctx context.Context, op, method string, params any, fn func(StreamEvent) bool) error {
	body, id, err := encodeRPC(method, params)
	if err != nil {
		return &Error{Kind: KindUnexpected, Op: op, Err: err}
	}
	r := &request{op: op, method: http.MethodPost, body: body, heldOpen: true}
	return c.events(ctx, op, r, func(status int, data []byte, event string) (gjson.Result, error) {
		if event == "error" && !gjson.GetBytes(data, "error").Exists() {
			return gjson.Result{}, &Error{Kind: KindRPC, Op: op, StatusCode: status, Message: oneLine(gjson.GetBytes(data, "message").String(), 300)}
		}
		return rpcResult(op, status, data, id)
	}, fn)
}

// restStream sends one HTTP+JSON streaming request and reads its events:
// each SSE data line is a StreamResponse ({"task"}, {"statusUpdate"}, …);
// an error is an "event: error" whose data is the binding's error object,
// or, before the first event, an HTTP error status.
func (c *A2A) restStream(ctx context.Context, op, method, path string, body []byte, fn func(StreamEvent) bool) error {
	r := &request{op: op, method: method, path: c.restPath(path), body: body, heldOpen: true}
	if body != nil {
		r.header = map[string]string{"Content-Type": c.restContentType()}
	}
	decode := func(status int, data []byte, event string) (gjson.Result, error) {
		doc := gjson.ParseBytes(data)
		if e := doc.Get("error"); e.IsObject() || event == "error" {
			if !e.IsObject() {
				e = doc
			}
			return gjson.Result{}, restBodyError(op, status, e)
		}
		return doc, nil
	}
	seen := false
	count := func(e StreamEvent) bool { seen = true; return fn(e) }
	err := c.events(ctx, op, r, decode, count)
	if err != nil && body != nil && !seen && c.refusedMediaType(err) {
		// Refused before any event: the message was not taken in, and goes
		// once more with the other content type. (After an event it was:
		// an error then is the run's, and never a reason to send again.)
		r.header = map[string]string{"Content-Type": c.restContentType()}
		err = c.events(ctx, op, r, decode, count)
	}
	return restError(err)
}

// events opens a streaming request and calls fn for each event of a
// known kind until the stream ends (EOF, a final flag, or a terminal or
// interrupted state), fn returns false, or decode fails. decode reads one
// event's data (or the whole body of an answer that is not a stream) into
// a result.
func (c *A2A) events(ctx context.Context, op string, r *request, decode func(status int, data []byte, event string) (gjson.Result, error), fn func(StreamEvent) bool) (err error) {
	defer func() { err = c.t.redact(err) }()
	// No compression on a stream: a compressing server or proxy holds
	// events (and keep-alives) back until a block fills, which delays the
	// reply and lets idle timeouts cut the connection.
	if r.header == nil {
		r.header = map[string]string{}
	}
	r.header["Accept"], r.header["Accept-Encoding"] = "text/event-stream", "identity"
	resp, err := c.t.open(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		// One answer instead of a stream: an error before the first
		// event, or a server that does not stream.
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
		res, err := decode(resp.StatusCode, data, "")
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
		res, err := decode(resp.StatusCode, []byte(data), event)
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
