//go:build unix

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
	"github.com/a2a-courier/a2a-courier/internal/proctest"
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
	if !proctest.Alive(pids[0]) {
		t.Fatalf("the worker did not outlive its caller")
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
