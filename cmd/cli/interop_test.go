package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// These tests run a2a-courier against A2A servers we did not write: the
// a2a-go v0.3.3 and @a2a-js/sdk 1.3.0 servers of client/interop, started as
// processes. Each scenario runs against every server and mount.

type interopServer struct {
	name    string
	srv     *interoptest.Server
	mount   string
	dialect string // what the card should lead us to speak
	binding string // and in which binding: JSON-RPC or HTTP+JSON
}

func interopServers(t *testing.T) []interopServer {
	t.Helper()
	var (
		once sync.Once
		gos  *interoptest.Server
		js   *interoptest.Server
	)
	once.Do(func() {
		gos = interoptest.StartGo(t)
		js = interoptest.StartJS(t)
	})
	return []interopServer{
		{"a2a-go", gos, interoptest.MountGo, "0.3", "JSON-RPC"},
		{"a2a-js compat", js, interoptest.MountCompat, "1.0", "JSON-RPC"},
		{"a2a-js v1.0", js, interoptest.MountV1, "1.0", "JSON-RPC"},
		{"a2a-js v0.3", js, interoptest.MountV03, "0.3", "JSON-RPC"},
		// A card that offers HTTP+JSON alone: every scenario over that
		// binding.
		{"a2a-js HTTP+JSON", js, interoptest.MountREST, "1.0", "HTTP+JSON"},
	}
}

// interopResults collects the scenario × server matrix printed at the end.
type interopResults struct {
	mu   sync.Mutex
	rows map[string]map[string]string
}

func (m *interopResults) set(scenario, server, result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = map[string]map[string]string{}
	}
	if m.rows[scenario] == nil {
		m.rows[scenario] = map[string]string{}
	}
	m.rows[scenario][server] = result
}

func TestInteropMatrix(t *testing.T) {
	t.Parallel()
	servers := interopServers(t)
	var matrix interopResults
	scenarios := []struct {
		name string
		run  func(t *testing.T, s interopServer, h *harness)
	}{
		{"card discovery", interopCard},
		{"message reply", interopMessage},
		{"task, polled", interopTaskPolled},
		{"task, streamed", interopTaskStreamed},
		{"progress (--progress lines, whole answer)", interopProgress},
		{"send-async + result --wait", interopAsync},
		{"failed task", interopFailed},
		{"input-required round trip", interopInputRequired},
		{"an answer sent twice", interopAnswerTwice},
		{"cancel", interopCancel},
		{"unknown task", interopUnknownTask},
		{"bearer auth", interopBearer},
		{"protocol mismatch", interopMismatch},
		{"fetch by contextId", interopFetchContext},
		{"fetch --task", interopFetchTask},
		{"fetch --state", interopFetchState},
		{"tasks --url", interopTasksList},
	}
	t.Cleanup(func() {
		var b strings.Builder
		fmt.Fprintf(&b, "\n| scenario |")
		for _, s := range servers {
			fmt.Fprintf(&b, " %s |", s.name)
		}
		fmt.Fprintf(&b, "\n|---|")
		for range servers {
			b.WriteString("---|")
		}
		for _, sc := range scenarios {
			fmt.Fprintf(&b, "\n| %s |", sc.name)
			for _, s := range servers {
				fmt.Fprintf(&b, " %s |", nonEmptyStr(matrix.rows[sc.name][s.name], "not run"))
			}
		}
		t.Log(b.String())
	})
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for _, s := range servers {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					defer func() {
						result := "pass"
						if t.Failed() {
							result = "FAIL"
						}
						matrix.set(sc.name, s.name, result)
					}()
					sc.run(t, s, newHarness(t, nil))
				})
			}
		})
	}
}

// slowAnswer is the whole answer of the slow agent asked for n chunks: the
// artifact's chunks, then its final status text.
func slowAnswer(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "chunk %d/%d\n", i, n)
	}
	return b.String() + fmt.Sprintf("done after %d chunks", n)
}

func interopCard(t *testing.T, s interopServer, h *harness) {
	r := h.run("get-card", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "--json")
	r.expect(t, ExitOK)
	var card map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &card); err != nil || card["name"] == nil {
		t.Fatalf("%v %s", err, r.stdout)
	}
	r = h.run("get-card", "--url", s.srv.URL(s.mount, interoptest.AgentSlow))
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "(A2A "+s.dialect+" "+s.binding+", streaming)") {
		t.Errorf("the card should lead to A2A %s over %s with streaming:\n%s", s.dialect, s.binding, r.stdout)
	}
}

