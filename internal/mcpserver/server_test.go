package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The texts the tools say, from the commands' documents (pure functions).
// The tools themselves are tested with the real CLI behind them in
// real_test.go.

// The short text of several tasks' results names the first to finish and
// those still running; that of the ledger is a line a task.
func TestSummariesOfListsAndSeveralTasks(t *testing.T) {
	multi := `{"tasks":[{"context_id":"a","state":"working"},{"context_id":"b","state":"completed","reply":"B done"}],"first":"b","pending":["a"]}`
	if got := (&tools{}).summary(json.RawMessage(multi), 0, "result"); got != "task b: completed (the first to finish)\nB done\nstill running: a. Nothing is lost: call the result tool with these context_ids later; do not send the messages again." {
		t.Errorf("results: %q", got)
	}
	ledger := `{"source":"local","tasks":[{"context_id":"a","agent":"audit","state":"failed","age_seconds":754,"summary":"boom"},` +
		`{"context_id":"b","agent":"audit","state":"working","age_seconds":3,"summary":""}],"total":2}`
	if got := (&tools{}).summary(json.RawMessage(ledger), 0, "tasks"); got != "a\taudit\tfailed\t12m ago\tboom\nb\taudit\tworking\t3s ago" {
		t.Errorf("ledger: %q", got)
	}
	remote := `{"source":"remote","url":"http://a","agent":"echo","tasks":[{"context_id":"c1","state":"completed","task_id":"t1","updated_at":"2026-12-01T10:00:00Z","summary":"done"},` +
		`{"context_id":"c1","state":"working","task_id":"t2"}],"total":2,"more":false}`
	if got := (&tools{}).summary(json.RawMessage(remote), 0, "tasks"); got != "c1\ttask t1\tcompleted\t2026-12-01T10:00:00Z\tdone\nc1\ttask t2\tworking" {
		t.Errorf("remote: %q", got)
	}
	more := `{"source":"remote","url":"http://a","tasks":[{"context_id":"c1","state":"working","task_id":"t2"}],"total":1,"more":true}`
	if got := (&tools{}).summary(json.RawMessage(more), 0, "tasks"); !strings.HasSuffix(got, "\nthe agent has more: call tasks again with a larger limit, or with context_id or state") {
		t.Errorf("remote, more: %q", got)
	}
	if got := (&tools{}).summary(json.RawMessage(`{"source":"remote","url":"http://a","tasks":[],"total":0}`), 0, "tasks"); got != "the agent lists no tasks that match" {
		t.Errorf("remote, empty: %q", got)
	}
}

