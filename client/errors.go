// Package client speaks to remote agents over HTTP: the Kibana Agent Builder REST
// API and A2A JSON-RPC. It knows nothing of terminals, flags or exit codes: it
// takes a context, an *http.Client and settings, and returns values and typed
// errors (*Error) that callers branch on with errors.As and Kind.
package client

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Kind classifies a failure so that a caller can decide what to do next
// (retry, recover by polling, report an exit code) without parsing text.
type Kind int

// The failure classes. New kinds are appended; existing values never change.
const (
	// KindUnexpected is anything the client could not classify.
	KindUnexpected Kind = iota
	// KindUnreachable: DNS failure, connection refused, no route.
	KindUnreachable
	// KindTLS: the TLS handshake or certificate verification failed.
	KindTLS
	// KindAuth: HTTP 401, the credentials were refused.
	KindAuth
	// KindForbidden: HTTP 403, the credentials lack a privilege or the space.
	KindForbidden
	// KindNotFound: HTTP 404 (agent, conversation, route) or a server's
	// "not found" reported with another status.
	KindNotFound
	// KindBadRequest: HTTP 400 or another 4xx the client caused.
	KindBadRequest
	// KindTooLarge: HTTP 413, the request body exceeds the server's limit.
	KindTooLarge
	// KindBusy: HTTP 429 or 503; RetryAfter holds the server's hint.
	KindBusy
	// KindServer: HTTP 5xx other than 503, HTML pages from proxies included.
	KindServer
	// KindConnection: the connection broke after the request left (reset,
	// EOF, idle close) or a local timeout fired; the server may still act.
	KindConnection
	// KindProtocol: a response that is not what the protocol promises:
	// not JSON, truncated, missing fields, or larger than the size cap.
	KindProtocol
	// KindRPC: an A2A error: a JSON-RPC error object inside an HTTP 200,
	// or an HTTP+JSON error whose ErrorInfo reason names an A2A error
	// (TASK_NOT_FOUND, …). RPCCode is set, to the error's JSON-RPC code in
	// either binding; over HTTP+JSON StatusCode and Reason are set too.
	KindRPC
	// KindAgentFailed: the agent ran and failed; the reply said so.
	KindAgentFailed
)

var kindNames = map[Kind]string{
	KindUnexpected:  "unexpected",
	KindUnreachable: "unreachable",
	KindTLS:         "tls",
	KindAuth:        "auth",
	KindForbidden:   "forbidden",
	KindNotFound:    "not_found",
	KindBadRequest:  "bad_request",
	KindTooLarge:    "too_large",
	KindBusy:        "busy",
	KindServer:      "server_error",
	KindConnection:  "connection_lost",
	KindProtocol:    "protocol",
	KindRPC:         "rpc_error",
	KindAgentFailed: "agent_failed",
}

// String returns the stable snake_case name of the kind.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ParseKind returns the kind whose String is name: the way back from the
// name a task record keeps. ok is false for a name no kind has.
func ParseKind(name string) (k Kind, ok bool) {
	for k, s := range kindNames {
		if s == name {
			return k, true
		}
	}
	return KindUnexpected, false
}

// Error is the one error type the client returns for remote failures.
type Error struct {
	Kind Kind
	// Op names what was being done, in lower case: "list agents".
	Op string
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// RPCCode is the JSON-RPC error code when Kind is KindRPC (over
	// HTTP+JSON, the code of the A2A error its reason names: -32001 for
	// TASK_NOT_FOUND); also set when a JSON-RPC error object came with an
	// HTTP error status.
	RPCCode int
	// Reason is the reason of the google.rpc.ErrorInfo a v1.0 server puts
	// in the error's data ("TASK_NOT_FOUND"), when there is one.
	Reason string
	// Message is the server's own explanation, cleaned to one short line.
	Message string
	// RetryAfter is the server's Retry-After hint, 0 when absent.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
	// Processed is set on protocol errors that show the server took the
	// request in (a truncated JSON body, a JSON-RPC answer of the wrong
	// shape), unlike an HTML page from a proxy or a login screen.
	Processed bool
	// Proxy is set when the proxy the environment names (HTTPS_PROXY,
	// HTTP_PROXY) failed: it could not be reached, or it refused the
	// tunnel to the server, and nothing reached the server; or when the
	// request went without it because its setting could not be read.
	Proxy *ProxyProblem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	switch {
	case e.Kind == KindRPC && e.StatusCode >= 300 && e.Reason != "":
		// An HTTP+JSON error: its status and reason are what came.
		fmt.Fprintf(&b, "HTTP %d %s", e.StatusCode, e.Reason)
	case e.Kind == KindRPC:
		fmt.Fprintf(&b, "JSON-RPC error %d", e.RPCCode)
	case e.StatusCode != 0:
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	default:
		b.WriteString(strings.ReplaceAll(e.Kind.String(), "_", " "))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(oneLine(e.Err.Error(), 300))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of err, or KindUnexpected when err is not an *Error.
func KindOf(err error) Kind {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return KindUnexpected
}

// IsKind reports whether err is an *Error of one of the given kinds.
func IsKind(err error, kinds ...Kind) bool {
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	for _, k := range kinds {
		if ce.Kind == k {
			return true
		}
	}
	return false
}

// MayHaveArrived reports whether a failed request may nonetheless have
// reached the server and started work there: the connection broke, a proxy
// gave up (502, 504, 520-526), the server failed in the middle (500), or its answer
// was cut short. Callers that must not send twice recover by reading
// instead of retrying. Refusals that prove nothing ran (4xx, 501, 503, an
// HTML page instead of JSON) are not in this class.
func MayHaveArrived(err error) bool {
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Kind {
	case KindConnection:
		return true
	case KindProtocol:
		return ce.Processed
	case KindServer:
		// Any 5xx but 501, 503 and 505 (classified elsewhere) and 511 (a
		// captive portal that let nothing through): a proxy's 520-526
		// (Cloudflare: the origin had the request and timed out, or broke
		// off) are like 502 and 504.
		return ce.StatusCode != 511
	}
	return false
}

// RetryLater reports whether a refused request may be sent again after a
// wait, even one that must never be sent twice: the server answered HTTP 429
// (rate limited), or 503 with a Retry-After (unavailable, come back then).
// Either proves that the server did not take the request in. A 503 without
// Retry-After, often a proxy's page, is only reported.
func RetryLater(err error) bool {
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindBusy {
		return false
	}
	return ce.StatusCode == 429 || ce.StatusCode == 503 && ce.RetryAfter > 0
}

// RetryAfterOf returns the server's Retry-After hint carried by err, 0 when
// there is none.
func RetryAfterOf(err error) time.Duration {
	var ce *Error
	if errors.As(err, &ce) && ce.Kind == KindBusy {
		return ce.RetryAfter
	}
	return 0
}

// oneLine squeezes s onto a single line of at most max runes: servers and
// proxies send multi-line HTML and stack traces that must not reach a
// terminal or a log as they are.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// statusCode returns the HTTP status of a failed request (0 when there was
// none).
func statusCode(err error) int {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.StatusCode
	}
	return 0
}
