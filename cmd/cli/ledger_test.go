package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// tasks lists the local records newest first, filtered by state (running
// is the states a worker still moves), agent and limit; piped it is TSV,
// on a terminal a table, and --json the documented document.
func TestTasksCommand(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 30 * time.Second })
	h := newHarness(t, sim)
	done := h.run("send", "elastic-ai-agent", "What is up?")
	done.expect(t, ExitOK)
	doneID := startedContext(done.stderr)
	h.run("send", "flaky-agent", "Will you fail?").expect(t, ExitTaskFailed)
	slow := h.run("send-async", "audit-agent", "Take your time")
	slow.expect(t, ExitOK)
	slowID := strings.TrimSpace(slow.stdout)
	if startedContext(slow.stderr) != slowID {
		t.Errorf("send-async's stderr %q does not name %s", slow.stderr, slowID)
	}

	r := h.run("tasks")
	r.expect(t, ExitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], slowID+"\taudit-agent\t") || !strings.HasPrefix(lines[2], doneID+"\telastic-ai-agent\tcompleted\t") ||
		!strings.HasSuffix(lines[2], "\tEcho: What is up?") || !strings.Contains(lines[1], "\tflaky-agent\tfailed\t") ||
		!strings.HasSuffix(lines[1], "No complete response received from chat service") {
		t.Fatalf("tasks:\n%s", r.stdout)
	}
	if _, err := time.Parse(time.RFC3339, strings.Split(lines[2], "\t")[3]); err != nil {
		t.Errorf("piped, the fourth column is the created time: %v", err)
	}

	r = h.run("tasks", "--state", "running", "--json")
	r.expect(t, ExitOK)
	var doc struct {
		Source string    `json:"source"`
		Tasks  []taskRow `json:"tasks"`
		Total  int       `json:"total"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Source != "local" || doc.Total != 1 || len(doc.Tasks) != 1 || doc.Tasks[0].ContextID != slowID || doc.Tasks[0].Target != "kibana" ||
		doc.Tasks[0].State == "completed" || doc.Tasks[0].AgeSeconds < 0 {
		t.Errorf("running: %+v", doc)
	}
	r = h.run("tasks", "--agent", "ELASTIC-AI-AGENT", "--limit", "1")
	if !strings.HasPrefix(r.stdout, doneID) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("agent filter: %q", r.stdout)
	}
	r = h.run("tasks", "--limit", "2")
	if strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stderr, "2 of 3 tasks") {
		t.Errorf("limit: %q %q", r.stdout, r.stderr)
	}
	h.tty = true
	r = h.run("tasks", "--state", "completed")
	h.tty = false
	if !strings.Contains(r.stdout, "│ CONTEXT") || !strings.Contains(r.stdout, doneID) || !strings.Contains(r.stdout, "│ 0s ") {
		t.Errorf("terminal:\n%s", r.stdout)
	}
	r = h.run("tasks", "--state", "done")
	checkOneLineError(t, r, ExitUsage, `--state: unknown state "done": use running, queued,`)
	h.run("cancel", slowID).expect(t, ExitOK)
}

// prune drops the final records that ended before --older-than and their
// reply files, never a running one; --dry-run drops nothing.
func TestPruneCommand(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	old := h.run("send", "elastic-ai-agent", "Old question", "--max-chars", "5", "--json")
	old.expect(t, ExitOK)
	oldDoc := decodeTask(t, old.stdout)
	if oldDoc.ReplyFile == "" {
		t.Fatalf("no reply file: %s", old.stdout)
	}
	young := decodeTask(t, h.run("send", "elastic-ai-agent", "New question", "--json").stdout)
	st, err := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	// A record that ended 40 days ago, and one that never ended.
	ageRecord(t, st, oldDoc.ContextID, 40*24*time.Hour)
	running := &store.Record{ContextID: "3f6c2e1a-0000-4000-8000-00000000aaaa", MessageID: "m", Agent: "audit-agent", State: store.Queued,
		Message: "never sent", CreatedAt: time.Now().Add(-90 * 24 * time.Hour), Target: store.Target{Kind: store.TargetKibana, URL: sim.URL}}
	if err := st.Create(running); err != nil {
		t.Fatal(err)
	}
	ageRecord(t, st, running.ContextID, 90*24*time.Hour)

	r := h.run("prune", "--older-than", "30d", "--dry-run", "--json")
	r.expect(t, ExitOK)
	var doc struct {
		DryRun      bool        `json:"dry_run"`
		OlderThan   string      `json:"older_than"`
		Pruned      []prunedDoc `json:"pruned"`
		ReplyFiles  int         `json:"reply_files"`
		KeptRunning int         `json:"kept_running"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.DryRun || doc.OlderThan != "720h0m0s" || len(doc.Pruned) != 1 || doc.Pruned[0].ContextID != oldDoc.ContextID ||
		doc.Pruned[0].State != "completed" || doc.ReplyFiles != 1 || doc.KeptRunning != 1 {
		t.Fatalf("dry run: %s", r.stdout)
	}
	if _, err := st.Load(oldDoc.ContextID); err != nil {
		t.Fatalf("a dry run removed the record: %v", err)
	}
	r = h.run("prune", "--older-than", "30d")
	r.expect(t, ExitOK)
	if !strings.HasPrefix(r.stdout, oldDoc.ContextID+"\telastic-ai-agent\tcompleted\t") ||
		!strings.Contains(r.stderr, "dropped 1 task record and 1 reply file") || !strings.Contains(r.stderr, "kept: 1 not final") {
		t.Errorf("prune: %q %q", r.stdout, r.stderr)
	}
	if _, err := os.Stat(oldDoc.ReplyFile); !os.IsNotExist(err) {
		t.Errorf("the reply file is still there: %v", err)
	}
	for _, id := range []string{young.ContextID, running.ContextID} {
		if _, err := st.Load(id); err != nil {
			t.Errorf("%s was pruned: %v", id, err)
		}
	}
	if _, err := st.Load(oldDoc.ContextID); err == nil {
		t.Error("the old record is still there")
	}
	checkOneLineError(t, h.run("prune"), ExitUsage, "prune needs --older-than")
	checkOneLineError(t, h.run("prune", "--older-than", "soon"), ExitUsage, `--older-than: "soon" is not a positive age`)
}