func interopMessage(t *testing.T, s interopServer, h *harness) {
	r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentEcho), "hello there", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.State != "completed" || d.Reply == nil || !strings.Contains(*d.Reply, "hello there") {
		t.Fatalf("%+v", d)
	}
}

func interopTaskPolled(t *testing.T, s interopServer, h *harness) {
	r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "chunks=3 delay=100ms", "--no-stream", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	if r.stdout != slowAnswer(3)+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func interopTaskStreamed(t *testing.T, s interopServer, h *harness) {
	r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "chunks=5 delay=50ms", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	// Every chunk, in order: an accumulated artifact, never only the last.
	if d.State != "completed" || *d.Reply != slowAnswer(5) || d.TaskID == "" {
		t.Fatalf("%+v reply %q", d, *d.Reply)
	}
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if rec, _ := st.Load(d.ContextID); rec.Via != "stream" {
		t.Errorf("via %q, want stream", rec.Via)
	}
}

// interopProgress: the task's status updates reach stderr as lines with
// --progress, polled or streamed, and stdout stays the whole answer: the
// artifact's chunks, then the final status text.
func interopProgress(t *testing.T, s interopServer, h *harness) {
	for _, mode := range []string{"--no-stream=false", "--no-stream"} {
		r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "chunks=3 delay=200ms", "--progress", "--poll-interval", "50ms", mode)
		r.expect(t, ExitOK)
		if r.stdout != slowAnswer(3)+"\n" || strings.Count(r.stderr, "progress: working: working\n") != 1 {
			t.Errorf("%s: stdout %q, stderr %q", mode, r.stdout, r.stderr)
		}
	}
}

// TestProgressBesideTheSpinner: on a terminal, the task's latest status
// text is drawn beside the spinner (the slow agent says "working" while
// it works); stdout is the whole answer alone.
func TestProgressBesideTheSpinner(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	h := newHarness(t, nil)
	h.errTTY = true
	r := h.run("send", "--url", js.URL(interoptest.MountV1, interoptest.AgentSlow), "chunks=3 delay=300ms")
	r.expect(t, ExitOK)
	if r.stdout != slowAnswer(3)+"\n" || !strings.Contains(r.stderr, "waiting for slow: working (") || strings.Contains(r.stderr, "progress:") {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// TestProgressOfADetachedWorker: the worker send-async starts records the
// task's latest status update (the slow agent says "working" while it
// works), and result --wait shows it: beside the spinner on a terminal, as
// lines with --progress; stdout is the whole answer alone, and the final
// record keeps no progress.
func TestProgressOfADetachedWorker(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	for _, c := range []struct {
		name   string
		errTTY bool
		args   []string
		want   string
	}{
		{"terminal", true, nil, "waiting for slow: working ("},
		{"--progress", false, []string{"--progress"}, "progress: working: working\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			r := h.run("send-async", "--url", js.URL(interoptest.MountREST, interoptest.AgentSlow), "chunks=12 delay=250ms", "--poll-interval", "100ms")
			r.expect(t, ExitOK)
			ctxID := strings.TrimSpace(r.stdout)
			h.errTTY = c.errTTY
			r = h.run(append([]string{"result", ctxID, "--wait", "--timeout", "45s"}, c.args...)...)
			r.expect(t, ExitOK)
			if r.stdout != slowAnswer(12)+"\n" || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "progress:") != (c.name == "--progress") ||
				strings.Count(r.stderr, "progress:") > 1 {
				t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
			}
			if rec := loadRecord(t, h, ctxID); rec.State != store.Completed || rec.Progress != nil {
				t.Errorf("record %s, progress %+v", rec.State, rec.Progress)
			}
			waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
		})
	}
}

