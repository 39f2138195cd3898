package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// These tests run the program as separate processes (this test binary
// standing in for a2a-courier, see TestMain), with real detached workers,
// against a simulator on loopback.

type proc struct {
	t   *testing.T
	env map[string]string
}

func newProc(t *testing.T, sim *agentbuildertest.Server) *proc {
	t.Helper()
	p := &proc{t: t, env: map[string]string{
		"KIBANA_URL":            sim.URL,
		"KIBANA_API_KEY":        testKey,
		"A2A_COURIER_STATE_DIR": filepath.Join(t.TempDir(), "state"),
		"A2A_COURIER_TEST_MAIN": "1",
		"HOME":                  t.TempDir(),
		"PATH":                  os.Getenv("PATH"),
		"A2A_COURIER_MAX_WAIT":  "3m",
	}}
	killWorkersAtCleanup(t, p.env["A2A_COURIER_STATE_DIR"])
	return p
}

func (p *proc) cmd(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, os.Args[0], args...)
	for k, v := range p.env {
		c.Env = append(c.Env, k+"="+v)
	}
	c.Stdin = strings.NewReader(stdin)
	return c
}

func (p *proc) run(args ...string) result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err := startRetried(p.t, func() *exec.Cmd {
		c := p.cmd(ctx, "", args...)
		out.Reset()
		errb.Reset()
		c.Stdout, c.Stderr = &out, &errb
		return c
	})
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// startRetried starts the command mk makes and waits for it. A start that
// fails (the process never ran, so nothing of it was sent) is tried again,
// twice: Wine's CreateProcess fails now and then with "Internal error"
// under load. It returns Wait's error, or the last start's.
func startRetried(t *testing.T, mk func() *exec.Cmd) error {
	t.Helper()
	var err error
	for attempt := range 3 {
		c := mk()
		if err = c.Start(); err == nil {
			return c.Wait()
		}
		t.Logf("start %s (attempt %d): %v", c.Path, attempt+1, err)
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return err
}

func (p *proc) store() *store.Store {
	st, err := store.Open(p.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		p.t.Fatal(err)
	}
	return st
}

func decodeTask(t *testing.T, s string) taskDoc {
	t.Helper()
	var d taskDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("not a task document: %v\n%s", err, s)
	}
	return d
}

// workerPIDs finds the worker processes of a state directory that still
// run, by the pids the store records (worker locks) and the spawner logs:
// the same on every system, no /proc.
func workerPIDs(t *testing.T, stateDir string) []int {
	t.Helper()
	return proctest.Running(stateDir)
}

// killWorkers kills the workers that serve a state directory now (the
// holders of its worker locks).
func killWorkers(stateDir string) {
	for _, pid := range proctest.Workers(stateDir) {
		proctest.Kill(pid)
	}
}

func waitUntil(t *testing.T, what string, max time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(max)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitWorkersExit waits until the state directory's workers are gone, so
// the test's temp directory can be removed.
func (p *proc) waitWorkersExit() {
	p.t.Helper()
	waitUntil(p.t, "workers to exit", 30*time.Second, func() bool {
		return len(workerPIDs(p.t, p.env["A2A_COURIER_STATE_DIR"])) == 0
	})
}

func TestE2EProxyCutOnALongRun(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents[1].RunTime = 6 * time.Second
		o.Faults.ProxyCutAfter = 2 * time.Second
	})
	t.Run("send", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		r := p.run("send", "audit-agent", "thirty days", "--poll-interval", "500ms", "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if d.State != "completed" || *d.Reply != "Report for thirty days: 14 escalations." {
			t.Fatalf("%+v", d)
		}
		if n := sim.Runs(d.ContextID); n != 1 {
			t.Errorf("runs %d", n)
		}
	})
	t.Run("send-async then result --wait", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		defer p.waitWorkersExit()
		r := p.run("send-async", "audit-agent", "ninety days", "--poll-interval", "500ms")
		r.expect(t, ExitOK)
		ctxID := strings.TrimSpace(r.stdout)
		if err := store.CheckContextID(ctxID); err != nil {
			t.Fatalf("stdout is not a contextId: %q", r.stdout)
		}
		r = p.run("result", ctxID, "--wait", "--timeout", "30s")
		r.expect(t, ExitOK)
		if r.stdout != "Report for ninety days: 14 escalations.\n" {
			t.Errorf("stdout %q", r.stdout)
		}
		if n := sim.Runs(ctxID); n != 1 {
			t.Errorf("runs %d", n)
		}
	})
}

