package serve

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/wire"
)

// httpStatusNames are google.rpc.Code names of the statuses errors use.
var httpStatusNames = map[int]string{400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 500: "INTERNAL", 503: "UNAVAILABLE", 409: "FAILED_PRECONDITION"}

// serveREST serves A2A 1.0's HTTP+JSON binding: POST /message:send,
// /message:stream, GET /tasks, /tasks/{id}, POST /tasks/{id}:cancel,
// POST or GET /tasks/{id}:subscribe.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	const d = wire.V10
	caller := callerOf(r)
	p := r.URL.Path
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost && (p == "/message:send" || p == "/message:stream"):
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		if !gjson.ValidBytes(body) {
			writeREST(w, nil, errInvalid("the body is not JSON"))
			return
		}
		req := s.sendParams(caller, "rest", d, gjson.ParseBytes(body), len(body))
		if p == "/message:send" {
			res, e := s.send(r.Context(), req, d)
			writeREST(w, res, e)
			return
		}
		snap, e := s.start(req)
		s.streamOrError(w, r, nil, d, snap, e, true)
	case r.Method == http.MethodGet && p == "/tasks":
		size, _ := strconv.Atoi(q.Get("pageSize"))
		hist := -1
		if h := q.Get("historyLength"); h != "" {
			hist, _ = strconv.Atoi(h)
		}
		res, e := s.listTasks(caller, d, q.Get("contextId"), q.Get("status"), size, q.Get("pageToken"), hist, q.Get("includeArtifacts") == "true")
		writeREST(w, res, e)
	case strings.HasPrefix(p, "/tasks/"):
		s.restTask(w, r, caller, strings.TrimPrefix(p, "/tasks/"))
	default:
		writeREST(w, nil, &apiError{-32601, "METHOD_NOT_FOUND", http.StatusNotFound, "no such route", 0})
	}
}

func (s *Server) restTask(w http.ResponseWriter, r *http.Request, caller, rest string) {
	const d = wire.V10
	id, verb, _ := strings.Cut(rest, ":")
	switch {
	case verb == "" && r.Method == http.MethodGet:
		snap, ok := s.tasks.get(caller, id)
		if !ok {
			writeREST(w, nil, errNotFound(id))
			return
		}
		hist := -1
		if h := r.URL.Query().Get("historyLength"); h != "" {
			hist, _ = strconv.Atoi(h)
		}
		writeREST(w, wire.EncodeTask(d, s.wireTask(snap), hist), nil)
	case verb == "cancel" && r.Method == http.MethodPost:
		res, e := s.cancel(caller, d, id)
		writeREST(w, res, e)
	case verb == "subscribe" && (r.Method == http.MethodPost || r.Method == http.MethodGet):
		snap, e := s.subscribable(caller, d, id)
		s.streamOrError(w, r, nil, d, snap, e, false)
	default:
		writeREST(w, nil, &apiError{-32601, "METHOD_NOT_FOUND", http.StatusNotFound, "no such route", 0})
	}
}

// writeREST answers an HTTP+JSON request: the result, or the error as a
// google.rpc.Status with its ErrorInfo.
func writeREST(w http.ResponseWriter, result any, e *apiError) {
	if e == nil {
		writeJSON(w, http.StatusOK, result)
		return
	}
	if e.retry > 0 {
		retryAfter(w, e.retry)
	}
	status := e.http
	if status == 0 {
		status = http.StatusBadRequest
	}
	info := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": e.reason, "domain": "a2a-protocol.org"}
	name := nonEmpty(httpStatusNames[status], "UNKNOWN")
	if e.reason == "TASK_NOT_CANCELABLE" || e.reason == "UNSUPPORTED_OPERATION" {
		name = "FAILED_PRECONDITION"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "status": name, "message": e.msg, "details": []any{info}}})
}
