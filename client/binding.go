package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

// Binding is the protocol binding an A2A client speaks: JSON-RPC 2.0, or
// HTTP+JSON (the REST binding of A2A 1.0).
type Binding string

// The bindings the client speaks. The zero value is JSON-RPC, so configs
// written before bindings existed keep their meaning. gRPC is not spoken.
const (
	BindingJSONRPC Binding = "jsonrpc"
	BindingREST    Binding = "rest"
)

// ParseBinding reads a binding as a user or a config file names it:
// "jsonrpc" (or "json-rpc", "JSONRPC") and "rest" (or "http+json",
// "HTTP+JSON"); "" is "" (let the card decide). Anything else, gRPC
// included, is an error.
func ParseBinding(s string) (Binding, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", nil
	case "jsonrpc", "json-rpc":
		return BindingJSONRPC, nil
	case "rest", "http+json", "http-json", "httpjson":
		return BindingREST, nil
	case "grpc":
		return "", errors.New("gRPC is not supported: use jsonrpc or rest")
	}
	return "", fmt.Errorf("unknown A2A binding %q: use jsonrpc or rest", oneLine(s, 40))
}

// CardName is the binding's name in an agent card's protocolBinding
// ("JSONRPC", "HTTP+JSON").
func (b Binding) CardName() string {
	if b == BindingREST {
		return "HTTP+JSON"
	}
	return "JSONRPC"
}

// Label is the binding's name for people: "JSON-RPC" or "HTTP+JSON" (""
// is JSON-RPC).
func (b Binding) Label() string {
	if b == BindingREST {
		return "HTTP+JSON"
	}
	return "JSON-RPC"
}

func (b Binding) orDefault() Binding {
	if b == "" {
		return BindingJSONRPC
	}
	return b
}

// Media types of the HTTP+JSON binding: A2A 1.0.1 names
// application/a2a+json; servers of 1.0.0 and the SDKs' own clients use
// application/json, and servers answer with either.
const (
	a2aJSONType = "application/a2a+json"
	jsonType    = "application/json"
)

// reasonCodes maps the reasons of the google.rpc.ErrorInfo an HTTP+JSON
// error carries to the JSON-RPC codes of the same A2A errors, so that a
// caller branches on one code whatever the binding. INVALID_PARAMS is what
// a2a-js names a malformed request (RequestMalformedError).
var reasonCodes = map[string]int{
	"TASK_NOT_FOUND":                             -32001,
	"TASK_NOT_CANCELABLE":                        -32002,
	"PUSH_NOTIFICATION_NOT_SUPPORTED":            -32003,
	"UNSUPPORTED_OPERATION":                      -32004,
	"CONTENT_TYPE_NOT_SUPPORTED":                 -32005,
	"INVALID_AGENT_RESPONSE":                     -32006,
	"EXTENDED_AGENT_CARD_NOT_CONFIGURED":         -32007,
	"AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED": -32007,
	"EXTENSION_SUPPORT_REQUIRED":                 -32008,
	"VERSION_NOT_SUPPORTED":                      -32009,
	"INVALID_PARAMS":                             -32602,
	"INVALID_REQUEST":                            -32600,
	"METHOD_NOT_FOUND":                           -32601,
	"PARSE_ERROR":                                -32700,
	"INTERNAL_ERROR":                             -32603,
}

// restError turns an HTTP+JSON error whose ErrorInfo reason names an A2A
// error into the *Error the JSON-RPC binding gives for it: Kind KindRPC,
// RPCCode the error's JSON-RPC code, the HTTP status and the reason kept.
// Other errors (a 401, a bare 404 from a route the server lacks, a proxy's
// page) are left as the HTTP status classified them.
func restError(err error) error {
	var ce *Error
	if !errors.As(err, &ce) || ce.Reason == "" || ce.Kind == KindAuth || ce.Kind == KindForbidden || ce.Kind == KindBusy {
		return err
	}
	if code, ok := reasonCodes[strings.ToUpper(ce.Reason)]; ok {
		ce.Kind, ce.RPCCode = KindRPC, code
	}
	return err
}

