package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// fetch of a generic agent's context that no local record names, where
// the agent lists several tasks, says in its note how the task was
// chosen, and the commands that list the others and read another are
// said as the tools that do them; a context the agent lists no task of is
// an error whose hint names the result tool. No text holds a command
// line.
func TestFetchTextsInToolTerms(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	js := interoptest.StartJS(t)
	slow := js.URL(interoptest.MountV1, interoptest.AgentSlow)
	a := newCourier(t, sim)
	s := connect(t, a.options())
	res, doc, _ := s.call("send", map[string]any{"url": slow, "message": "chunks=1 delay=1ms", "wait_seconds": 30})
	ctxID, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "completed" || ctxID == "" {
		t.Fatalf("first send: %v %v", res.IsError, doc)
	}
	res, doc, _ = s.call("send", map[string]any{"url": slow, "message": "chunks=1 delay=1ms", "context_id": ctxID, "wait_seconds": 30})
	if res.IsError || doc["state"] != "completed" || doc["context_id"] != ctxID {
		t.Fatalf("second send: %v %v", res.IsError, doc)
	}

	// Another machine: no record of the context.
	b := connect(t, newCourier(t, sim).options())
	res, doc, _ = b.call("fetch", map[string]any{"context_id": ctxID, "url": slow})
	note, _ := doc["note"].(string)
	if res.IsError || doc["state"] != "completed" || !strings.HasPrefix(note, "no local record of this task: took the newest of the 2 tasks of context "+ctxID) ||
		!strings.HasSuffix(note, `; the tasks tool with url <agent URL> and context_id "`+ctxID+`" lists them, and the fetch tool with task_id <taskId> and url <agent URL> reads another`) ||
		shellText(doc) != "" {
		t.Errorf("fetch of several tasks: %v %v", res.IsError, doc)
	}

	const none = "3f6c2e1a-0000-4000-8000-0000000000aa"
	res, doc, text := b.call("fetch", map[string]any{"context_id": none, "url": slow})
	errDoc, _ := doc["error"].(map[string]any)
	if hint, _ := errDoc["hint"].(string); !res.IsError || !strings.HasSuffix(hint, `: the result tool with context_id "`+none+`" shows it where it was sent`) ||
		!strings.Contains(text, "\nhint: "+hint) || strings.Contains(text, "`") || strings.Contains(text, "a2a-courier result") {
		t.Errorf("fetch of no task: %v %v %q", res.IsError, doc, text)
	}
}

// An agent's reply is the agent's words: it reaches the client as the
// agent said it, though it names commands and flags as a shell would
// ("a2a-courier result X", "--context"); nothing says it in tool terms.
func TestReplyIsNeverRewritten(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	js := interoptest.StartJS(t)
	echo := js.URL(interoptest.MountV1, interoptest.AgentEcho)
	s := connect(t, newCourier(t, sim).options())
	const said = "run a2a-courier result c-1 --wait, then leave out --context; `a2a-courier fetch c-1` reads it"
	res, doc, text := s.call("send", map[string]any{"url": echo, "message": said, "wait_seconds": 30})
	if want := "echo: " + said; res.IsError || doc["state"] != "completed" || doc["reply"] != want || text != want {
		t.Errorf("the reply: %v %v %q", res.IsError, doc, text)
	}
}