func TestE2EWorkerKilledMidRun(t *testing.T) {
	t.Parallel()
	// A run long enough that the worker is killed in its middle even on a
	// loaded machine (with 3 s, a CI run under load once saw the reply come
	// to the first worker before the kill).
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 8 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "kill me", "--poll-interval", "300ms", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.State != "queued" || d.Resume != "a2a-courier result "+d.ContextID+" --wait --json" {
		t.Fatalf("send-async doc %+v", d)
	}
	st := p.store()
	waitUntil(t, "the request to reach the server", 10*time.Second, func() bool {
		rec, err := st.Load(d.ContextID)
		return err == nil && rec.State == store.Working
	})
	// Once sent, the record keeps the message's hash and size, not its text.
	if b, _ := os.ReadFile(filepath.Join(st.TasksDir(), d.ContextID+".json")); strings.Contains(string(b), "kill me") {
		t.Errorf("the text stayed in the record after sending: %s", b)
	}
	pids := workerPIDs(t, p.env["A2A_COURIER_STATE_DIR"])
	if len(pids) != 1 {
		t.Fatalf("worker processes: %v", pids)
	}
	for what, read := range map[string]func(int) (string, error){"command line": proctest.CommandLine, "environment": proctest.Environment} {
		text, err := read(pids[0])
		if err != nil || text == "" {
			t.Fatalf("the worker's %s: %q, %v", what, text, err)
		}
		if strings.Contains(text, testKey) {
			t.Errorf("the API key is in the worker's %s", what)
		}
	}
	if err := proctest.Kill(pids[0]); err != nil {
		t.Fatalf("kill the worker: %v", err)
	}
	if _, done := sim.CompletedAt(d.ContextID); done {
		t.Fatalf("the run completed before the worker was killed: the test saw nothing")
	}
	waitUntil(t, "the lock to be freed", 5*time.Second, func() bool { return !st.Locked(d.ContextID) })

	r = p.run("result", d.ContextID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	got := decodeTask(t, r.stdout)
	if got.State != "completed" || *got.Reply != "Report for kill me: 14 escalations." {
		t.Fatalf("%+v", got)
	}
	if n := sim.Runs(d.ContextID); n != 1 {
		t.Errorf("runs %d: the revived worker sent again", n)
	}
	rec, _ := st.Load(d.ContextID)
	if rec.Workers != 2 || rec.Via != "conversation" {
		t.Errorf("record: %d workers, via %q", rec.Workers, rec.Via)
	}
}

func TestE2EFiftyConcurrentSendAsync(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 500 * time.Millisecond })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := p.cmd(context.Background(), "", "send-async", "audit-agent", fmt.Sprintf("task number %d", i), "--poll-interval", "200ms")
			out, err := c.Output()
			if err != nil {
				errs <- fmt.Errorf("send-async %d: %v", i, err)
				return
			}
			ids[i] = strings.TrimSpace(string(out))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := p.store()
	waitUntil(t, "50 replies", 60*time.Second, func() bool {
		recs, errs := st.List()
		if len(errs) > 0 {
			t.Fatalf("damaged records: %v", errs)
		}
		done := 0
		for _, r := range recs {
			if r.State.Terminal() {
				done++
			}
		}
		return done == n
	})
	for i, id := range ids {
		rec, err := st.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Report for task number %d: 14 escalations.", i)
		if rec.State != store.Completed || rec.Reply != want {
			t.Errorf("task %d: %s %q", i, rec.State, rec.Reply)
		}
		if runs := sim.Runs(id); runs != 1 {
			t.Errorf("task %d ran %d times", i, runs)
		}
	}
	if sim.TotalRuns() != n {
		t.Errorf("total runs %d", sim.TotalRuns())
	}
}