// ageRecord moves a record's times back by d, as if it had been written
// then.
func ageRecord(t *testing.T, st *store.Store, id string, d time.Duration) {
	t.Helper()
	path := filepath.Join(st.Dir(), "tasks", id+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"created_at", "updated_at", "sent_at", "finished_at"} {
		if v, ok := m[k].(string); ok {
			tm, _ := time.Parse(time.RFC3339Nano, v)
			m[k] = tm.Add(-d).Format(time.RFC3339Nano)
		}
	}
	b, _ = json.Marshal(m)
	if err := writePrivate(path, b); err != nil {
		t.Fatal(err)
	}
}

// result on several contextIds: --any reports the first to finish (its
// reply and exit code) and names the others with the command that waits
// for them, keeping --timeout and --json; without --any it waits for all.
func TestResultOfSeveralTasks(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 2500 * time.Millisecond })
	h := newHarness(t, sim)
	slow := strings.TrimSpace(h.run("send-async", "audit-agent", "the long one").stdout)
	quick := strings.TrimSpace(h.run("send-async", "elastic-ai-agent", "the short one").stdout)

	r := h.run("result", slow, quick, "--wait", "--any", "--timeout", "20s", "--json")
	r.expect(t, ExitOK)
	var doc resultsDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err, r.stdout)
	}
	want := fmt.Sprintf("a2a-courier result %s --wait --any --timeout 20s --json", slow)
	if doc.First != quick || len(doc.Tasks) != 2 || doc.Tasks[1].Reply == nil || *doc.Tasks[1].Reply != "Echo: the short one" ||
		len(doc.Pending) != 1 || doc.Pending[0] != slow || doc.Resume != want {
		t.Fatalf("any: %s", r.stdout)
	}

	r = h.run("result", slow, quick, "--wait", "--timeout", "20s")
	r.expect(t, ExitOK)
	wantOut := fmt.Sprintf("[task %s (audit-agent): completed]\nReport for the long one: 14 escalations.\n[task %s (elastic-ai-agent): completed]\nEcho: the short one\n", slow, quick)
	if r.stdout != wantOut {
		t.Errorf("all:\n%s\nwant\n%s", r.stdout, wantOut)
	}
	failed := h.run("send", "flaky-agent", "fail", "--json")
	failedID := decodeTask(t, failed.stdout).ContextID
	r = h.run("result", quick, failedID, "--json")
	r.expect(t, ExitTaskFailed)
	doc = resultsDoc{}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Tasks[1].Error == nil || doc.Tasks[1].Error.Code != "task_failed" || doc.Pending != nil {
		t.Errorf("a failed one: %s", r.stdout)
	}
}

