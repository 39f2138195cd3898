package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/skill"
)

// What assistants tripped on, trying the tool as a new user would (issue
// 15), each against the simulator.

// The commands printed for the next step run as the caller ran the first:
// --timeout as given, and --json.
func TestPrintedCommandsKeepTheCallersFlags(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 20 * time.Second })
	h := newHarness(t, sim)
	r := h.run("send", "asks", "drop the old indices", "--timeout", "90s", "--json")
	r.expect(t, ExitInputRequired)
	d := decodeTask(t, r.stdout)
	if want := "a2a-courier send asks --context " + d.ContextID + " --json --timeout 1m30s -"; d.Answer != want {
		t.Errorf("answer %q, want %q", d.Answer, want)
	}
	r = h.run("send", "asks", "drop them", "--timeout", "90s")
	r.expect(t, ExitInputRequired)
	ctxID := startedContext(r.stderr)
	if want := "answer with (the answer on stdin): a2a-courier send asks --context " + ctxID + " --timeout 1m30s -"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	r = h.run("send", "audit-agent", "a long one", "--timeout", "1s")
	r.expect(t, ExitStillRunning)
	ctxID = startedContext(r.stderr)
	if want := "resume with: a2a-courier result " + ctxID + " --wait --timeout 1s\n"; !strings.HasSuffix(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	r = h.run("result", ctxID, "--wait", "--timeout", "1s", "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); d.Resume != "a2a-courier result "+ctxID+" --wait --timeout 1s --json" {
		t.Errorf("resume %q", d.Resume)
	}
	// --progress is kept too.
	r = h.run("result", ctxID, "--wait", "--timeout", "1s", "--progress", "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); d.Resume != "a2a-courier result "+ctxID+" --wait --timeout 1s --progress --json" {
		t.Errorf("resume %q", d.Resume)
	}
	h.run("cancel", ctxID)
}

// An agent given by its name gets the id discover knows; -v shows each
// request, never the key.
func TestAgentNameAndVerbose(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "chat-agent", Name: "Chat", Description: "Chats.", RunTime: time.Millisecond})
	})
	h := newHarness(t, sim)
	r := h.run("send", "chat", "hello")
	checkOneLineError(t, r, ExitNotFound, "chat")
	if !strings.Contains(r.stderr, `hint: did you mean chat-agent (named "Chat")? an agent is given by its id`) {
		t.Errorf("stderr %q", r.stderr)
	}
	// A slip of the keyboard in the id.
	r = h.run("send", "chat-agnet", "hello")
	checkOneLineError(t, r, ExitNotFound, "chat-agnet")
	if !strings.Contains(r.stderr, "hint: did you mean chat-agent (named \"Chat\")? `a2a-courier discover` lists the agents of this space") {
		t.Errorf("stderr %q", r.stderr)
	}
	if sim.TotalRuns() != 0 {
		t.Errorf("%d runs", sim.TotalRuns())
	}
	r = h.run("-v", "send", "chat-agent", "hello")
	r.expect(t, ExitOK)
	for _, want := range []string{"http: GET " + sim.URL + "/api/agent_builder/a2a/chat-agent.json → 200 OK (",
		"http: POST " + sim.URL + "/api/agent_builder/a2a/chat-agent → 200 OK ("} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, secret := range []string{testKey, strings.TrimRight(testKey, "="), "test:key", "ApiKey", "Authorization"} {
		if strings.Contains(r.stderr, secret) {
			t.Errorf("-v shows %q:\n%s", secret, r.stderr)
		}
	}
	if r = h.run("send", "chat-agent", "again"); strings.Contains(r.stderr, "http: ") {
		t.Errorf("requests shown without -v: %s", r.stderr)
	}
}

