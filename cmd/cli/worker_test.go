package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A worker that is alive but stopped (SIGSTOP; on Windows, suspended) keeps its lock, and used to
// keep every new task of its credential queued for ever. Its heartbeat
// stops, so the next caller starts a worker beside it; the task the stopped
// worker holds stays with it and is reported so; continued, it finishes
// that task and sends nothing another worker sent.
func TestStoppedWorkerDoesNotHoldUpNewTasks(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	p.env["A2A_COURIER_WORKER_STALE_AFTER"] = "1s"
	defer p.waitWorkersExit()
	st := p.store()
	r := p.run("send-async", "audit-agent", "held", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	held := strings.TrimSpace(r.stdout)
	waitUntil(t, "the request to reach the server", 10*time.Second, func() bool {
		rec, err := st.Load(held)
		return err == nil && rec.State == store.Working
	})
	pids := workerPIDs(t, p.env["A2A_COURIER_STATE_DIR"])
	if len(pids) != 1 {
		t.Fatalf("worker processes: %v", pids)
	}
	stopped := pids[0]
	if err := proctest.Stop(stopped); err != nil {
		t.Fatal(err)
	}
	// Deferred after the wait for the workers to exit, so it runs first.
	defer proctest.Continue(stopped)
	time.Sleep(1500 * time.Millisecond) // past the 1 s threshold

	// send's hand-off and send-async both get their task worked on.
	r = p.run("send", "audit-agent", "handed off", "--timeout", "500ms", "--poll-interval", "200ms", "--json")
	r.expect(t, ExitStillRunning)
	handed := decodeTask(t, r.stdout).ContextID
	r = p.run("send-async", "elastic-ai-agent", "new", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	fresh := strings.TrimSpace(r.stdout)
	r = p.run("result", fresh, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != "Echo: new\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = p.run("result", handed, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != "Report for handed off: 14 escalations.\n" {
		t.Errorf("stdout %q", r.stdout)
	}

	// The task the stopped worker holds is reported as such, not as
	// "still running, nothing is lost".
	r = p.run("result", held)
	r.expect(t, ExitStillRunning)
	want := fmt.Sprintf("task %s is held by worker %d, which stopped responding: its last heartbeat was ", held, stopped)
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "the message was sent, and is never sent again") ||
		!strings.Contains(r.stderr, courier.ContinueWorker(stopped)) || !strings.Contains(r.stderr, courier.EndWorker(stopped)) || strings.Contains(r.stderr, "Nothing is lost") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = p.run("result", held, "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); !strings.HasPrefix(d.Note, want) || d.State != "working" {
		t.Errorf("%+v", d)
	}
	rec, _ := st.Load(held)
	if rec.Workers != 1 {
		t.Errorf("the held task was taken by %d workers", rec.Workers)
	}

	// Continued, it finishes its task; every task ran once.
	if err := proctest.Continue(stopped); err != nil {
		t.Fatal(err)
	}
	r = p.run("result", held, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != "Report for held: 14 escalations.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	for _, id := range []string{held, handed, fresh} {
		if n := sim.Runs(id); n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
	if rec, _ := st.Load(fresh); rec.Workers != 1 {
		t.Errorf("the new task was taken by %d workers", rec.Workers)
	}
}