// result of several tasks names each task once on its line, failed ones
// too, and reports an unknown contextId in its place, as not found, beside
// the others' outcomes: the exit code is the first, in the order given,
// that did not complete (5 for one not found), 8 while one still runs;
// with --any the known ones are waited for.
func TestResultOfSeveralWithAFailedAndAnUnknownOne(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 1500 * time.Millisecond })
	h := newHarness(t, sim)
	quick := decodeTask(t, h.run("send", "elastic-ai-agent", "the short one", "--json").stdout).ContextID
	failed := decodeTask(t, h.run("send", "flaky-agent", "fail", "--json").stdout).ContextID
	const unknown = "3f6c2e1a-0000-4000-8000-000000000000"

	r := h.run("result", quick, failed)
	r.expect(t, ExitTaskFailed)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 3 || lines[1] != "Echo: the short one" {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	for i, id := range map[int]string{0: quick, 2: failed} {
		if !strings.HasPrefix(lines[i], "[task "+id+" (") || strings.Count(lines[i], id) != 1 {
			t.Errorf("line %q does not name task %s once", lines[i], id)
		}
	}
	if !strings.Contains(lines[2], "failed: No complete response received from chat service]") {
		t.Errorf("the failed line %q does not say why", lines[2])
	}

	for _, tc := range []struct {
		ids  []string
		code int
	}{
		{[]string{quick, failed, unknown}, ExitTaskFailed},
		{[]string{quick, unknown, failed}, ExitNotFound},
		{[]string{quick, unknown}, ExitNotFound},
		{[]string{unknown, "4f6c2e1a-0000-4000-8000-000000000000"}, ExitNotFound},
	} {
		r := h.run(append([]string{"result"}, tc.ids...)...)
		r.expect(t, tc.code)
		for _, id := range tc.ids {
			if strings.Count(r.stdout, "[task "+id) != 1 {
				t.Errorf("%v: task %s is not on one line of its own:\n%s", tc.ids, id, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "[task "+unknown+": not_found: no local record on this machine]") ||
			!strings.Contains(r.stderr, "a2a-courier fetch "+unknown) {
			t.Errorf("%v: stdout:\n%s\nstderr:\n%s", tc.ids, r.stdout, r.stderr)
		}
		r = h.run(append(append([]string{"result"}, tc.ids...), "--json")...)
		r.expect(t, tc.code)
		var doc resultsDoc
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Tasks) != len(tc.ids) {
			t.Fatalf("%v: %v %s", tc.ids, err, r.stdout)
		}
		for i, id := range tc.ids {
			d := doc.Tasks[i]
			if d.ContextID != id {
				t.Errorf("%v: task %d is %s", tc.ids, i, d.ContextID)
			}
			if id == unknown && (d.State != "not_found" || d.Error == nil || d.Error.Code != "not_found" || !strings.Contains(d.Error.Hint, "a2a-courier fetch "+id)) {
				t.Errorf("%v: the unknown one: %+v %+v", tc.ids, d, d.Error)
			}
			if id == quick && (d.State != "completed" || *d.Reply != "Echo: the short one") {
				t.Errorf("%v: the known one: %+v", tc.ids, d)
			}
		}
	}

	// --any: an unknown id does not keep the known one from being waited
	// for, and is not the one that finished.
	slow := strings.TrimSpace(h.run("send-async", "audit-agent", "the long one").stdout)
	r = h.run("result", unknown, slow, "--wait", "--any", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	var doc resultsDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.First != slow || len(doc.Tasks) != 2 ||
		doc.Tasks[0].State != "not_found" || doc.Tasks[1].State != "completed" || doc.Pending != nil {
		t.Fatalf("--any: %v %s", err, r.stdout)
	}
	r = h.run("result", unknown, slow, "--wait", "--any", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != "[task "+slow+" (audit-agent): completed]\nReport for the long one: 14 escalations.\n" {
		t.Errorf("--any, text:\n%s", r.stdout)
	}
	// --any with nothing known to wait for: not found, at once.
	r = h.run("result", unknown, "--any", "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitNotFound)
}

// A result that is still running when --any's wait ends exits 8 with the
// command that waits again.
func TestResultAnyStillRunning(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 30 * time.Second })
	h := newHarness(t, sim)
	a := strings.TrimSpace(h.run("send-async", "audit-agent", "one").stdout)
	b := strings.TrimSpace(h.run("send-async", "audit-agent", "two").stdout)
	defer h.run("cancel", a)
	defer h.run("cancel", b)
	r := h.run("result", a, b, "--wait", "--any", "--timeout", "1s")
	r.expect(t, ExitStillRunning)
	if r.stdout != "" || !strings.Contains(r.stderr, "still running: "+a+", "+b+"; wait for them with: a2a-courier result "+a+" "+b+" --wait --any --timeout 1s") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	// One left: "it".
	r = h.run("result", a, "--any")
	r.expect(t, ExitStillRunning)
	if !strings.Contains(r.stderr, "still running: "+a+"; wait for it with: a2a-courier result "+a+" --wait --any") {
		t.Errorf("one left: stderr %q", r.stderr)
	}
}

// tasks --url with a state no agent knows is refused before the agent is
// asked (the URL here answers nothing).
func TestRemoteTasksStateCheckedFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.run("tasks", "--url", "http://127.0.0.1:1/agent", "--state", "bogus", "--json")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stdout, `unknown task state \"bogus\"`) || !strings.Contains(r.stdout, `"code": "usage"`) {
		t.Errorf("%s", r.stdout)
	}
}

