package wire

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

func TestStatesRoundTrip(t *testing.T) {
	for v10, v03 := range V10States {
		if got := StateIn(V10, v03); got != v10 {
			t.Errorf("StateIn(1.0, %s) = %s, want %s", v03, got, v10)
		}
		if NormState(v10) != v03 || NormState(v03) != v03 || StateIn(V03, v03) != v03 {
			t.Errorf("%s/%s do not round-trip", v10, v03)
		}
	}
}

func TestMethodNamed(t *testing.T) {
	for _, m := range Methods {
		for _, d := range []Dialect{V03, V10} {
			got, gd, ok := MethodNamed(m.In(d))
			if !ok || got != m || gd != d {
				t.Errorf("MethodNamed(%s) = %v %s %v", m.In(d), got, gd, ok)
			}
		}
	}
	if _, _, ok := MethodNamed("tasks/pushNotificationConfig/set"); ok {
		t.Error("a method not offered was found")
	}
}

func encode(t *testing.T, v any) gjson.Result {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return gjson.ParseBytes(b)
}

func TestEncodeTaskEachDialect(t *testing.T) {
	task := Task{ID: "t1", ContextID: "c1", State: StateCompleted, Timestamp: "2026-01-01T00:00:00.000Z",
		Status:    &Message{ID: "s", Role: "agent", Parts: []Part{TextPart("done")}},
		Artifacts: []Artifact{{ID: "reply", Name: "reply", Parts: []Part{TextPart("hi"), FilePart("a.txt", "text/plain", []byte("x"))}}},
		History:   []Message{{ID: "m1", Role: "user", Parts: []Part{TextPart("q1")}}, {ID: "m2", Role: "user", Parts: []Part{TextPart("q2")}}}}
	v3 := encode(t, EncodeTask(V03, task, -1))
	if v3.Get("kind").String() != "task" || v3.Get("status.state").String() != "completed" || v3.Get("artifacts.0.parts.1.file.bytes").String() != "eA==" ||
		v3.Get("artifacts.0.parts.1.kind").String() != "file" || v3.Get("history.#").Int() != 2 || v3.Get("history.0.role").String() != "user" {
		t.Fatalf("0.3: %s", v3.Raw)
	}
	v1 := encode(t, Wrap(V10, "task", EncodeTask(V10, task, 1)))
	if v1.Get("task.kind").Exists() || v1.Get("task.status.state").String() != "TASK_STATE_COMPLETED" || v1.Get("task.artifacts.0.parts.1.raw").String() != "eA==" ||
		v1.Get("task.history.#").Int() != 1 || v1.Get("task.history.0.messageId").String() != "m2" || v1.Get("task.history.0.role").String() != "ROLE_USER" {
		t.Fatalf("1.0: %s", v1.Raw)
	}
	if su := encode(t, EncodeStatusUpdate(V03, task, true)); !su.Get("final").Bool() || su.Get("kind").String() != "status-update" {
		t.Fatalf("0.3 status update: %s", su.Raw)
	}
	if su := encode(t, EncodeStatusUpdate(V10, task, true)); su.Get("statusUpdate.final").Exists() || su.Get("statusUpdate.taskId").String() != "t1" {
		t.Fatalf("1.0 status update: %s", su.Raw)
	}
}

func TestParseMessageEachDialect(t *testing.T) {
	for _, raw := range []string{
		`{"kind":"message","messageId":"m","role":"user","contextId":"c","parts":[{"kind":"text","text":"hi"},{"kind":"file","file":{"name":"a.txt","bytes":"eA=="}}]}`,
		`{"messageId":"m","role":"ROLE_USER","contextId":"c","parts":[{"text":"hi"},{"raw":"eA==","filename":"a.txt"}]}`,
	} {
		m := ParseMessage(gjson.Parse(raw))
		if m.ID != "m" || m.Role != "user" || m.ContextID != "c" || len(m.Parts) != 2 || m.Parts[0].Text != "hi" || string(m.Parts[1].Bytes) != "x" || m.Parts[1].Name != "a.txt" {
			t.Fatalf("%s: %+v", raw, m)
		}
	}
}
