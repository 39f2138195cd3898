// Package wire is the A2A protocol as a2a-courier speaks it, in both
// dialects (A2A 0.3 and 1.0), shared by the client (package client) and
// the server of `a2a-courier serve` (internal/serve), so that there is one
// copy of the protocol: the method names of each dialect, the task states
// and their names, the parts of a message (Part, EncodePart, ParsePart),
// and the JSON a server answers with (tasks, messages, stream events).
// The client reads answers tolerantly with gjson (client.parseEvent); a
// server writes them with the encoders here, and the tests of
// internal/serve read what it writes with the client.
package wire

import (
	"strings"
)

// Dialect is the A2A protocol version spoken.
type Dialect string

// The dialects spoken.
const (
	V03 Dialect = "0.3"
	V10 Dialect = "1.0"
)

// Method is one A2A operation's JSON-RPC method name in each dialect.
type Method struct{ V03, V10 string }

// The operations, by their JSON-RPC method names (A2A 0.3 §7, 1.0 §9.4).
// tasks/list is 0.3's REST/gRPC name; its JSON-RPC binding has none.
var (
	MethodSend      = Method{"message/send", "SendMessage"}
	MethodStream    = Method{"message/stream", "SendStreamingMessage"}
	MethodGetTask   = Method{"tasks/get", "GetTask"}
	MethodListTasks = Method{"tasks/list", "ListTasks"}
	MethodCancel    = Method{"tasks/cancel", "CancelTask"}
	MethodSubscribe = Method{"tasks/resubscribe", "SubscribeToTask"}
)

// Methods lists the operations.
var Methods = []Method{MethodSend, MethodStream, MethodGetTask, MethodListTasks, MethodCancel, MethodSubscribe}

// In is the method's name in dialect d.
func (m Method) In(d Dialect) string {
	if d == V10 {
		return m.V10
	}
	return m.V03
}

// MethodNamed finds the operation a JSON-RPC method name names, and the
// dialect of the name.
func MethodNamed(name string) (Method, Dialect, bool) {
	for _, m := range Methods {
		switch name {
		case m.V03:
			return m, V03, true
		case m.V10:
			return m, V10, true
		}
	}
	return Method{}, "", false
}

// Task states, by their A2A 0.3 names (the names the client works with).
const (
	StateSubmitted     = "submitted"
	StateWorking       = "working"
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateCanceled      = "canceled"
	StateInputRequired = "input-required"
	StateRejected      = "rejected"
	StateAuthRequired  = "auth-required"
	StateUnknown       = "unknown"
)

// V10States maps A2A 1.0's state names to 0.3's.
var V10States = map[string]string{
	"TASK_STATE_SUBMITTED":      StateSubmitted,
	"TASK_STATE_WORKING":        StateWorking,
	"TASK_STATE_COMPLETED":      StateCompleted,
	"TASK_STATE_FAILED":         StateFailed,
	"TASK_STATE_CANCELED":       StateCanceled,
	"TASK_STATE_INPUT_REQUIRED": StateInputRequired,
	"TASK_STATE_REJECTED":       StateRejected,
	"TASK_STATE_AUTH_REQUIRED":  StateAuthRequired,
	"TASK_STATE_UNSPECIFIED":    StateUnknown,
}

// StateIn is the state s (a 0.3 name) as dialect d names it.
func StateIn(d Dialect, s string) string {
	if d != V10 {
		return s
	}
	for v10, v03 := range V10States {
		if v03 == s {
			return v10
		}
	}
	return "TASK_STATE_UNSPECIFIED"
}

// NormState reads a state name of either dialect, as its 0.3 name.
func NormState(v string) string {
	if m, ok := V10States[strings.ToUpper(v)]; ok {
		return m
	}
	v = strings.ToLower(strings.ReplaceAll(v, "_", "-"))
	// A v1.0 name this client does not know (a newer state), however
	// spelled: the name without the enum's prefix, never "task-state-…".
	if rest, ok := strings.CutPrefix(v, "task-state-"); ok {
		if v = rest; v == "" {
			return StateUnknown
		}
	}
	if v == "cancelled" {
		v = StateCanceled
	}
	return v
}

// Terminal reports a state no task leaves (A2A §4.3: completed, canceled,
// failed, rejected).
func Terminal(s string) bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}
