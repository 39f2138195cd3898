package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/wire"
)

// readBody reads a request body within its bound: 413 past it.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "the request is larger than " + strconv.FormatInt(tooLarge.Limit, 10) + " bytes"})
		return nil, false
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "the request body could not be read"})
		return nil, false
	}
	return b, true
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func toRPCError(d wire.Dialect, e *apiError) *rpcError {
	out := &rpcError{Code: e.code, Message: e.msg}
	info := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.reason, "domain": "a2a-protocol.org"}
	if e.retry > 0 {
		info["metadata"] = map[string]string{"retryAfterSeconds": strconv.Itoa(e.retry)}
	}
	if d == wire.V10 {
		out.Data = []any{info}
	} else if e.reason != "" {
		out.Data = info
	}
	return out
}

func (s *Server) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if !gjson.ValidBytes(body) {
		writeRPC(w, nil, wire.V03, nil, &apiError{code: -32700, reason: "PARSE_ERROR", msg: "the request is not JSON"})
		return
	}
	doc := gjson.ParseBytes(body)
	id := json.RawMessage("null")
	if v := doc.Get("id"); v.Exists() {
		id = json.RawMessage(v.Raw)
	}
	m, d, ok := wire.MethodNamed(doc.Get("method").String())
	if doc.Get("jsonrpc").String() != "2.0" || !doc.Get("method").Exists() {
		writeRPC(w, id, wire.V03, nil, &apiError{code: -32600, reason: "INVALID_REQUEST", msg: "not a JSON-RPC 2.0 request"})
		return
	}
	if !ok {
		writeRPC(w, id, wire.V03, nil, &apiError{code: -32601, reason: "METHOD_NOT_FOUND", msg: "method " + doc.Get("method").String() + " is not offered"})
		return
	}
	params := doc.Get("params")
	caller := callerOf(r)
	switch m {
	case wire.MethodSend:
		res, e := s.send(r.Context(), s.sendParams(caller, "jsonrpc", d, params, len(body)), d)
		writeRPC(w, id, d, res, e)
	case wire.MethodStream:
		req := s.sendParams(caller, "jsonrpc", d, params, len(body))
		snap, e := s.start(req)
		s.streamOrError(w, r, id, d, snap, e, true)
	case wire.MethodSubscribe:
		snap, e := s.subscribable(caller, d, params.Get("id").String())
		s.streamOrError(w, r, id, d, snap, e, false)
	default:
		res, e := s.unary(m, d, caller, params)
		writeRPC(w, id, d, res, e)
	}
}

// unary serves the task methods that answer once.
func (s *Server) unary(m wire.Method, d wire.Dialect, caller string, params gjson.Result) (any, *apiError) {
	switch m {
	case wire.MethodGetTask:
		snap, ok := s.tasks.get(caller, params.Get("id").String())
		if !ok {
			return nil, errNotFound(params.Get("id").String())
		}
		return wire.EncodeTask(d, s.wireTask(snap), historyLength(params)), nil
	case wire.MethodCancel:
		return s.cancel(caller, d, params.Get("id").String())
	case wire.MethodListTasks:
		return s.listTasks(caller, d, params.Get("contextId").String(), params.Get("status").String(),
			int(params.Get("pageSize").Int()), params.Get("pageToken").String(), historyLength(params), params.Get("includeArtifacts").Bool())
	}
	return nil, &apiError{code: -32601, reason: "METHOD_NOT_FOUND", msg: "method not offered"}
}

func historyLength(params gjson.Result) int {
	if h := params.Get("historyLength"); h.Exists() {
		return int(h.Int())
	}
	if h := params.Get("configuration.historyLength"); h.Exists() {
		return int(h.Int())
	}
	return -1
}

// sendParams reads a send's params (or an HTTP+JSON body) of dialect d.
func (s *Server) sendParams(caller, binding string, d wire.Dialect, params gjson.Result, n int) sendRequest {
	blocking := true
	if d == wire.V10 {
		blocking = !params.Get("configuration.returnImmediately").Bool()
	} else if b := params.Get("configuration.blocking"); b.Exists() {
		blocking = b.Bool()
	}
	return sendRequest{caller: caller, binding: binding, msg: wire.ParseMessage(params.Get("message")), bytes: n,
		blocking: blocking, historyLength: historyLength(params)}
}