func TestE2EFailingAndExpiring(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents[1].RunTime = 20 * time.Second
		o.Faults.ProxyCutAfter = 300 * time.Millisecond
	})
	t.Run("failing agent", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		defer p.waitWorkersExit()
		r := p.run("send-async", "flaky-agent", "anyone?")
		r.expect(t, ExitOK)
		ctxID := strings.TrimSpace(r.stdout)
		r = p.run("result", ctxID, "--wait", "--timeout", "30s")
		r.expect(t, ExitTaskFailed)
		if !strings.Contains(r.stderr, "No complete response received from chat service") || r.stdout != "" {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
	t.Run("round that never appears expires", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		defer p.waitWorkersExit()
		r := p.run("send-async", "audit-agent", "too long", "--poll-interval", "200ms", "--max-wait", "2s")
		r.expect(t, ExitOK)
		ctxID := strings.TrimSpace(r.stdout)
		r = p.run("result", ctxID, "--wait", "--timeout", "30s", "--json")
		r.expect(t, ExitStillRunning)
		d := decodeTask(t, r.stdout)
		if d.State != "expired" || d.Resume != "a2a-courier fetch "+ctxID+" --json" || d.Error != nil {
			t.Fatalf("%+v", d)
		}
		r = p.run("result", ctxID)
		r.expect(t, ExitStillRunning)
		if !strings.Contains(r.stderr, "a2a-courier fetch "+ctxID) {
			t.Errorf("stderr %q", r.stderr)
		}
	})
	t.Run("send hands off when its wait runs out", func(t *testing.T) {
		t.Parallel()
		quick := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 2 * time.Second })
		p := newProc(t, quick)
		defer p.waitWorkersExit()
		r := p.run("send", "audit-agent", "hand me off", "--timeout", "500ms", "--poll-interval", "200ms", "--json")
		r.expect(t, ExitStillRunning)
		d := decodeTask(t, r.stdout)
		// The command that goes on keeps the caller's --timeout and --json.
		if d.State != "working" || d.Resume != "a2a-courier result "+d.ContextID+" --wait --timeout 500ms --json" {
			t.Fatalf("%+v", d)
		}
		r = p.run("result", d.ContextID, "--wait", "--timeout", "30s")
		r.expect(t, ExitOK)
		if r.stdout != "Report for hand me off: 14 escalations.\n" {
			t.Errorf("stdout %q", r.stdout)
		}
		if n := quick.Runs(d.ContextID); n != 1 {
			t.Errorf("runs %d", n)
		}
	})
}

func TestE2ESendWhoseWaitEndsBeforeItConnects(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	// The maximum wait leaves the worker it hands the task to time to
	// start and send on a loaded machine (with 5 s a CI run under load saw
	// the task expire with its one run done).
	r := p.run("send", "elastic-ai-agent", "too quick", "--timeout", "1ns", "--poll-interval", "200ms", "--max-wait", "20s", "--json")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	r = p.run("result", d.ContextID, "--wait", "--timeout", "30s")
	// Stopped before a connection was made, the task goes back to queued
	// and is sent once. Stopped after a connection was made but before the
	// request went out (a window of microseconds), nothing reached the
	// server, but the client cannot know that: it never sends again, and
	// the task honestly expires. Never two runs.
	switch runs := sim.Runs(d.ContextID); {
	case r.code == ExitOK && r.stdout == "Echo: too quick\n" && runs == 1:
	case r.code == ExitStillRunning && runs == 0:
		t.Logf("stopped between connecting and sending: expired, nothing ran")
	default:
		t.Errorf("exit %d stdout %q, %d runs", r.code, r.stdout, runs)
	}
}

func TestE2EFetchWithoutLocalRecord(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	a := newProc(t, sim)
	r := a.run("send", "elastic-ai-agent", "remember me", "--json")
	r.expect(t, ExitOK)
	ctxID := decodeTask(t, r.stdout).ContextID

	b := newProc(t, sim) // another machine: an empty state directory
	r = b.run("fetch", ctxID)
	r.expect(t, ExitOK)
	if r.stdout != "Echo: remember me\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = b.run("fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); d.State != "working" || d.Reply != nil || !strings.Contains(d.Reason, "no reply stored") {
		t.Errorf("%+v", d)
	}
}
