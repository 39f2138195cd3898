package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A script's `exec 9>lock; flock 9`, and a pipe a tool runner reads to EOF,
// are the caller's: the worker that outlives the caller keeps neither, and
// holds nothing of the caller's but the three standard descriptors it was
// given (/dev/null and its log).
func TestWorkerKeepsNoDescriptorOfItsCaller(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	lockPath := filepath.Join(t.TempDir(), "script.lock")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// The pipe arrives on descriptor 3 and moves to 7, so that the worker's
	// own descriptor 3 (its credential) is not the caller's.
	script := `exec 9>"$LOCK" && flock 9 && exec 7>&3 3>&- && "$BIN" send-async audit-agent "keep nothing" --poll-interval 200ms`
	c := exec.Command("sh", "-c", script)
	for k, v := range p.env {
		c.Env = append(c.Env, k+"="+v)
	}
	c.Env = append(c.Env, "LOCK="+lockPath, "BIN="+os.Args[0])
	c.ExtraFiles = []*os.File{pw}
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	err = c.Run()
	pw.Close()
	if err != nil {
		t.Fatalf("caller: %v\n%s%s", err, out.String(), errOut.String())
	}
	ctxID := strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
	// The worker reads its credential (descriptor 3) before it takes its
	// worker lock: once it serves, it holds nothing it was handed.
	waitUntil(t, "the worker to take its lock", 20*time.Second, func() bool {
		locks, _ := filepath.Glob(filepath.Join(p.env["A2A_COURIER_STATE_DIR"], "workers", "*.lock"))
		return len(locks) > 0
	})
	pids := workerPIDs(t, p.env["A2A_COURIER_STATE_DIR"])
	if len(pids) != 1 {
		t.Fatalf("worker processes: %v", pids)
	}

	// The caller is gone, its worker is not (the run takes 3 s).
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the script's flock is still held after the script ended: %v", err)
	}
	pr.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadAll(pr); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a reader of the caller's pipe saw no EOF: the worker kept the pipe")
	} else if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pids[0], 0); err != nil {
		t.Fatalf("the worker did not outlive its caller: %v", err)
	}

	// Of the caller's, the worker has 0, 1 and 2 only; the rest are its
	// own (the Go runtime's, its file watcher, its locks, its connections).
	fdDir := fmt.Sprintf("/proc/%d/fd", pids[0])
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	state := p.env["A2A_COURIER_STATE_DIR"]
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			continue // closed since the listing
		}
		switch n := e.Name(); {
		case n == "0":
			if target != os.DevNull {
				t.Errorf("descriptor 0 is %s, want /dev/null", target)
			}
		case n == "1" || n == "2":
			if target != filepath.Join(state, "logs", "worker.log") {
				t.Errorf("descriptor %s is %s, want the worker log", n, target)
			}
		case strings.HasPrefix(target, "anon_inode:"), strings.HasPrefix(target, "socket:"),
			strings.HasPrefix(target, state+string(filepath.Separator)),
			// Go's runtime keeps the CPU limit files of its cgroup open.
			strings.HasPrefix(target, "/sys/fs/cgroup/"):
		default:
			t.Errorf("the worker holds descriptor %s: %s", n, target)
		}
	}

	r := p.run("result", ctxID, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("runs %d", n)
	}
}

// A worker that is alive but stopped (SIGSTOP) keeps its lock, and used to
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
	if err := syscall.Kill(stopped, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Deferred after the wait for the workers to exit, so it runs first.
	defer syscall.Kill(stopped, syscall.SIGCONT)
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
		!strings.Contains(r.stderr, fmt.Sprintf("kill -CONT %d", stopped)) || strings.Contains(r.stderr, "Nothing is lost") {
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
	syscall.Kill(stopped, syscall.SIGCONT)
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
