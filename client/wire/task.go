package wire

import "github.com/tidwall/gjson"

// Message is a message of a task's history or status, or a reply.
type Message struct {
	ID        string
	Role      string // "user" or "agent"
	ContextID string
	TaskID    string
	Parts     []Part
}

// Artifact is an output of a task.
type Artifact struct {
	ID    string
	Name  string
	Parts []Part
}

// Task is a task as a server holds it.
type Task struct {
	ID, ContextID string
	// State is the 0.3 name; Timestamp RFC 3339 UTC.
	State     string
	Timestamp string
	// Status is the status message, nil for none.
	Status    *Message
	Artifacts []Artifact
	History   []Message
}

// RoleIn is a role ("user", "agent") as dialect d names it.
func RoleIn(d Dialect, role string) string {
	if d != V10 {
		return role
	}
	if role == "user" {
		return "ROLE_USER"
	}
	return "ROLE_AGENT"
}

// NormRole reads a role of either dialect as "user" or "agent".
func NormRole(r string) string {
	switch r {
	case "user", "ROLE_USER":
		return "user"
	}
	return "agent"
}

func encodeParts(d Dialect, parts []Part) []map[string]any {
	out := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		if w, err := EncodePart(d, p); err == nil {
			out = append(out, w)
		}
	}
	return out
}

// EncodeMessage is m's wire form.
func EncodeMessage(d Dialect, m Message) map[string]any {
	w := map[string]any{"messageId": m.ID, "role": RoleIn(d, m.Role), "parts": encodeParts(d, m.Parts)}
	if d != V10 {
		w["kind"] = "message"
	}
	if m.ContextID != "" {
		w["contextId"] = m.ContextID
	}
	if m.TaskID != "" {
		w["taskId"] = m.TaskID
	}
	return w
}

func encodeStatus(d Dialect, t Task) map[string]any {
	s := map[string]any{"state": StateIn(d, t.State)}
	if t.Timestamp != "" {
		s["timestamp"] = t.Timestamp
	}
	if t.Status != nil {
		s["message"] = EncodeMessage(d, *t.Status)
	}
	return s
}

// EncodeArtifact is a's wire form.
func EncodeArtifact(d Dialect, a Artifact) map[string]any {
	w := map[string]any{"artifactId": a.ID, "parts": encodeParts(d, a.Parts)}
	if a.Name != "" {
		w["name"] = a.Name
	}
	return w
}

// EncodeTask is t's wire form (bare: GetTask's result, and 0.3's send
// result; Wrap it for 1.0's send result and stream events). historyLength
// < 0 keeps the whole history, 0 none, n the last n messages.
func EncodeTask(d Dialect, t Task, historyLength int) map[string]any {
	w := map[string]any{"id": t.ID, "contextId": t.ContextID, "status": encodeStatus(d, t)}
	if d != V10 {
		w["kind"] = "task"
	}
	if len(t.Artifacts) > 0 {
		arts := make([]map[string]any, 0, len(t.Artifacts))
		for _, a := range t.Artifacts {
			arts = append(arts, EncodeArtifact(d, a))
		}
		w["artifacts"] = arts
	}
	h := t.History
	if historyLength >= 0 && len(h) > historyLength {
		h = h[len(h)-historyLength:]
	}
	if len(h) > 0 {
		msgs := make([]map[string]any, 0, len(h))
		for _, m := range h {
			msgs = append(msgs, EncodeMessage(d, m))
		}
		w["history"] = msgs
	}
	return w
}

// EncodeStatusUpdate is a status-update event of t (0.3: with final).
func EncodeStatusUpdate(d Dialect, t Task, final bool) map[string]any {
	w := map[string]any{"taskId": t.ID, "contextId": t.ContextID, "status": encodeStatus(d, t)}
	if d != V10 {
		w["kind"], w["final"] = "status-update", final
	}
	return Wrap(d, "statusUpdate", w)
}

// EncodeArtifactUpdate is an artifact-update event carrying a whole
// artifact of t.
func EncodeArtifactUpdate(d Dialect, t Task, a Artifact) map[string]any {
	w := map[string]any{"taskId": t.ID, "contextId": t.ContextID, "artifact": EncodeArtifact(d, a), "lastChunk": true}
	if d != V10 {
		w["kind"] = "artifact-update"
	}
	return Wrap(d, "artifactUpdate", w)
}

// Wrap is v as dialect d carries an event or a send result: bare in 0.3
// (its kind says what it is), {key: v} in 1.0 (StreamResponse,
// SendMessageResponse).
func Wrap(d Dialect, key string, v map[string]any) map[string]any {
	if d != V10 {
		return v
	}
	return map[string]any{key: v}
}

// ParseMessage reads a message of either dialect (a send's params.message).
func ParseMessage(m gjson.Result) Message {
	out := Message{ID: m.Get("messageId").String(), Role: NormRole(m.Get("role").String()),
		ContextID: m.Get("contextId").String(), TaskID: m.Get("taskId").String()}
	m.Get("parts").ForEach(func(_, p gjson.Result) bool {
		if x, ok := ParsePart(p); ok {
			out.Parts = append(out.Parts, x)
		}
		return true
	})
	return out
}