// result's --timeout and --progress without --wait say that they do
// nothing (result looks once), and the look is made.
func TestResultWaitFlagsWithoutWait(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	r := h.run("send", "elastic-ai-agent", "quick", "--json")
	r.expect(t, ExitOK)
	id := decodeTask(t, r.stdout).ContextID
	r = h.run("result", id, "--timeout", "5s", "--progress")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "warning: --timeout and --progress apply to --wait: without it, result looks once") || r.stdout == "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	if r := h.run("result", id, "--wait", "--timeout", "5s", "--progress"); strings.Contains(r.stderr, "warning") {
		t.Errorf("with --wait: %q", r.stderr)
	}
}

// An id with no local record that is no UUID (a2a-courier's contextIds
// are) is a mistyped handle: its hint says so, not to fetch it (fetch
// would not find it either), alone or beside a known task. A contextId
// given twice is one task, reported once, in the order first given.
func TestResultOfAMistypedAndARepeatedID(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	quick := decodeTask(t, h.run("send", "elastic-ai-agent", "the short one", "--json").stdout).ContextID

	r := h.run("result", quick, "garbage", "--wait", "--any", "--json")
	var doc resultsDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Tasks) != 2 || doc.Tasks[1].Error == nil {
		t.Fatalf("%v %s", err, r.stdout)
	}
	if hint := doc.Tasks[1].Error.Hint; strings.Contains(hint, "fetch") || !strings.Contains(hint, "UUIDs") {
		t.Errorf("the hint of garbage: %q", hint)
	}
	r = h.run("result", "garbage")
	r.expect(t, ExitNotFound)
	if strings.Contains(r.stderr, "fetch") || !strings.Contains(r.stderr, "UUIDs") {
		t.Errorf("result garbage: %s", r.stderr)
	}

	r = h.run("result", quick, quick)
	r.expect(t, ExitOK)
	if r.stdout != "Echo: the short one\n" {
		t.Errorf("result A A:\n%s", r.stdout)
	}
	const unknown = "3f6c2e1a-0000-4000-8000-000000000000"
	r = h.run("result", unknown, quick, unknown, "--json")
	r.expect(t, ExitNotFound)
	doc = resultsDoc{}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Tasks) != 2 || doc.Tasks[0].ContextID != unknown || doc.Tasks[1].ContextID != quick {
		t.Errorf("result U A U: %v %s", err, r.stdout)
	}
}
