package mcpserver_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

func reply(input string) string { return strings.ReplaceAll(replyTemplate, "{{input}}", input) }

func rows(doc map[string]any, key string) []map[string]any {
	var out []map[string]any
	list, _ := doc[key].([]any)
	for _, r := range list {
		m, _ := r.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Each tool runs its command, seen in what it did: the simulator's agents
// listed and its card read, the message (on stdin, never in argv) reaching
// the agent and the task recorded, a conversation continued by its
// context_id, the wait bounded by MaxWait, the reply read back, listed,
// shown, the task canceled.
func TestToolsRunTheirCommands(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	o := c.options()
	o.MaxWait = 2 * time.Second
	s := connect(t, o)

	_, doc, _ := s.call("discover", nil)
	var ids []string
	for _, a := range rows(doc, "agents") {
		ids = append(ids, a["id"].(string))
	}
	if got := strings.Join(ids, " "); !strings.Contains(got, "audit-agent") || !strings.Contains(got, "slow-agent") {
		t.Errorf("discover: %v", doc)
	}
	if res, doc, _ := s.call("get_card", map[string]any{"agent": "audit-agent"}); res.IsError || doc["name"] != "Audit Analyst" {
		t.Errorf("get_card: %v %v", res.IsError, doc)
	}

	checkSendTools(t, s, c, sim)
}

// checkSendTools: send and show; send_async and result; a wait bounded by
// MaxWait; fetch, history, tasks and cancel.
func checkSendTools(t *testing.T, s *session, c *courier, sim *agentbuildertest.Server) {
	t.Helper()
	// A message that would read as flags on a command line: it reaches
	// the agent as it is, on stdin.
	const msg = "--json --timeout 1s -v"
	res, doc, text := s.call("send", map[string]any{"agent": "audit-agent", "message": msg, "wait_seconds": 600})
	first, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "completed" || doc["reply"] != reply(msg) || text != reply(msg) || sim.Runs(first) != 1 {
		t.Fatalf("send: %v %v %q", res.IsError, doc, text)
	}
	if rec, err := c.record(first); err != nil || rec.State != "completed" {
		t.Errorf("the send's record: %v %+v", err, rec)
	}
	if l := c.lastRan(); l.stdin != msg || strings.Contains(strings.Join(l.args, " "), msg) {
		t.Errorf("the message went in argv %q, not stdin %q", l.args, l.stdin)
	}

	// context_id continues the conversation; max_chars cuts the reply.
	res, doc, _ = s.call("send", map[string]any{"agent": "audit-agent", "message": "and again", "context_id": first, "max_chars": 10})
	whole := reply("and again")
	if got, _ := doc["reply"].(string); res.IsError || doc["context_id"] != first || doc["reply_truncated"] != true ||
		!strings.HasPrefix(got, whole[:10]+"\n[… reply cut at 10 of 37 characters") || sim.Runs(first) != 2 {
		t.Errorf("send with context_id, max_chars: %v %v", res.IsError, doc)
	}
	res, doc, _ = s.call("show", map[string]any{"conversation": "a2a-" + first, "all_rounds": true})
	if r := rows(doc, "rounds"); res.IsError || len(r) != 2 || r[0]["input"] != msg || r[1]["reply"] != reply("and again") {
		t.Errorf("show all_rounds: %v %v", res.IsError, doc)
	}

	async := checkAsyncTools(t, s, c)
	checkReadTools(t, s, c, sim, async)
}

// checkAsyncTools: send_async hands the task to a worker; result follows
// it. It returns the task's contextId.
func checkAsyncTools(t *testing.T, s *session, c *courier) string {
	t.Helper()
	res, doc, _ := s.call("send_async", map[string]any{"agent": "audit-agent", "message": "long"})
	async, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "queued" || async == "" || c.lastRan().stdin != "long" {
		t.Fatalf("send_async: %v %v", res.IsError, doc)
	}
	if res, doc, _ := s.call("result", map[string]any{"context_id": async, "wait_seconds": 30}); res.IsError || doc["state"] != "completed" || doc["reply"] != reply("long") {
		t.Errorf("result: %v %v", res.IsError, doc)
	}
	return async
}

// checkReadTools: a send past MaxWait, then the tools that read and the
// one that cancels.
func checkReadTools(t *testing.T, s *session, c *courier, sim *agentbuildertest.Server, async string) {
	t.Helper()

	// wait_seconds past MaxWait (2 s): the send of a 30 s run returns
	// still running; result without wait_seconds answers at once.
	res, doc, _ := s.call("send", map[string]any{"agent": "slow-agent", "message": "q", "wait_seconds": 600})
	slow, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "working" || slow == "" || sim.Runs(slow) != 1 {
		t.Fatalf("send past MaxWait: %v %v", res.IsError, doc)
	}
	if res, doc, _ := s.call("result", map[string]any{"context_id": slow}); res.IsError || doc["state"] != "working" {
		t.Errorf("result, no wait: %v %v", res.IsError, doc)
	}

	// fetch reads the reply back from the server by context_id alone.
	if res, doc, _ := s.call("fetch", map[string]any{"context_id": async}); res.IsError || doc["state"] != "completed" || doc["reply"] != reply("long") {
		t.Errorf("fetch: %v %v", res.IsError, doc)
	}
	if res, doc, _ := s.call("history", map[string]any{"limit": 1}); res.IsError || len(rows(doc, "conversations")) != 1 {
		t.Errorf("history limit 1: %v %v", res.IsError, doc)
	}
	if res, doc, _ := s.call("history", nil); res.IsError || len(rows(doc, "conversations")) < 2 {
		t.Errorf("history: %v %v", res.IsError, doc)
	}
	res, doc, _ = s.call("tasks", map[string]any{"state": "running"})
	if r := rows(doc, "tasks"); res.IsError || len(r) != 1 || r[0]["context_id"] != slow {
		t.Errorf("tasks running: %v %v", res.IsError, doc)
	}
	if res, doc, _ := s.call("cancel", map[string]any{"context_id": slow}); res.IsError || doc["state"] != "canceled" || c.ledger()[slow] != "canceled" {
		t.Errorf("cancel: %v %v", res.IsError, doc)
	}
}

// The progress notifications of send and of result's wait carry the
// agent's latest status update (a2a-js's slow agent says "working" while
// it works), the one a terminal shows beside the spinner; the result's text
// is the reply alone.
func TestProgressCarriesTheAgentsStatus(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	c := newCourier(t, startSim(t))
	o := c.options()
	o.ProgressEvery = 50 * time.Millisecond
	s := connect(t, o)
	slow := js.URL(interoptest.MountV1, interoptest.AgentSlow)
	res, doc, text := s.call("send", map[string]any{"url": slow, "message": "chunks=12 delay=250ms", "wait_seconds": 60})
	id, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "completed" || text != doc["reply"] || strings.Contains(text, "progress") {
		t.Fatalf("send: %v %v %q", res.IsError, doc, text)
	}
	waitUntil(t, "send's notification with the status", 10*time.Second, func() bool {
		return slices.ContainsFunc(s.progress(), func(m string) bool {
			return strings.HasPrefix(m, "send: waiting") && strings.HasSuffix(m, "(context "+id+"); latest status: working: working")
		})
	})

	start := func() string {
		_, doc, _ := s.call("send_async", map[string]any{"url": slow, "message": "chunks=12 delay=250ms"})
		id, _ := doc["context_id"].(string)
		return id
	}
	if res, doc, text := s.call("result", map[string]any{"context_id": start(), "wait_seconds": 60}); res.IsError || doc["state"] != "completed" || text != doc["reply"] {
		t.Fatalf("result: %v %v %q", res.IsError, doc, text)
	}
	waitUntil(t, "result's notification with the status", 10*time.Second, func() bool {
		return slices.ContainsFunc(s.progress(), func(m string) bool {
			return strings.HasPrefix(m, "result: waiting, ") && strings.HasSuffix(m, "s; latest status: working: working")
		})
	})
	// Several tasks: the status names its task.
	ids := []string{start(), start()}
	if res, doc, text := s.call("result", map[string]any{"context_ids": ids, "wait_seconds": 60}); res.IsError || doc["pending"] != nil || strings.Contains(text, "progress") {
		t.Fatalf("result of both: %v %v %q", res.IsError, doc, text)
	}
	waitUntil(t, "result's notification naming a task", 10*time.Second, func() bool {
		return slices.ContainsFunc(s.progress(), func(m string) bool {
			return strings.HasPrefix(m, "result: waiting") &&
				(strings.HasSuffix(m, "; latest status: "+ids[0]+": working: working") || strings.HasSuffix(m, "; latest status: "+ids[1]+": working: working"))
		})
	})
}

// A generic A2A agent (a2a-js) by url: the echo agent's reply; the ask
// agent's question (exit 7) names the route of its answer, url and
// task_id, which completes the task.
func TestGenericAgentThroughTools(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	c := newCourier(t, startSim(t))
	s := connect(t, c.options())
	echo := js.URL(interoptest.MountV1, interoptest.AgentEcho)
	if res, doc, text := s.call("send", map[string]any{"url": echo, "message": "hi there"}); res.IsError || doc["reply"] != "echo: hi there" || text != "echo: hi there" {
		t.Errorf("send by url: %v %v %q", res.IsError, doc, text)
	}
	ask := js.URL(interoptest.MountV1, interoptest.AgentAsk)
	res, doc, text := s.call("send", map[string]any{"url": ask, "message": "start"})
	id, _ := doc["context_id"].(string)
	task, _ := doc["task_id"].(string)
	if want := "the agent asks (context " + id + "): " + interoptest.AskQuestion + "\nAnswer with the send tool: url \"" + ask + "\", task_id \"" + task +
		"\", the user's answer as message."; res.IsError || doc["state"] != "input_required" || task == "" || text != want {
		t.Fatalf("the question: %v %v %q", res.IsError, doc, text)
	}
	res, doc, text = s.call("send", map[string]any{"url": ask, "task_id": task, "message": "Ada"})
	if r, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.Contains(r, "Hello, Ada!") || text != r {
		t.Errorf("the answer: %v %v %q", res.IsError, doc, text)
	}
}

// Exit codes become results: 0 the reply; 7 the question and the route of
// the answer; 8 still running, the context_id and the tool that goes on;
// 6 and 5 a tool error with the message and the hint.
func TestExitCodesBecomeResults(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	o := c.options()
	o.DefaultWait = time.Second
	s := connect(t, o)

	if res, _, text := s.call("send", map[string]any{"agent": "audit-agent", "message": "the question"}); res.IsError || text != reply("the question") {
		t.Errorf("exit 0: %v %q", res.IsError, text)
	}
	res, doc, text := s.call("send", map[string]any{"agent": "asks", "message": "clean up", "wait_seconds": 30})
	id, _ := doc["context_id"].(string)
	if want := "the agent asks (context " + id + "): " + askPrompt + "\nAnswer with the send tool: agent \"asks\", context_id \"" + id +
		"\", the user's answer as message."; res.IsError || doc["state"] != "input_required" || text != want {
		t.Errorf("exit 7: %v %v %q", res.IsError, doc, text)
	}
	// The default wait (1 s here) of a 30 s run ("Call the result tool"
	// after the note a 9.5 run has, a sentence of its own).
	res, doc, text = s.call("send", map[string]any{"agent": "slow-agent", "message": "q"})
	id, _ = doc["context_id"].(string)
	if res.IsError || doc["state"] != "working" || id == "" || !strings.HasPrefix(text, "still running (context "+id+", state working)") ||
		!strings.Contains(strings.ToLower(text), `call the result tool with context_id "`+id+`" later; do not send the message again`) || c.ledger()[id] != "working" {
		t.Errorf("exit 8: %v %v %q", res.IsError, doc, text)
	}
	const unknown = "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"
	res, doc, text = s.call("fetch", map[string]any{"context_id": unknown})
	if res.IsError || doc["state"] != "working" || !strings.Contains(text, "Call the fetch tool again with the same arguments later") || strings.Contains(text, "Nothing is lost") {
		t.Errorf("exit 8 of fetch: %v %v %q", res.IsError, doc, text)
	}
	res, doc, text = s.call("send", map[string]any{"agent": "flaky-agent", "message": "try", "wait_seconds": 30})
	errDoc, _ := doc["error"].(map[string]any)
	if !res.IsError || doc["state"] != "failed" || errDoc["code"] != "task_failed" || !strings.Contains(text, "No complete response received from chat service") ||
		!strings.Contains(text, "\nhint: "+errDoc["hint"].(string)) {
		t.Errorf("exit 6: %v %v %q", res.IsError, doc, text)
	}
	res, doc, text = s.call("send", map[string]any{"agent": "no-such-agent", "message": "q"})
	errDoc, _ = doc["error"].(map[string]any)
	if !res.IsError || errDoc["code"] != "not_found" || !strings.Contains(text, "no-such-agent") || !strings.Contains(text, "\nhint: ") {
		t.Errorf("exit 5: %v %v %q", res.IsError, doc, text)
	}
}

// A waiting tool sends progress notifications naming the context the send
// announced; result --any names the first to finish and those still
// running.
func TestProgressWhileWaiting(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	o := c.options()
	o.ProgressEvery = 50 * time.Millisecond
	s := connect(t, o)
	res, doc, _ := s.call("send", map[string]any{"agent": "paced-agent", "message": "q", "wait_seconds": 30})
	id, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "completed" || doc["reply"] != "paced: q" {
		t.Fatalf("send: %v %v", res.IsError, doc)
	}
	// The notification handlers may run after the call returned.
	waitUntil(t, "a progress notification naming the context", 10*time.Second, func() bool {
		for _, m := range s.progress() {
			if strings.HasPrefix(m, "send: waiting") && strings.Contains(m, "(context "+id+")") {
				return true
			}
		}
		return false
	})

	_, doc, _ = s.call("send_async", map[string]any{"agent": "slow-agent", "message": "slow"})
	slow, _ := doc["context_id"].(string)
	_, doc, _ = s.call("send_async", map[string]any{"agent": "paced-agent", "message": "quick"})
	quick, _ := doc["context_id"].(string)
	res, doc, text := s.call("result", map[string]any{"context_ids": []string{slow, quick}, "any": true, "wait_seconds": 30})
	if want := "task " + quick + ": completed (the first to finish)\npaced: quick\nstill running: " + slow +
		". Nothing is lost: call the result tool with these context_ids later; do not send the messages again."; res.IsError || doc["first"] != quick || text != want {
		t.Errorf("result any: %v %v %q", res.IsError, doc, text)
	}
}

// A reply is cut at 20,000 characters by default; the whole is in the file
// the document names.
func TestMaxCharsDefault(t *testing.T) {
	t.Parallel()
	c := newCourier(t, startSim(t))
	s := connect(t, c.options())
	for _, tool := range []string{"send", "fetch"} {
		args := map[string]any{"agent": "wordy-agent", "message": "tell all"}
		if tool == "fetch" {
			args = map[string]any{"context_id": c.lastRanContext(t)}
		}
		res, doc, text := s.call(tool, args)
		file, _ := doc["reply_file"].(string)
		whole, _ := os.ReadFile(file)
		if r, _ := doc["reply"].(string); res.IsError || doc["reply_truncated"] != true || !strings.Contains(r, "\n[… reply cut at 20000 of ") ||
			len(whole) < 50000 || !strings.Contains(text, file) {
			t.Errorf("%s: %v, %d characters shown, file %q of %d bytes", tool, res.IsError, len([]rune(r)), file, len(whole))
		}
	}
}

// lastRanContext is the contextId of the only task in the ledger.
func (c *courier) lastRanContext(t *testing.T) string {
	t.Helper()
	l := c.ledger()
	if len(l) != 1 {
		t.Fatalf("ledger %v", l)
	}
	for id := range l {
		return id
	}
	return ""
}

// A bad argument is a tool error of one line and a hint, never run: no
// command line, no run on the simulator, no task in the ledger. An
// argument that would read as a flag of the command line is one.
func TestBadArgumentsAreRefused(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	s := connect(t, c.options())
	for _, bad := range []struct {
		tool, want string
		args       map[string]any
	}{
		{"send", `agent "--kibana-url=http://elsewhere.example" starts with '-'`, map[string]any{"agent": "--kibana-url=http://elsewhere.example", "message": "q"}},
		{"result", "starts with '-'", map[string]any{"context_ids": []string{"c-1", "--api-key-file=/etc/shadow"}}},
		{"fetch", "starts with '-'", map[string]any{"context_id": "--url=http://x"}},
		{"show", "starts with '-'", map[string]any{"conversation": "-v"}},
		{"cancel", "starts with '-'", map[string]any{"context_id": "--profile=x"}},
		{"send", "name the agent", map[string]any{"message": "q"}},
		{"send", "the message is empty", map[string]any{"agent": "audit-agent", "message": "  "}},
		{"send_async", "give agent or url, not both", map[string]any{"agent": "audit-agent", "url": "http://x", "message": "q"}},
		{"send", "max_chars must be 1 or more, not -5", map[string]any{"agent": "audit-agent", "message": "q", "max_chars": -5}},
		{"send", "wait_seconds must not be negative, not -1", map[string]any{"agent": "audit-agent", "message": "q", "wait_seconds": -1}},
		{"result", "wait_seconds must not be negative, not -0.5", map[string]any{"context_id": "c-1", "wait_seconds": -0.5}},
		{"tasks", "limit must be 1 or more, not -1", map[string]any{"limit": -1}},
		{"history", "limit must be 1 or more, not -3", map[string]any{"limit": -3}},
		{"fetch", "give context_id or task_id, not both", map[string]any{"context_id": "c-1", "task_id": "t-1", "url": "http://x"}},
		{"result", "give context_id (or context_ids)", nil},
		{"show", "give conversation", map[string]any{"conversation": ""}},
		{"cancel", "give context_id", map[string]any{"context_id": ""}},
		{"discover", `unknown argument "bogus"`, map[string]any{"bogus": 1}},
		{"tasks", `unknown arguments "bogus", "other"`, map[string]any{"bogus": 1, "other": 2}},
		{"tasks", `argument "limit" must be an integer`, map[string]any{"limit": "ten"}},
	} {
		res, doc, text := s.call(bad.tool, bad.args)
		lines := strings.Split(text, "\n")
		errDoc, _ := doc["error"].(map[string]any)
		if !res.IsError || len(lines) != 2 || !strings.Contains(lines[0], bad.want) || !strings.HasPrefix(lines[1], "hint: ") || errDoc["code"] != "usage" {
			t.Errorf("%s %v: %v %q %v", bad.tool, bad.args, res.IsError, lines, doc)
		}
	}
	if n := c.ranCount(); n != 0 || sim.TotalRuns() != 0 || len(c.ledger()) != 0 {
		t.Errorf("a refused call ran: %d command lines, %d runs, ledger %v", n, sim.TotalRuns(), c.ledger())
	}
}

// An argument outside the tool's input schema (one it does not take, one
// missing, one of another type) is refused in the tool's terms, naming the
// argument and what the tool takes, not in the SDK's (`validating
// "arguments": validating root: unexpected additional properties
// ["bogus"]`, a Go decoder's "cannot unmarshal"); nothing runs.
func TestArgumentsOutsideTheSchemaRefusedInWords(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	s := connect(t, c.options())
	const sendTakes = "the send tool takes agent, url, files, data, message, context_id, task_id, wait_seconds and max_chars"
	const historyTakes = "the history tool takes agent and limit"
	for _, bad := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send", map[string]any{"agent": "audit-agent", "message": "q", "bogus": 1},
			`unknown argument "bogus"; ` + sendTakes + "\nhint: leave it out: each argument is described in the tool's input schema (tools/list)"},
		{"send", map[string]any{"agent": "audit-agent", "message": "q", "timeout": 5, "wait": true},
			`unknown arguments "timeout", "wait"; ` + sendTakes + "\nhint: leave it out: each argument is described in the tool's input schema (tools/list)"},
		{"send", map[string]any{"agent": "audit-agent"}, `missing argument "message": the send tool needs it` + "\nhint: " + sendTakes},
		{"send", map[string]any{"agent": "audit-agent", "message": 5}, `argument "message" must be a string, not 5` + "\nhint: " + sendTakes},
		{"send", map[string]any{"agent": "audit-agent", "message": "q", "files": "/tmp/x"}, `argument "files" must be an array, not a string` + "\nhint: " + sendTakes},
		{"history", map[string]any{"limit": "x"}, `argument "limit" must be an integer (in digits), not a string` + "\nhint: " + historyTakes},
		{"history", map[string]any{"limit": 3.5}, `argument "limit" must be an integer (in digits), not 3.5` + "\nhint: " + historyTakes},
		{"history", map[string]any{"limit": 1e30}, `argument "limit" must be an integer (in digits), not 1e+30` + "\nhint: " + historyTakes},
		{"send", map[string]any{"agent": "audit-agent", "message": "q", "wait_seconds": json.RawMessage("-1e400")},
			`argument "wait_seconds" must be a number within ±1.8e308, not -1e400` + "\nhint: " + sendTakes},
		{"result", map[string]any{"context_ids": []any{"c-1", 2}}, `argument "context_ids": item 2 must be a string, not 2` + "\nhint: the result tool takes context_id, context_ids, any, wait_seconds and max_chars"},
		{"cancel", map[string]any{}, `missing argument "context_id": the cancel tool needs it` + "\nhint: the cancel tool takes context_id and url"},
		{"discover", map[string]any{"agent": "x"}, `unknown argument "agent"; the discover tool takes url` + "\nhint: leave it out: each argument is described in the tool's input schema (tools/list)"},
	} {
		res, doc, text := s.call(bad.tool, bad.args)
		errDoc, _ := doc["error"].(map[string]any)
		if !res.IsError || text != bad.want || errDoc["code"] != "usage" || errDoc["message"] != strings.Split(bad.want, "\nhint: ")[0] {
			t.Errorf("%s %v:\n got %v %q %v\nwant %q", bad.tool, bad.args, res.IsError, text, doc, bad.want)
		}
	}
	if n := c.ranCount(); n != 0 || sim.TotalRuns() != 0 || len(c.ledger()) != 0 {
		t.Errorf("a refused call ran: %d command lines, %d runs, ledger %v", n, sim.TotalRuns(), c.ledger())
	}
}
