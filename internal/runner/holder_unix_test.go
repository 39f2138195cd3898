//go:build unix

package runner

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// holder starts a process that leaves the command's group (setsid),
// ignores SIGTERM and keeps stdout and stderr open; its session id comes
// as the first status line.
const holder = `setsid sh -c 'trap "" TERM; echo "holder $$" >&2; : > ready; exec sleep 60' & while [ ! -e ready ]; do sleep 0.01; done; `

func runWithHolder(t *testing.T, ctx context.Context, script string, timeout time.Duration, onHolder func()) Result {
	t.Helper()
	r := newRunner(t, map[string]string{"PATH": os.Getenv("PATH")})
	r.Limits = Limits{Grace: 200 * time.Millisecond, DrainDelay: 300 * time.Millisecond}
	var sid atomic.Int64
	done := make(chan Result, 1)
	go func() {
		done <- r.Run(ctx, Job{Argv: sh(holder + script), Timeout: timeout, OnStatus: func(l string) {
			if rest, ok := strings.CutPrefix(l, "holder "); ok {
				n, _ := strconv.Atoi(rest)
				sid.Store(int64(n))
				onHolder()
			}
		}})
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-int(sid.Load()), syscall.SIGKILL)
		t.Fatal("the run did not end while a detached process held its output")
	}
	if n := int(sid.Load()); n > 0 {
		syscall.Kill(-n, syscall.SIGKILL)
	} else {
		t.Fatal("the holder did not start")
	}
	return res
}

// A process that left the group and holds the pipes does not hold the
// run: past the timeout, a cancel or the command's own exit, the pipes are
// drained for DrainDelay at most, and the run ends once, failed or
// canceled, never completed.
func TestRunEndsThoughADetachedProcessHoldsItsOutput(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		res := runWithHolder(t, context.Background(), "sleep 60", 500*time.Millisecond, func() {})
		if res.State != Failed || !strings.Contains(res.Reason, "ran past its limit") {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		res := runWithHolder(t, ctx, "sleep 60", 0, cancel)
		if res.State != Canceled {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("exit", func(t *testing.T) {
		res := runWithHolder(t, context.Background(), "echo partial", 0, func() {})
		if res.State != Failed || !strings.Contains(res.Reason, "kept its output open") {
			t.Fatalf("%+v", res)
		}
	})
}
