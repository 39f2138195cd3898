package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the process the tests act on: with
// PROCTEST_CHILD set it prints a count every few milliseconds until killed.
func TestMain(m *testing.M) {
	if os.Getenv("PROCTEST_CHILD") == "1" {
		for i := 0; ; i++ {
			fmt.Println(i)
			time.Sleep(5 * time.Millisecond)
		}
	}
	os.Exit(m.Run())
}

// counter is a child process that counts on its stdout.
type counter struct {
	cmd    *exec.Cmd
	last   chan int
	exited chan struct{} // closed once the child is reaped
}

func startCounter(t *testing.T) *counter {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "proctest-marker-arg")
	cmd.Env = append(os.Environ(), "PROCTEST_CHILD=1", "PROCTEST_MARKER=env-marker-7")
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	c := &counter{cmd: cmd, last: make(chan int, 1), exited: make(chan struct{})}
	go func() {
		cmd.Wait() // the one Wait: reaps the child (Unix), so that it is gone, not a zombie
		close(c.exited)
	}()
	go func() {
		defer out.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var n int
			fmt.Sscan(sc.Text(), &n)
			select {
			case <-c.last:
			default:
			}
			c.last <- n
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-c.exited })
	return c
}

// next waits for a count above n, up to max.
func (c *counter) next(n int, max time.Duration) (int, bool) {
	deadline := time.After(max)
	for {
		select {
		case got := <-c.last:
			if got > n {
				return got, true
			}
		case <-deadline:
			return n, false
		}
	}
}

// Kill ends a process, Alive and WaitGone see it gone; a stopped process
// counts no further until continued.
func TestKillStopContinue(t *testing.T) {
	c := startCounter(t)
	pid := c.cmd.Process.Pid
	n, ok := c.next(-1, 30*time.Second)
	if !ok || !Alive(pid) {
		t.Fatalf("the child does not run: counted %v, alive %v", ok, Alive(pid))
	}
	if err := Stop(pid); err != nil {
		t.Fatal(err)
	}
	// What it printed before it stopped may still be in the pipe: drain
	// it, then nothing more comes.
	for ok {
		n, ok = c.next(n, 500*time.Millisecond)
	}
	if got, more := c.next(n, time.Second); more {
		t.Errorf("a stopped process counted on: %d after %d", got, n)
	}
	if !Alive(pid) {
		t.Error("a stopped process is not alive")
	}
	if err := Continue(pid); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.next(n, 30*time.Second); !ok {
		t.Error("a continued process does not count on")
	}
	if err := Kill(pid); err != nil {
		t.Fatal(err)
	}
	if err := WaitGone(pid, 30*time.Second); err != nil || Alive(pid) {
		t.Fatalf("killed, the process is alive: %v", err)
	}
}

// CommandLine and Environment read another process's arguments and
// environment, as the secret checks of the cmd/cli tests need.
func TestCommandLineAndEnvironment(t *testing.T) {
	c := startCounter(t)
	pid := c.cmd.Process.Pid
	if _, ok := c.next(-1, 30*time.Second); !ok {
		t.Fatal("the child does not run")
	}
	args, err := CommandLine(pid)
	if err != nil || !strings.Contains(args, "proctest-marker-arg") {
		t.Errorf("command line %q, %v", args, err)
	}
	env, err := Environment(pid)
	if err != nil || !strings.Contains(env, "PROCTEST_MARKER=env-marker-7") {
		t.Errorf("environment %q, %v", env, err)
	}
	if strings.Contains(args, "env-marker-7") || strings.Contains(env, "proctest-marker-arg") {
		t.Errorf("the command line and the environment are mixed up: %q / %q", args, env)
	}
}
