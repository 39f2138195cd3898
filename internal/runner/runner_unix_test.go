//go:build unix

package runner

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/proctest"
)

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func newRunner(t *testing.T, env map[string]string) *Runner {
	return &Runner{TempRoot: t.TempDir(), LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

func TestRunStdinStdoutStderr(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	var lines []string
	res := r.Run(context.Background(), Job{
		Argv: sh(`echo "thinking" >&2; tr a-z A-Z; echo "done" >&2`), Stdin: []byte("hello there"),
		OnStatus: func(l string) { lines = append(lines, l) },
	})
	if res.State != Completed || res.Reply != "HELLO THERE" || res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	if strings.Join(lines, "|") != "thinking|done" || res.StderrLines != 2 {
		t.Fatalf("status lines %q (%d)", lines, res.StderrLines)
	}
}

func TestRunEnvironmentIsAllowlisted(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/x", "A2A_COURIER_TOKEN": "tok-secret",
		"KIBANA_API_KEY": "key-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret", "LANG": "C.UTF-8"})
	res := r.Run(context.Background(), Job{Argv: []string{"env"}, Env: map[string]string{"A2A_CONTEXT_ID": "ctx-1", "A2A_TASK_ID": "task-1", "A2A_CALLER": "alice"}})
	if res.State != Completed {
		t.Fatalf("%+v", res)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(res.Reply), "\n") {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	for _, secret := range []string{"tok-secret", "key-secret", "aws-secret"} {
		if strings.Contains(res.Reply, secret) {
			t.Fatalf("the command saw %q:\n%s", secret, res.Reply)
		}
	}
	if got["A2A_CONTEXT_ID"] != "ctx-1" || got["A2A_TASK_ID"] != "task-1" || got["A2A_CALLER"] != "alice" || got["HOME"] != "/home/x" || got["LANG"] != "C.UTF-8" {
		t.Fatalf("env %v", got)
	}
	allowed := map[string]bool{"TMPDIR": true, "TMP": true, "TEMP": true, "A2A_CONTEXT_ID": true, "A2A_TASK_ID": true, "A2A_CALLER": true, "PWD": true, "SHLVL": true, "_": true}
	for _, k := range allowedEnv {
		allowed[k] = true
	}
	for k := range got {
		if !allowed[k] {
			t.Errorf("unexpected variable %s", k)
		}
	}
}

func TestRunFilesInAFreshFolderRemovedAfterwards(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	job := Job{Argv: sh(`pwd; cat notes.txt; echo; cat file; echo; ls | wc -l; echo "$TMPDIR"`),
		Files: []File{{Name: "../../notes.txt", Bytes: []byte("N")}, {Name: "", Bytes: []byte("M")}}}
	res := r.Run(context.Background(), job)
	lines := strings.Split(strings.TrimSpace(res.Reply), "\n")
	if res.State != Completed || len(lines) != 5 || lines[1] != "N" || lines[2] != "M" || strings.TrimSpace(lines[3]) != "2" || lines[4] != lines[0] {
		t.Fatalf("%+v", res)
	}
	if !strings.HasPrefix(lines[0], r.TempRoot) {
		t.Fatalf("ran in %s, not under %s", lines[0], r.TempRoot)
	}
	if _, err := os.Stat(lines[0]); !os.IsNotExist(err) {
		t.Fatalf("the run's folder is still there: %v", err)
	}
	res2 := r.Run(context.Background(), Job{Argv: sh(`pwd`)})
	if strings.TrimSpace(res2.Reply) == lines[0] {
		t.Fatal("two runs shared a folder")
	}
}

func TestRunFailureReasonIsTheLastStderrLine(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	res := r.Run(context.Background(), Job{Argv: sh(`echo partial; echo step 1 >&2; echo "out of budget" >&2; exit 3`)})
	if res.State != Failed || res.ExitCode != 3 || res.Reason != "out of budget" {
		t.Fatalf("%+v", res)
	}
	res = r.Run(context.Background(), Job{Argv: sh(`exit 4`)})
	if res.State != Failed || res.Reason != "the command exited with status 4" {
		t.Fatalf("%+v", res)
	}
	res = r.Run(context.Background(), Job{Argv: []string{"/nonexistent/agent"}})
	if res.State != Failed || !strings.Contains(res.Reason, "cannot start the command") {
		t.Fatalf("%+v", res)
	}
}

// waitPID reads the pid a command reports on stderr.
func pidLines() (func(string), func() []int) {
	var mu sync.Mutex
	var pids []int
	ch := make(chan struct{}, 8)
	return func(l string) {
			if n, err := strconv.Atoi(strings.TrimPrefix(l, "pid ")); err == nil && strings.HasPrefix(l, "pid ") {
				mu.Lock()
				pids = append(pids, n)
				mu.Unlock()
				ch <- struct{}{}
			}
		}, func() []int {
			<-ch
			mu.Lock()
			defer mu.Unlock()
			return append([]int(nil), pids...)
		}
}

// A grandchild that ignores SIGTERM is ended with the run when it is
// canceled: nothing is left behind.
func TestRunCancelKillsTheWholeGroup(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	r.Limits.Grace = 200 * time.Millisecond
	onStatus, firstPID := pidLines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- r.Run(ctx, Job{Argv: sh(`(trap "" TERM; exec sleep 300) & echo "pid $!" >&2; trap "" TERM; sleep 300`), OnStatus: onStatus})
	}()
	pid := firstPID()[0]
	cancel()
	res := <-done
	if res.State != Canceled {
		t.Fatalf("%+v", res)
	}
	if err := proctest.WaitGone(pid, 10*time.Second); err != nil {
		t.Fatalf("the grandchild %d outlived the run: %v", pid, err)
	}
}