// TestProgressOfSeveralTasks: result --wait on several tasks shows each
// one's status updates, with --progress as lines that name the task.
func TestProgressOfSeveralTasks(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	h := newHarness(t, nil)
	var ids []string
	for range 2 {
		r := h.run("send-async", "--url", js.URL(interoptest.MountREST, interoptest.AgentSlow), "chunks=12 delay=250ms", "--poll-interval", "100ms")
		r.expect(t, ExitOK)
		ids = append(ids, strings.TrimSpace(r.stdout))
	}
	r := h.run("result", ids[0], ids[1], "--wait", "--timeout", "45s", "--progress")
	r.expect(t, ExitOK)
	for _, id := range ids {
		if n := strings.Count(r.stderr, "progress: "+id+": working: working\n"); n != 1 {
			t.Errorf("%d progress lines of %s; stderr %q", n, id, r.stderr)
		}
	}
	if want := "[task " + ids[1] + " (slow): completed]\n" + slowAnswer(12) + "\n"; !strings.HasSuffix(r.stdout, want) {
		t.Errorf("stdout %q", r.stdout)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

func interopAsync(t *testing.T, s interopServer, h *harness) {
	r := h.run("send-async", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "chunks=3 delay=200ms", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	r = h.run("result", ctxID, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != slowAnswer(3)+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

func interopFailed(t *testing.T, s interopServer, h *harness) {
	r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentFail), "go", "--json")
	r.expect(t, ExitTaskFailed)
	d := decodeTask(t, r.stdout)
	if d.State != "failed" || !strings.Contains(d.Reason, interoptest.FailReason) || d.Error == nil {
		t.Fatalf("%+v", d)
	}
}

func interopInputRequired(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentAsk)
	r := h.run("send", "--url", url, "start", "--json")
	r.expect(t, ExitInputRequired)
	d := decodeTask(t, r.stdout)
	if d.State != "input_required" || *d.Reply != interoptest.AskQuestion || d.TaskID == "" ||
		d.Answer != fmt.Sprintf(`a2a-courier send --url %s --task %s --json -`, url, d.TaskID) {
		t.Fatalf("%+v", d)
	}
	r = h.runAnswer(t, d.Answer, "Ada")
	r.expect(t, ExitOK)
	got := decodeTask(t, r.stdout)
	if got.State != "completed" || !strings.Contains(*got.Reply, "Hello, Ada!") || got.ContextID != d.ContextID {
		t.Fatalf("%+v (first context %s)", got, d.ContextID)
	}
}

// interopAnswerTwice: an answer to a question already answered is refused
// here, before anything is sent (the agent would refuse it, and a refused
// answer must not stand in for the context's outcome); the record keeps
// the completed outcome, with times in order.
func interopAnswerTwice(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentAsk)
	r := h.run("send", "--url", url, "start", "--json")
	r.expect(t, ExitInputRequired)
	d := decodeTask(t, r.stdout)
	h.runAnswer(t, d.Answer, "Ada").expect(t, ExitOK)
	r = h.runAnswer(t, d.Answer, "Bob")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stdout, "no longer asks a question") {
		t.Errorf("second answer: %s", r.stdout)
	}
	rec := loadRecord(t, h, d.ContextID)
	if rec.State != store.Completed || !strings.Contains(rec.Reply, "Hello, Ada!") {
		t.Fatalf("the record of the context: %s %q", rec.State, rec.Reply)
	}
	if rec.SentAt == nil || rec.FinishedAt == nil || rec.SentAt.Before(rec.CreatedAt) || rec.FinishedAt.Before(*rec.SentAt) {
		t.Errorf("times out of order: created %v sent %v finished %v", rec.CreatedAt, rec.SentAt, rec.FinishedAt)
	}
}

