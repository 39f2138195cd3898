package mcpserver_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// shellText finds a string of a document that holds a command line or a
// flag for a shell ("" when none does).
func shellText(v any) string {
	switch v := v.(type) {
	case string:
		if strings.Contains(v, "a2a-courier ") || strings.Contains(v, " --") {
			return v
		}
	case map[string]any:
		for _, x := range v {
			if s := shellText(x); s != "" {
				return s
			}
		}
	case []any:
		for _, x := range v {
			if s := shellText(x); s != "" {
				return s
			}
		}
	}
	return ""
}

// call is a document's next step: the tool call it names.
func nextStep(t *testing.T, doc map[string]any, field string) (string, map[string]any) {
	t.Helper()
	step, _ := doc[field].(map[string]any)
	tool, _ := step["tool"].(string)
	args, _ := step["arguments"].(map[string]any)
	if tool == "" || args == nil {
		t.Fatalf("%s is not a tool call: %v", field, doc[field])
	}
	return tool, args
}

// The next steps of structuredContent are tool calls a client makes as
// they are, without a shell: the resume of a send still running, of
// several tasks with any, and the answer of a question (a2a-js's ask
// agent: the call, with the user's answer as message, completes the
// task); the error hint names the discover tool. No field of these
// documents holds a command line.
func TestNextStepsAreToolCalls(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	s := connect(t, c.options())

	res, doc, _ := s.call("send", map[string]any{"agent": "slow-agent", "message": "q", "wait_seconds": 1})
	id, _ := doc["context_id"].(string)
	tool, args := nextStep(t, doc, "resume")
	if want := map[string]any{"context_id": id, "wait_seconds": 1.0}; res.IsError || doc["state"] != "working" || tool != "result" || !reflect.DeepEqual(args, want) {
		t.Errorf("send's resume: %v %v", res.IsError, doc)
	}
	res, doc, _ = s.call(tool, args)
	if res.IsError || doc["state"] != "working" || doc["context_id"] != id || shellText(doc) != "" {
		t.Errorf("the resume, called: %v %v", res.IsError, doc)
	}
	_, fast, _ := s.call("send_async", map[string]any{"agent": "audit-agent", "message": "quick"})
	fastID, _ := fast["context_id"].(string)
	if tool, args = nextStep(t, fast, "resume"); tool != "result" || args["context_id"] != fastID {
		t.Errorf("send_async's resume: %v", fast)
	}
	res, doc, _ = s.call("result", map[string]any{"context_ids": []string{id, fastID}, "any": true, "wait_seconds": 30})
	tool, args = nextStep(t, doc, "resume")
	if res.IsError || doc["first"] != fastID || tool != "result" || fmt.Sprint(args) != fmt.Sprintf("map[any:true context_id:%s wait_seconds:30]", id) || shellText(doc) != "" {
		t.Errorf("result with any: %v %v", res.IsError, doc)
	}

	res, doc, text := s.call("send", map[string]any{"agent": "no-such-agent", "message": "q"})
	errDoc, _ := doc["error"].(map[string]any)
	if hint, _ := errDoc["hint"].(string); !res.IsError || !strings.Contains(hint, "the discover tool lists the agents") || !strings.Contains(text, "\nhint: "+hint) || shellText(doc) != "" {
		t.Errorf("an unknown agent: %v %v %q", res.IsError, doc, text)
	}

	js := interoptest.StartJS(t)
	ask := js.URL(interoptest.MountV1, interoptest.AgentAsk)
	res, doc, _ = s.call("send", map[string]any{"url": ask, "message": "start"})
	task, _ := doc["task_id"].(string)
	tool, args = nextStep(t, doc, "answer")
	if res.IsError || doc["state"] != "input_required" || tool != "send" || args["url"] != ask || args["task_id"] != task || args["message"] != nil || shellText(doc) != "" {
		t.Fatalf("the question's answer: %v %v", res.IsError, doc)
	}
	args["message"] = "Ada"
	res, doc, _ = s.call(tool, args)
	if r, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.Contains(r, "Hello, Ada!") {
		t.Errorf("the answer, called: %v %v", res.IsError, doc)
	}
}