func TestRunTimeoutKillsTheWholeGroup(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	r.Limits.Grace = 200 * time.Millisecond
	onStatus, firstPID := pidLines()
	pids := make(chan int, 1)
	go func() { pids <- firstPID()[0] }()
	res := r.Run(context.Background(), Job{Argv: sh(`(trap "" TERM; exec sleep 300) & echo "pid $!" >&2; sleep 300`), Timeout: 300 * time.Millisecond, OnStatus: onStatus})
	if res.State != Failed || !strings.Contains(res.Reason, "ran past its limit of 300ms") {
		t.Fatalf("%+v", res)
	}
	if err := proctest.WaitGone(<-pids, 10*time.Second); err != nil {
		t.Fatalf("the grandchild outlived the run: %v", err)
	}
}

// A command that exits leaving a child behind (holding its stdout open)
// finishes when it exits, and the child goes with it.
func TestRunExitEndsWhatTheCommandLeftBehind(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	onStatus, firstPID := pidLines()
	pids := make(chan int, 1)
	go func() { pids <- firstPID()[0] }()
	res := r.Run(context.Background(), Job{Argv: sh(`sleep 300 & echo "pid $!" >&2; echo answer`), OnStatus: onStatus})
	if res.State != Completed || res.Reply != "answer\n" {
		t.Fatalf("%+v", res)
	}
	if err := proctest.WaitGone(<-pids, 10*time.Second); err != nil {
		t.Fatalf("the child outlived the run: %v", err)
	}
}

func TestRunOutputBounds(t *testing.T) {
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	r.Limits = Limits{Reply: 1000, Output: 100_000, StatusLines: 5, LineBytes: 50}
	res := r.Run(context.Background(), Job{Argv: sh(`head -c 5000 /dev/zero | tr '\0' x`)})
	if res.State != Completed || res.Reply != "" || len(res.Output) != 5000 {
		t.Fatalf("state %s reply %d output %d", res.State, len(res.Reply), len(res.Output))
	}
	// A gigabyte: the command is ended once it passes the bound.
	res = r.Run(context.Background(), Job{Argv: sh(`head -c 1000000000 /dev/zero`)})
	if res.State != Failed || res.Reply != "" || res.Output != nil || !strings.Contains(res.Reason, "printed more than 100000 bytes") {
		t.Fatalf("state %s reason %q reply %d output %d", res.State, res.Reason, len(res.Reply), len(res.Output))
	}
	if res.StdoutBytes >= 1_000_000_000 {
		t.Fatalf("read %d bytes: the command was not ended", res.StdoutBytes)
	}
	var got []string
	res = r.Run(context.Background(), Job{Argv: sh(`i=0; while [ $i -lt 100 ]; do echo "line $i" >&2; i=$((i+1)); done; head -c 100000 /dev/zero | tr '\0' y >&2; echo >&2; exit 1`),
		OnStatus: func(l string) { got = append(got, l) }})
	if len(got) != 5 || got[4] != "line 4" || res.StderrLines != 101 || res.State != Failed || res.Reason != strings.Repeat("y", 50) {
		t.Fatalf("status %q lines %d reason %q", got, res.StderrLines, res.Reason)
	}
}