func interopCancel(t *testing.T, s interopServer, h *harness) {
	r := h.run("send-async", "--url", s.srv.URL(s.mount, interoptest.AgentSlow), "chunks=100 delay=200ms", "--poll-interval", "100ms", "--no-stream")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	waitUntil(t, "the task id", 20*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.TaskID != ""
	})
	r = h.run("cancel", ctxID, "--json")
	r.expect(t, ExitOK)
	if d := decodeTask(t, r.stdout); d.State != "canceled" {
		t.Fatalf("%+v", d)
	}
	r = h.run("result", ctxID)
	r.expect(t, ExitTaskFailed)
	if !strings.Contains(r.stderr, "canceled") {
		t.Errorf("stderr %q", r.stderr)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

func interopUnknownTask(t *testing.T, s interopServer, h *harness) {
	r := h.run("cancel", "0193c2d4-0000-7000-8000-000000000000", "--url", s.srv.URL(s.mount, interoptest.AgentEcho), "--json")
	r.expect(t, ExitNotFound)
	var doc struct{ Error errorDoc }
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "not_found" {
		t.Errorf("%+v", doc.Error)
	}
}

func interopBearer(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentSecure)
	r := h.run("send", "--url", url, "who goes there")
	r.expect(t, ExitAuth)
	if !strings.Contains(r.stderr, "asks for a credential") {
		t.Errorf("no warning about the missing credential: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, "A2A_COURIER_TOKEN") || strings.Contains(r.stderr, "KIBANA_API_KEY") {
		t.Errorf("the hint does not speak of the agent's token: %q", r.stderr)
	}
	h.env["A2A_COURIER_TOKEN"] = "wrong-token"
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = s.srv.Origin
	r = h.run("send", "--url", url, "who goes there", "--json")
	r.expect(t, ExitAuth)
	if !strings.Contains(r.stdout, "A2A_COURIER_TOKEN") || strings.Contains(r.stdout, "KIBANA_API_KEY") {
		t.Errorf("the hint does not speak of the agent's token: %q", r.stdout)
	}
	h.env["A2A_COURIER_TOKEN"] = s.srv.Token
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = s.srv.Origin
	r = h.run("send", "--url", url, "who goes there")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "who goes there") {
		t.Errorf("stdout %q", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, s.srv.Token) {
		t.Error("the token reached the output")
	}
}

func interopMismatch(t *testing.T, s interopServer, h *harness) {
	other := map[string]string{"0.3": "1.0", "1.0": "0.3"}[s.dialect]
	r := h.run("send", "--url", s.srv.URL(s.mount, interoptest.AgentEcho), "hi", "--protocol", other, "--json")
	if s.name == "a2a-js compat" {
		// The compat mount's card offers both versions: no mismatch to
		// report, and no warning that it offers only the other.
		r.expect(t, ExitOK)
		if strings.Contains(r.stderr, "offers only") {
			t.Errorf("stderr %q", r.stderr)
		}
		return
	}
	if r.code == ExitOK {
		t.Fatalf("speaking %s to a %s-only agent succeeded: %s", other, s.dialect, r.stdout)
	}
	var doc struct {
		Error errorDoc `json:"error"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "protocol_version" || !strings.Contains(doc.Error.Hint, "does not speak this A2A version") {
		t.Fatalf("exit %d, error %+v", r.code, doc.Error)
	}
}

// interopFetchContext recovers a reply by contextId from another state
// directory (another machine): A2A 1.0 agents list the context's tasks;
// 0.3 agents cannot, and fetch says so (exit 2) instead of waiting for
// ever. Where it was sent, the record's task id is read in either version.
func interopFetchContext(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentSlow)
	r := h.run("send", "--url", url, "chunks=2 delay=10ms", "--json")
	r.expect(t, ExitOK)
	sent := decodeTask(t, r.stdout)
	want := slowAnswer(2)

	other := newHarness(t, nil) // an empty state directory
	r = other.run("fetch", sent.ContextID, "--url", url, "--json")
	if s.dialect == "1.0" {
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if d.State != "completed" || d.Reply == nil || *d.Reply != want || d.TaskID != sent.TaskID || d.ContextID != sent.ContextID || d.Note != "" {
			t.Fatalf("%+v", d)
		}
	} else {
		r.expect(t, ExitUsage)
		var doc struct{ Error errorDoc }
		json.Unmarshal([]byte(r.stdout), &doc)
		if doc.Error.Code != "unsupported" || !strings.Contains(doc.Error.Message, "A2A 0.3, which cannot list tasks by contextId") ||
			!strings.Contains(doc.Error.Hint, "a2a-courier result "+sent.ContextID) || !strings.Contains(doc.Error.Hint, "fetch --task <taskId> --url "+url) {
			t.Fatalf("%+v", doc.Error)
		}
	}
	// Where it was sent, the record names the agent and the task.
	r = h.run("fetch", sent.ContextID)
	r.expect(t, ExitOK)
	if r.stdout != want+"\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
}

// interopFetchTask reads one task by its id, in either version.
func interopFetchTask(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentFail)
	r := h.run("send", "--url", url, "go", "--json")
	r.expect(t, ExitTaskFailed)
	sent := decodeTask(t, r.stdout)

	other := newHarness(t, nil)
	r = other.run("fetch", "--task", sent.TaskID, "--url", url, "--json")
	r.expect(t, ExitTaskFailed)
	d := decodeTask(t, r.stdout)
	if d.State != "failed" || !strings.Contains(d.Reason, interoptest.FailReason) || d.ContextID != sent.ContextID || d.TaskID != sent.TaskID {
		t.Fatalf("%+v", d)
	}
	r = other.run("fetch", "--task", "0193c2d4-0000-7000-8000-000000000000", "--url", url, "--json")
	r.expect(t, ExitNotFound)
	// Without the agent, and no record of the task here.
	r = other.run("fetch", "--task", sent.TaskID)
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "--url <agent URL>") {
		t.Errorf("stderr %q", r.stderr)
	}
	// Where it was sent, the record names the agent.
	r = h.run("fetch", "--task", sent.TaskID)
	r.expect(t, ExitTaskFailed)
}

// TestBindingChoice: --binding overrides the card's choice, a binding the
// card does not offer (or gRPC) is refused before anything is sent (exit
// 2, unsupported or usage), and the record keeps the binding, so that the
// worker and fetch speak it too.
func TestBindingChoice(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	h := newHarness(t, nil)
	rest, compat := js.URL(interoptest.MountREST, interoptest.AgentEcho), js.URL(interoptest.MountCompat, interoptest.AgentEcho)
	for _, c := range []struct {
		args       []string
		code, want string
	}{
		{[]string{"send", "--url", rest, "hi", "--binding", "jsonrpc"}, "unsupported", "the card offers no JSON-RPC interface of A2A 0.3 or 1.x (it offers HTTP+JSON 1.0)"},
		{[]string{"send-async", "--url", compat, "hi", "--binding", "rest"}, "unsupported", "the card offers no HTTP+JSON interface of A2A 1.x"},
		{[]string{"get-card", "--url", compat, "--binding", "grpc"}, "usage", "gRPC is not supported: use jsonrpc or rest"},
		{[]string{"cancel", "t-1", "--url", rest, "--binding", "soap"}, "usage", `unknown A2A binding "soap"`},
	} {
		r := h.run(append(c.args, "--json")...)
		r.expect(t, ExitUsage)
		var doc struct{ Error errorDoc }
		if json.Unmarshal([]byte(r.stdout), &doc); doc.Error.Code != c.code || !strings.Contains(doc.Error.Message, c.want) || doc.Error.Hint == "" {
			t.Errorf("%v: %+v", c.args, doc.Error)
		}
	}
	r := h.run("send-async", "--url", js.URL(interoptest.MountREST, interoptest.AgentSlow), "chunks=2 delay=50ms", "--binding", "rest", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	h.run("result", ctxID, "--wait", "--timeout", "30s").expect(t, ExitOK)
	if rec := loadRecord(t, h, ctxID); rec.Target.Binding != "rest" || rec.Target.Endpoint != js.URL(interoptest.MountREST, interoptest.AgentSlow) || rec.Reply != slowAnswer(2) {
		t.Errorf("target %+v, reply %q", rec.Target, rec.Reply)
	}
	// fetch with the record speaks the record's binding.
	if r := h.run("fetch", ctxID); r.code != ExitOK || r.stdout != slowAnswer(2)+"\n" {
		t.Errorf("fetch: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

// interopFetchState: fetch --state lists a context's tasks in one state
// (A2A 1.0 ListTasks' status filter) and reads the newest; A2A 0.3 has no
// task list, and fetch says so (exit 2).
func interopFetchState(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentSlow)
	first := decodeTask(t, h.run("send", "--url", url, "chunks=1 delay=1ms", "--json").stdout)
	r := h.run("send", "--url", url, "chunks=2 delay=1ms", "--context", first.ContextID, "--json")
	r.expect(t, ExitOK)
	second := decodeTask(t, r.stdout)
	other := newHarness(t, nil)
	r = other.run("fetch", first.ContextID, "--url", url, "--state", "completed", "--json")
	if s.dialect == "0.3" {
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stdout, `"code": "unsupported"`) {
			t.Errorf("%s", r.stdout)
		}
		return
	}
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.TaskID != second.TaskID || *d.Reply != slowAnswer(2) || !strings.Contains(d.Note, "newest of the 2 completed tasks") {
		t.Errorf("%+v (tasks %s, %s)", d, first.TaskID, second.TaskID)
	}
	other.run("fetch", first.ContextID, "--url", url, "--state", "failed").expect(t, ExitNotFound)
	other.run("fetch", first.ContextID, "--url", url, "--state", "sleeping").expect(t, ExitUsage)
}

// interopTasksList: tasks --url lists an A2A 1.0 agent's own tasks
// (ListTasks) by contextId and state, newest first, as --json rows, TSV
// when piped; an agent that cannot list them (A2A 0.3; a 0.3 server spoken
// to in 1.0 answers method-not-found) exits 2, code unsupported.
func interopTasksList(t *testing.T, s interopServer, h *harness) {
	url := s.srv.URL(s.mount, interoptest.AgentSlow)
	type listDoc struct {
		Source, URL string
		Tasks       []remoteTaskRow
		Total       int
		More        bool
		Error       errorDoc
	}
	list := func(want int, args ...string) listDoc {
		t.Helper()
		r := h.run(append([]string{"tasks", "--url", url, "--json"}, args...)...)
		r.expect(t, want)
		var d listDoc
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		return d
	}
	if s.dialect == "0.3" {
		cases := [][]string{{}, {"--context", "3f6c2e1a-7b4d-4e2a-9c1f-5d8e6a2b4c10"}}
		if s.name == "a2a-go" {
			// Spoken to in 1.0 (a2a-js's 0.3 mount refuses the version
			// itself: protocol mismatch covers that).
			cases = append(cases, []string{"--protocol", "1.0"})
		}
		for _, args := range cases {
			d := list(ExitUsage, args...)
			want := "this agent speaks A2A 0.3, which cannot list tasks"
			if len(args) > 0 && args[0] == "--protocol" {
				want = "this agent's server cannot list tasks (ListTasks answered JSON-RPC error -32601)"
			}
			if d.Error.Code != "unsupported" || !strings.HasPrefix(d.Error.Message, want) || strings.Contains(d.Error.Message, "contextId") != (len(args) > 0 && args[0] == "--context") ||
				!strings.Contains(d.Error.Hint, "`a2a-courier tasks` (without --url)") || !strings.Contains(d.Error.Hint, "fetch --task <taskId> --url "+url) {
				t.Errorf("%v: %+v", args, d.Error)
			}
		}
		return
	}
	first := decodeTask(t, h.run("send", "--url", url, "chunks=1 delay=1ms", "--json").stdout)
	time.Sleep(5 * time.Millisecond) // the status timestamps have millisecond precision
	second := decodeTask(t, h.run("send", "--url", url, "chunks=2 delay=1ms", "--context", first.ContextID, "--json").stdout)
	other := decodeTask(t, h.run("send", "--url", url, "chunks=1 delay=1ms", "--json").stdout)
	d := list(ExitOK, "--context", first.ContextID)
	want := []remoteTaskRow{{ContextID: first.ContextID, State: "completed", TaskID: second.TaskID, Summary: "done after 2 chunks"},
		{ContextID: first.ContextID, State: "completed", TaskID: first.TaskID, Summary: "done after 1 chunks"}}
	if d.Source != "remote" || d.URL != url || d.Total != 2 || d.More || len(d.Tasks) != 2 {
		t.Fatalf("%+v", d)
	}
	for i, row := range d.Tasks {
		if _, err := time.Parse(time.RFC3339Nano, row.UpdatedAt); err != nil {
			t.Errorf("row %d: updated_at %q", i, row.UpdatedAt)
		}
		if row.UpdatedAt = ""; row != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, row, want[i])
		}
	}
	if d := list(ExitOK, "--context", first.ContextID, "--state", "completed", "--limit", "1"); len(d.Tasks) != 1 || d.Tasks[0].TaskID != second.TaskID || d.Total != 2 || !d.More {
		t.Errorf("--limit 1: %+v", d)
	}
	if d := list(ExitOK, "--context", first.ContextID, "--state", "failed"); len(d.Tasks) != 0 || d.Total != 0 {
		t.Errorf("--state failed: %+v", d)
	}
	// Without --context, the other context's task is listed too.
	if d := list(ExitOK, "--state", "completed", "--limit", "0"); !slices.ContainsFunc(d.Tasks, func(r remoteTaskRow) bool { return r.TaskID == other.TaskID }) ||
		!slices.ContainsFunc(d.Tasks, func(r remoteTaskRow) bool { return r.TaskID == first.TaskID }) {
		t.Errorf("all completed tasks: %+v", d)
	}
	// Piped: one task a line, tab-separated.
	r := h.run("tasks", "--url", url, "--context", first.ContextID)
	r.expect(t, ExitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], first.ContextID+"\t"+second.TaskID+"\tcompleted\t") || !strings.HasSuffix(lines[0], "\tdone after 2 chunks") {
		t.Errorf("TSV %q", r.stdout)
	}
	h.run("tasks", "--url", url, "--state", "running").expect(t, ExitUsage)
	h.run("tasks", "--url", url, "--state", "sleeping").expect(t, ExitUsage)
	h.run("tasks", "--context", first.ContextID).expect(t, ExitUsage)
}