// restBodyError is the *Error of an HTTP+JSON error object met where a
// result was expected (an SSE error event, or a 2xx body holding one):
// {"error":{"code":<HTTP status>,"status","message","details":[ErrorInfo]}}.
func restBodyError(op string, status int, e gjson.Result) *Error {
	msg := e.Get("message").String()
	if msg == "" {
		msg = nonEmpty(e.Get("status").String(), "no message")
	}
	ce := &Error{Kind: KindRPC, Op: op, StatusCode: status, Message: oneLine(msg, 300), Reason: errorInfoReason(e), Processed: true}
	if c := e.Get("code"); c.Type == gjson.Number && c.Int() >= 400 && c.Int() <= 599 {
		ce.StatusCode = int(c.Int())
	}
	if code, ok := reasonCodes[strings.ToUpper(ce.Reason)]; ok {
		ce.RPCCode = code
	} else {
		// An error with no A2A reason: a server failure or a refusal, as
		// its status says.
		ce.Kind = KindServer
		if ce.StatusCode >= 400 && ce.StatusCode < 500 {
			ce.Kind = KindBadRequest
		}
	}
	return ce
}

// restPath builds an HTTP+JSON path below the endpoint: the tenant, when
// there is one, goes first ("/{tenant}/tasks/{id}"), escaped as one path
// segment.
func (c *A2A) restPath(path string) string {
	if c.tenant == "" {
		return path
	}
	return "/" + escapeSegment(c.tenant) + path
}

// escapeSegment escapes s as one path segment, ':' included: the binding
// puts verbs after a colon ("/tasks/{id}:cancel"), so a colon inside an id
// must not read as one.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}

// CheckTaskState refuses a task state name ListTasks cannot filter by
// (before anything is asked of the agent).
func CheckTaskState(s string) error {
	if s == "" {
		return nil
	}
	_, err := restState(s)
	return err
}

// restState is the state filter of ListTasks on the wire: the TASK_STATE_*
// name of a state given in either spelling.
func restState(s string) (string, error) {
	n := normStateName(strings.TrimSpace(s))
	for wire, norm := range v10States {
		if norm == n && norm != "unknown" {
			return wire, nil
		}
	}
	return "", fmt.Errorf("unknown task state %q: use submitted, working, input-required, auth-required, completed, canceled, failed or rejected", oneLine(s, 40))
}

// restDo sends one HTTP+JSON request and returns the body of its 2xx
// answer. The body goes as application/a2a+json; a server that refuses
// that media type before doing anything (HTTP 415, or reason
// CONTENT_TYPE_NOT_SUPPORTED) is asked again, once, with
// application/json, which this client then keeps using.
func (c *A2A) restDo(ctx context.Context, op, method, path string, query url.Values, body []byte, idempotent bool) (gjson.Result, error) {
	for attempt := 0; ; attempt++ {
		r := &request{op: op, method: method, path: c.restPath(path), query: query, body: body, idempotent: idempotent,
			header: map[string]string{"Accept": a2aJSONType + ", " + jsonType}}
		if body != nil {
			r.header["Content-Type"] = c.restContentType()
		}
		resp, err := c.t.do(ctx, r)
		if err != nil {
			if attempt == 0 && body != nil && c.refusedMediaType(err) {
				continue
			}
			return gjson.Result{}, restError(err)
		}
		doc := gjson.ParseBytes(resp.body)
		if e := doc.Get("error"); e.IsObject() && !doc.Get("id").Exists() && !doc.Get("task").Exists() && !doc.Get("message").Exists() {
			// An error object in a 2xx answer: not the binding's way,
			// but its meaning is plain.
			return gjson.Result{}, c.t.redact(restBodyError(op, resp.status, e))
		}
		return doc, nil
	}
}

// restContentType is the media type request bodies are sent as.
func (c *A2A) restContentType() string {
	if c.plainJSON.Load() {
		return jsonType
	}
	return a2aJSONType
}

// refusedMediaType reports a refusal of application/a2a+json, and
// remembers to send application/json from then on. Such a refusal comes
// before the server reads the request, so sending it again cannot run
// anything twice.
func (c *A2A) refusedMediaType(err error) bool {
	if c.plainJSON.Load() {
		return false
	}
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	if ce.StatusCode == http.StatusUnsupportedMediaType || strings.EqualFold(ce.Reason, "CONTENT_TYPE_NOT_SUPPORTED") &&
		strings.Contains(strings.ToLower(ce.Message), "content-type") {
		c.plainJSON.Store(true)
		return true
	}
	return false
}