// With only named profiles, "not configured" says how to select one, and
// what a selected profile lacks; config show lists them (never a key);
// doctor names what is missing and its --json has the set-up steps.
func TestProfilesWhenNotConfigured(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := writeConfig(t, h, "profiles:\n  lab:\n    kibana_url: http://localhost:5601\n    api_key: c2VjcmV0OmtleQ==\n  prod:\n    kibana_url: https://prod.example.com\n", 0o600)
	r := h.run("discover")
	checkOneLineError(t, r, ExitUsage, "not configured: KIBANA_URL and KIBANA_API_KEY not set; no profile is selected: the config file ("+path+") has 2 profiles lab, prod, and the profile in use, default, is not one of them")
	if !strings.Contains(r.stderr, "hint: select one: --profile lab, or "+shellcmd.EnvSet("A2A_COURIER_PROFILE", "lab")+", or make it the default: a2a-courier config set default-profile lab") {
		t.Errorf("hint: %s", r.stderr)
	}
	r = h.run("discover", "--profile", "prod")
	checkOneLineError(t, r, ExitUsage, "not configured: KIBANA_API_KEY not set, nor in profile prod of "+path)
	if !strings.Contains(r.stderr, shellcmd.FromFile("a2a-courier config set api-key --profile prod", "key-file")) {
		t.Errorf("hint: %s", r.stderr)
	}

	r = h.run("config", "show", "--json")
	var show struct {
		Profiles []struct {
			Name      string `json:"name"`
			KibanaURL string `json:"kibana_url"`
			HasKey    bool   `json:"api_key_set"`
			Selected  bool   `json:"selected"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &show); err != nil || len(show.Profiles) != 2 || show.Profiles[0].Name != "lab" ||
		!show.Profiles[0].HasKey || show.Profiles[1].HasKey || show.Profiles[1].KibanaURL != "https://prod.example.com" || show.Profiles[0].Selected {
		t.Errorf("config show: %v %s", err, r.stdout)
	}
	if strings.Contains(r.stdout, "c2VjcmV0") {
		t.Errorf("config show shows the key: %s", r.stdout)
	}

	r = h.run("doctor", "--json")
	var doc struct {
		Checks []struct{ Name, Status, Detail, Hint string } `json:"checks"`
		Setup  []string                                      `json:"setup"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != ExitUsage {
		t.Fatalf("doctor: %d %v %s", r.code, err, r.stdout)
	}
	if c := doc.Checks[0]; c.Status != "fail" || !strings.Contains(c.Detail, "no profile is selected") || !strings.HasPrefix(c.Hint, "select one: --profile lab") ||
		len(doc.Setup) != 3 || !strings.Contains(doc.Setup[0], "Create API key") {
		t.Errorf("doctor: %+v", doc)
	}
	os.Remove(path)
	r = h.run("doctor")
	if !strings.Contains(r.stdout, "✗ configuration          not configured: KIBANA_URL and KIBANA_API_KEY not set") ||
		!strings.Contains(r.stdout, "hint: follow the set-up steps below") || !strings.Contains(r.stdout, "set up a2a-courier in three steps:") {
		t.Errorf("doctor without configuration:\n%s", r.stdout)
	}
}

// skill show --json is a JSON document (the version's rules are
// internal/buildinfo's test).
func TestSkillShowJSONAndVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.run("skill", "show", "--json")
	r.expect(t, ExitOK)
	var d skill.Doc
	exe, _ := filepath.Abs(os.Args[0])
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.Name != "a2a-courier" || d.Content != string(skill.Content(exe)) || !strings.HasPrefix(d.Body, "# a2a-courier") {
		t.Errorf("skill show --json: %v %.200s", err, r.stdout)
	}
}

// A send its caller's tool timeout kills (SIGKILL: no handler runs) has
// already said "task <ctx> started" on stderr, and tasks lists the task:
// the contextId is not lost, and result brings the reply of the one run.
func TestKilledSendIsInTheLedger(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 4 * time.Second })
	p := newProc(t, sim)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := p.cmd(ctx, "Summarise the audit log", "send", "audit-agent", "-", "--timeout", "60s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ctxID string
	lines := bufio.NewScanner(stderr)
	for ctxID == "" && lines.Scan() {
		ctxID = startedContext(lines.Text())
	}
	if ctxID == "" {
		cmd.Process.Kill()
		t.Fatal("no 'task <ctx> started' line")
	}
	// Killed while it waits for the reply (the caller's timeout is
	// shorter than the run), as it was seen.
	waitUntil(t, "the message to reach the agent", 20*time.Second, func() bool { return sim.Runs(ctxID) == 1 })
	cmd.Process.Kill()
	cmd.Wait()
	r := p.run("tasks", "--json")
	var doc struct {
		Tasks []struct {
			ContextID string `json:"context_id"`
			Agent     string `json:"agent"`
			State     string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Tasks) != 1 || doc.Tasks[0].ContextID != ctxID ||
		doc.Tasks[0].Agent != "audit-agent" || doc.Tasks[0].State == "completed" {
		t.Fatalf("tasks after the kill: %v %s", err, r.stdout)
	}
	r = p.run("result", ctxID, "--wait", "--timeout", "40s", "--json")
	if d := decodeTask(t, r.stdout); r.code != ExitOK || d.State != "completed" || sim.Runs(ctxID) != 1 {
		t.Errorf("result after the kill: %d %+v, %d runs", r.code, d, sim.Runs(ctxID))
	}
	p.waitWorkersExit()
}