// The text of a question names the route its document's answer command
// takes: a generic agent's task (url or peer, task_id), a Kibana agent's
// context; the text of a task still running names the tool that goes on
// (fetch after fetch), and says nothing is lost only where a record is.
func TestNextStepTexts(t *testing.T) {
	ask := func(answer string) string {
		doc := fmt.Sprintf(`{"context_id":"c-1","agent":"ask","state":"input_required","reply":"Your name?","task_id":"t-1","answer":%q}`, answer)
		return (&tools{}).summary(json.RawMessage(doc), exitInputRequired, "send")
	}
	for answer, want := range map[string]string{
		"a2a-courier send --url http://127.0.0.1:9/a2a/ask --task t-1 --json -":         `url "http://127.0.0.1:9/a2a/ask", task_id "t-1"`,
		"a2a-courier send lab-peer --task 't 1' --timeout 30s --json -":                 `agent "lab-peer", task_id "t 1"`,
		"a2a-courier send audit-agent --context c-1 --json -":                           `agent "audit-agent", context_id "c-1"`,
		"a2a-courier send --url 'http://h/it'\\''s' --task t-1 --profile prod --json -": `url "http://h/it's", task_id "t-1"`,
		"": `agent "ask", context_id "c-1"`,
	} {
		if got := ask(answer); got != "the agent asks (context c-1): Your name?\nAnswer with the send tool: "+want+", the user's answer as message." {
			t.Errorf("%q: %q", answer, got)
		}
	}

	working := `{"context_id":"c-2","state":"working","reason":"the server has no reply stored yet","resume":"a2a-courier fetch c-2 --json"}`
	known := map[string]bool{"c-3": true}
	tl := &tools{o: Options{HasRecord: func(id string) bool { return known[id] }}}
	got := tl.summary(json.RawMessage(working), exitStillRunning, "fetch")
	if !strings.Contains(got, "Call the fetch tool again with the same arguments later") || strings.Contains(got, "result tool") ||
		strings.Contains(got, "Nothing is lost") || !strings.Contains(got, "the server has no reply stored yet") {
		t.Errorf("fetch, no record: %q", got)
	}
	known["c-2"] = true
	if got := tl.summary(json.RawMessage(working), exitStillRunning, "fetch"); !strings.Contains(got, `Nothing is lost: this machine has the task's record; the result tool with context_id "c-2" follows it.`) {
		t.Errorf("fetch, a record: %q", got)
	}
	sent := `{"context_id":"c-3","state":"working","resume":"a2a-courier result c-3 --wait --json"}`
	if got := tl.summary(json.RawMessage(sent), exitStillRunning, "send"); got != `still running (context c-3, state working): the task goes on in a background worker. `+
		`Nothing is lost: call the result tool with context_id "c-3" later; do not send the message again. With wait_seconds, result waits for the reply.` {
		t.Errorf("send: %q", got)
	}
	// A note (a failure that would leave no trace) is a sentence of its
	// own, and so is what follows it. (The command said it to the server
	// in tool terms: nextstep.MaxWait.)
	noted := `{"context_id":"c-3","state":"working","note":"no reply yet; on this release a failed run leaves no trace (…): it is followed for 38.5s more ` +
		`(its maximum wait of 40s, set on the command line (--max-wait) or in the config file (max_wait)), then it ends expired"}`
	if got := tl.summary(json.RawMessage(noted), exitStillRunning, "result"); got != `still running (context c-3, state working): the task goes on in a background worker. `+
		`No reply yet; on this release a failed run leaves no trace (…): it is followed for 38.5s more (its maximum wait of 40s, set on the command line (--max-wait) or in the config file (max_wait)), then it ends expired. `+
		`Call the result tool with context_id "c-3" later; do not send the message again. With wait_seconds, result waits for the reply.` {
		t.Errorf("a note: %q", got)
	}
	if got := (&tools{o: Options{HasRecord: func(string) bool { return false }}}).summary(json.RawMessage(sent), exitStillRunning, "send"); !strings.Contains(got, "background worker. Call the result tool") {
		t.Errorf("no record: %q", got)
	}
}

// What a command tells the server (Events) is kept: the first contextId,
// which closes started, and the newest status update alone, cut to
// maxProgressRunes; the command's stderr stays as it wrote it.
func TestEventsKeepTheTaskAndTheNewestProgress(t *testing.T) {
	st := &callState{started: make(chan struct{})}
	ev := st.events()
	if id, p := st.now(); id != "" || p != "" {
		t.Fatalf("told before anything: %q, %q", id, p)
	}
	ev.Progress("working: Calling tool search")
	ev.Started("3f6c2e1a")
	ev.Started("other") // a send tells one task; a second changes nothing
	ev.Progress("working: Calling tool esql")
	select {
	case <-st.started:
	default:
		t.Error("the started task did not close started")
	}
	if id, p := st.now(); id != "3f6c2e1a" || p != "working: Calling tool esql" {
		t.Errorf("told %q, %q", id, p)
	}
	ev.Progress("working: " + strings.Repeat("é", 300))
	if _, p := st.now(); len([]rune(p)) != maxProgressRunes || !strings.HasSuffix(p, "…") || !strings.HasPrefix(p, "working: éé") {
		t.Errorf("cut to %d runes: %q", len([]rune(p)), p)
	}
	var l lockedWriter
	for _, line := range []string{"task 3f6c2e1a started\n", "warning: slow\n"} {
		if n, err := l.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", line, n, err)
		}
	}
	if got, want := l.String(), "task 3f6c2e1a started\nwarning: slow\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}
