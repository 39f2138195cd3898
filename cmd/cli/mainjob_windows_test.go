package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// The main job on Windows as an assistant's process has it: no HOME, no
// A2A_COURIER_STATE_DIR or CONFIG_DIR, only the profile's folders. Every
// command that does the job runs as its own process (this test binary as
// a2a-courier.exe): discover, send, send-async with a detached worker,
// result, fetch, history, show, cancel and the MCP server's send; the
// state lands in %LOCALAPPDATA%\a2a-courier\state and the config in
// %APPDATA%\a2a-courier.
func TestWindowsMainJobInTheUsersProfile(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "slow-agent", Name: "Slow", RunTime: 20 * time.Second, Reply: "too late"})
	})
	profile := t.TempDir()
	local, roaming := filepath.Join(profile, "AppData", "Local"), filepath.Join(profile, "AppData", "Roaming")
	for _, d := range []string{local, roaming} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stateDir := filepath.Join(local, "a2a-courier", "state")
	p := &proc{t: t, env: map[string]string{
		"KIBANA_URL": sim.URL, "KIBANA_API_KEY": testKey, "A2A_COURIER_TEST_MAIN": "1", "A2A_COURIER_MAX_WAIT": "3m",
		"USERPROFILE": profile, "LOCALAPPDATA": local, "APPDATA": roaming, "Path": os.Getenv("Path"),
	}}
	killWorkersAtCleanup(t, stateDir)
	defer p.waitWorkersExitFrom(stateDir)
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(stateDir, "logs", "worker.log"))
			t.Logf("worker log (last 2 KiB): %s", b[max(0, len(b)-2048):])
		}
	}()

	r := p.run("config", "path")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, filepath.Join(roaming, "a2a-courier")) {
		t.Errorf("config path: %q", r.stdout)
	}
	r = p.run("discover")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "audit-agent") {
		t.Errorf("discover: %q", r.stdout)
	}
	r = p.run("send", "elastic-ai-agent", "hello", "--json")
	r.expect(t, ExitOK)
	sent := decodeTask(t, r.stdout)
	if sent.State != "completed" || *sent.Reply != "Echo: hello" {
		t.Fatalf("send: %+v", sent)
	}

	// send-async returns; its detached worker does the task.
	r = p.run("send-async", "audit-agent", "in the background", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	async := strings.TrimSpace(r.stdout)
	r = p.run("result", async, "--wait", "--timeout", "60s")
	r.expect(t, ExitOK)
	if r.stdout != "Report for in the background: 14 escalations.\n" || sim.Runs(async) != 1 {
		t.Errorf("result: %q, %d runs", r.stdout, sim.Runs(async))
	}
	st, err := store.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := st.Load(async); err != nil || rec.Workers != 1 {
		t.Fatalf("the record in %s: %v", stateDir, err)
	}
	r = p.run("fetch", async)
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "Report for in the background: 14 escalations.") {
		t.Errorf("fetch: %q", r.stdout)
	}
	r = p.run("history")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, sent.ContextID) || !strings.Contains(r.stdout, async) {
		t.Errorf("history lacks the conversations: %q", r.stdout)
	}
	r = p.run("show", sent.ContextID)
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "hello") || !strings.Contains(r.stdout, "Echo: hello") {
		t.Errorf("show: %q", r.stdout)
	}

	// cancel stops a run its worker works on.
	r = p.run("send-async", "slow-agent", "stop me", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	slow := strings.TrimSpace(r.stdout)
	waitUntil(t, "the slow task to be sent", 30*time.Second, func() bool {
		rec, err := st.Load(slow)
		return err == nil && rec.State == store.Working
	})
	r = p.run("cancel", slow, "--json")
	r.expect(t, ExitOK)
	if d := decodeTask(t, r.stdout); d.State != "canceled" {
		t.Errorf("cancel: %+v", d)
	}

	// The MCP server: initialize (the SDK's client), then a send.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := startMCP(t, ctx, p)
	defer m.cs.Close()
	_, doc, text := m.call("send", map[string]any{"agent": "elastic-ai-agent", "message": "over mcp"})
	if doc["state"] != "completed" || !strings.Contains(text, "Echo: over mcp") {
		t.Errorf("mcp send: %v %q", doc, text)
	}

	// Everything is in the profile; nothing made a HOME-style folder.
	recs, _ := filepath.Glob(filepath.Join(stateDir, "tasks", "*.json"))
	if len(recs) != 4 {
		t.Errorf("%d task records in %s, want 4", len(recs), stateDir)
	}
	for _, dot := range []string{".local", ".config"} {
		if _, err := os.Stat(filepath.Join(profile, dot)); err == nil {
			t.Errorf("%s was made in the profile", dot)
		}
	}
}

// waitWorkersExitFrom waits until the workers of stateDir are gone.
func (p *proc) waitWorkersExitFrom(stateDir string) {
	p.t.Helper()
	waitUntil(p.t, "workers to exit", 30*time.Second, func() bool { return len(workerPIDs(p.t, stateDir)) == 0 })
}
