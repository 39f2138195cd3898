package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// An assistant on Windows (Electron, Node) runs a tool call's commands in a
// job object and ends the job when the call ends, and every process in it
// with it. These tests put the caller in such a job, as the assistant does,
// and end the job once the caller has returned.

// newKillJob makes a job object that kills its processes when its last
// handle closes (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), with more limit flags.
func newKillJob(t *testing.T, flags uint32) windows.Handle {
	t.Helper()
	j, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | flags
	if _, err := windows.SetInformationJobObject(j, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(j)
		t.Fatal(err)
	}
	return j
}

// runInJob runs a command of p as a process in job j: started suspended,
// put in the job, then resumed, so that whatever it starts is in the job
// from the first instruction on (unless it breaks away).
func (p *proc) runInJob(j windows.Handle, args ...string) result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := p.cmd(ctx, "", args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := c.Start(); err != nil {
		p.t.Fatal(err)
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(c.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(j, ph)
		windows.CloseHandle(ph)
	}
	if err != nil {
		c.Process.Kill()
		c.Wait()
		p.t.Fatalf("put %v in the job: %v", args, err)
	}
	if err := proctest.Continue(c.Process.Pid); err != nil {
		c.Process.Kill()
		c.Wait()
		p.t.Fatal(err)
	}
	err = c.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// sendAsyncInJob runs send-async of a long task in job j and waits until
// its worker has sent it; it returns the contextId and the worker's pid.
func sendAsyncInJob(t *testing.T, p *proc, j windows.Handle, text string) (string, int) {
	t.Helper()
	r := p.runInJob(j, "send-async", "audit-agent", text, "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st := p.store()
	waitUntil(t, "the worker to send", 30*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.State == store.Working
	})
	pids := proctest.Workers(p.env["A2A_COURIER_STATE_DIR"])
	if len(pids) != 1 {
		t.Fatalf("workers %v", pids)
	}
	return ctxID, pids[0]
}

// The worker breaks away from its caller's job: when the assistant ends the
// job (its tool call over, the caller long gone), the worker alone finishes
// the task, and nothing revives or resends it.
func TestWindowsWorkerOutlivesItsCallersJob(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	j := newKillJob(t, windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK)
	ctxID, worker := sendAsyncInJob(t, p, j, "outlive the job")
	// A process that is still in the job when it ends: it must die with it.
	canary := p.cmd(context.Background(), "", "result", ctxID, "--wait", "--timeout", "60s")
	canary.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := canary.Start(); err != nil {
		t.Fatal(err)
	}
	assignToJob(t, j, canary.Process.Pid)
	windows.CloseHandle(j) // the assistant ends the tool call's job
	if err := proctest.WaitGone(canary.Process.Pid, 30*time.Second); err != nil {
		t.Fatalf("a process in the job outlived it: %v", err)
	}
	canary.Wait()
	if !proctest.Alive(worker) {
		t.Fatal("the worker died with its caller's job")
	}
	st := p.store()
	defer func() {
		if t.Failed() {
			log, _ := os.ReadFile(st.LogPath())
			t.Logf("worker log:\n%s", log)
		}
	}()
	waitUntil(t, "the worker to finish the task", 60*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.State.Terminal()
	})
	rec, _ := st.Load(ctxID)
	if rec.State != store.Completed || rec.Reply != "Report for outlive the job: 14 escalations." || rec.Workers != 1 {
		t.Errorf("record %s %q, %d workers", rec.State, rec.Reply, rec.Workers)
	}
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("runs %d", n)
	}
	if log, _ := os.ReadFile(st.LogPath()); strings.Contains(string(log), "refuses CREATE_BREAKAWAY_FROM_JOB") {
		t.Errorf("the worker log says the breakaway was refused:\n%s", log)
	}
}

// A job without JOB_OBJECT_LIMIT_BREAKAWAY_OK refuses the breakaway: the
// worker still starts (without it), stays in the job, the log says so,
// and it dies when the job ends. Nothing is lost: result --wait starts
// another worker, which reads the reply back; the task ran once.
func TestWindowsWorkerInAJobThatRefusesBreakaway(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	j := newKillJob(t, 0)
	ctxID, worker := sendAsyncInJob(t, p, j, "die with the job")
	st := p.store()
	if log, _ := os.ReadFile(st.LogPath()); !strings.Contains(string(log), "refuses CREATE_BREAKAWAY_FROM_JOB: this worker stays in it") {
		t.Errorf("the worker log does not say the breakaway was refused:\n%s", log)
	}
	windows.CloseHandle(j)
	if err := proctest.WaitGone(worker, 30*time.Second); err != nil {
		t.Fatalf("the worker in the job outlived it: %v", err)
	}
	waitUntil(t, "the lock to be freed", 10*time.Second, func() bool { return !st.Locked(ctxID) })
	if rec, _ := st.Load(ctxID); rec.State.Terminal() {
		t.Fatalf("the record says %s before any worker finished", rec.State)
	}
	r := p.run("result", ctxID, "--wait", "--timeout", "60s")
	r.expect(t, ExitOK)
	if r.stdout != "Report for die with the job: 14 escalations.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("runs %d", n)
	}
	if rec, _ := st.Load(ctxID); rec.Workers != 2 {
		t.Errorf("%d workers took it, want 2", rec.Workers)
	}
}

func assignToJob(t *testing.T, j windows.Handle, pid int) {
	t.Helper()
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(j, ph)
		windows.CloseHandle(ph)
	}
	if err == nil {
		err = proctest.Continue(pid)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The worker inherits no handle of its caller's but the three standard ones
// and its credential pipe: a pipe handle the caller itself inherited (a
// tool runner reading the caller's output to EOF) is not passed on, so
// the reader sees EOF once the caller has exited, while the worker runs on.
// On Unix the same is TestWorkerKeepsNoDescriptorOfItsCaller.
func TestWindowsWorkerKeepsNoHandleOfItsCaller(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	pr, pw, err := os.Pipe() // both ends inheritable (syscall.Pipe)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	c := p.cmd(context.Background(), "", "send-async", "audit-agent", "keep nothing", "--poll-interval", "200ms")
	var out bytes.Buffer
	c.Stdout = &out
	c.SysProcAttr = &syscall.SysProcAttr{AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(pw.Fd())}}
	err = c.Run()
	pw.Close()
	if err != nil {
		t.Fatalf("caller: %v", err)
	}
	ctxID := strings.TrimSpace(out.String())
	st := p.store()
	waitUntil(t, "the worker to send", 30*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.State == store.Working
	})
	workers := proctest.Workers(p.env["A2A_COURIER_STATE_DIR"])
	if len(workers) != 1 {
		t.Fatalf("workers %v", workers)
	}
	got := make(chan error, 1)
	go func() { _, err := io.ReadAll(pr); got <- err }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a reader of the caller's pipe saw no EOF: the worker kept the handle")
	}
	if !proctest.Alive(workers[0]) {
		t.Fatal("the worker did not outlive its caller")
	}
	r := p.run("result", ctxID, "--wait", "--timeout", "60s")
	r.expect(t, ExitOK)
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("runs %d", n)
	}
}