// send serves message/send: the task at once (non-blocking), or when it
// ends, or when --response-window has passed, still working.
func (s *Server) send(ctx context.Context, req sendRequest, d wire.Dialect) (any, *apiError) {
	snap, e := s.start(req)
	if e != nil {
		return nil, e
	}
	if req.blocking {
		snap = s.wait(ctx, req.caller, snap, s.opts.ResponseWindow)
		if !wire.Terminal(snap.rec.State) {
			snap.status = windowNote(s.opts.ResponseWindow, snap.status)
		}
	}
	return wire.Wrap(d, "task", wire.EncodeTask(d, s.wireTask(snap), req.historyLength)), nil
}

func (s *Server) cancel(caller string, d wire.Dialect, id string) (any, *apiError) {
	found, running := s.tasks.cancelRun(caller, id)
	if !found {
		return nil, errNotFound(id)
	}
	snap, _ := s.tasks.get(caller, id)
	if !running {
		return nil, &apiError{-32002, "TASK_NOT_CANCELABLE", http.StatusBadRequest, "task " + id + " is " + snap.rec.State + ": it cannot be canceled", 0}
	}
	// The run ends within the runner's grace; the task is then canceled.
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-snap.done:
	case <-t.C:
	}
	snap, _ = s.tasks.get(caller, id)
	return wire.EncodeTask(d, s.wireTask(snap), -1), nil
}

// listTasks serves ListTasks: the caller's tasks, newest first, paged;
// their artifacts only when asked for (includeArtifacts, false by
// default in A2A 1.0): a page of 100 tasks of 16 MiB replies read whole
// would be 1.6 GB built for one request, and a reply kept in its own file
// is not read at all without them.
func (s *Server) listTasks(caller string, d wire.Dialect, contextID, state string, pageSize int, token string, hist int, artifacts bool) (any, *apiError) {
	if pageSize <= 0 {
		pageSize = 50
	}
	if pageSize > 100 {
		return nil, errInvalid("pageSize is at most 100")
	}
	if state != "" {
		state = wire.NormState(state)
	}
	all := s.tasks.list(caller, contextID, state)
	start := 0
	if token != "" {
		n, err := strconv.Atoi(token)
		if err != nil || n < 0 || n > len(all) {
			return nil, errInvalid("pageToken is not one this server gave")
		}
		start = n
	}
	end := min(start+pageSize, len(all))
	tasks := make([]any, 0, end-start)
	for _, snap := range all[start:end] {
		t := wireTask(snap, nil)
		if artifacts {
			t = s.wireTask(snap)
		} else {
			t.Artifacts = nil
		}
		tasks = append(tasks, wire.EncodeTask(d, t, hist))
	}
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return map[string]any{"tasks": tasks, "nextPageToken": next, "pageSize": pageSize, "totalSize": len(all)}, nil
}

// subscribable finds a task to subscribe to: in A2A 1.0 a finished task
// is an UnsupportedOperationError; 0.3 gets its last state and the end.
func (s *Server) subscribable(caller string, d wire.Dialect, id string) (snapshot, *apiError) {
	snap, ok := s.tasks.get(caller, id)
	if !ok {
		return snapshot{}, errNotFound(id)
	}
	if d == wire.V10 && wire.Terminal(snap.rec.State) {
		return snapshot{}, errUnsupported("task " + id + " is " + snap.rec.State + ": read it with GetTask")
	}
	return snap, nil
}

func writeRPC(w http.ResponseWriter, id json.RawMessage, d wire.Dialect, result any, e *apiError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := rpcResponse{JSONRPC: "2.0", ID: id, Result: result}
	status := http.StatusOK
	if e != nil {
		resp.Result, resp.Error = nil, toRPCError(d, e)
		if e.retry > 0 {
			retryAfter(w, e.retry)
			status = e.http
		}
	}
	writeJSON(w, status, resp)
}

// windowNote is the status of a task a blocking send returns still
// working (seed 003): it is not failed, and how to follow it.
func windowNote(window time.Duration, last string) string {
	note := "still running after the " + window.String() + " response window; it goes on and is not failed: read it with tasks/get (GetTask) or subscribe to it"
	if last != "" {
		note = last + " (" + note + ")"
	}
	return note
}
