package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// An answer sent with send-async --context while the worker is busy is
// picked up, although the worker finished (and set aside) the record of the
// same contextId before.
func TestFollowUpInTheSameContextWhileTheWorkerIsBusy(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	// Keep the worker busy.
	p.run("send-async", "audit-agent", "busy", "--poll-interval", "100ms").expect(t, ExitOK)
	r := p.run("send-async", "elastic-ai-agent", "first", "--poll-interval", "100ms")
	ctxID := strings.TrimSpace(r.stdout)
	p.run("result", ctxID, "--wait", "--timeout", "30s").expect(t, ExitOK)
	r = p.run("send-async", "elastic-ai-agent", "second", "--context", ctxID, "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	r = p.run("result", ctxID, "--wait", "--timeout", "10s")
	r.expect(t, ExitOK)
	if r.stdout != "Echo: second\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if sim.Runs(ctxID) != 2 {
		t.Errorf("runs %d", sim.Runs(ctxID))
	}
}

// A signal while the message is read from stdin records nothing.
func TestInterruptWhileReadingStdin(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	pr, pw := io.Pipe()
	defer pw.Close()
	var out, errb bytes.Buffer
	env := h.env
	p := &Process{Args: []string{"send", "elastic-ai-agent"}, Stdin: pr, Stdout: &out, Stderr: &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte("half a mess"))
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	code := Run(ctx, p)
	if code != ExitUnexpected || !strings.Contains(errb.String(), "nothing was sent") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if recs, _ := st.List(); len(recs) != 0 || sim.TotalRuns() != 0 {
		t.Errorf("%d records, %d runs", len(recs), sim.TotalRuns())
	}
}

// Refused reads end in exit 4 with the error, not in "still running"
// for ever, and no worker is started again and again.
func TestRefusedReadsAreReported(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents[1].RunTime = 2 * time.Second
		o.Faults.ProxyCutAfter = 200 * time.Millisecond
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 403}}
	})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "forbidden to read", "--poll-interval", "100ms")
	ctxID := strings.TrimSpace(r.stdout)
	start := time.Now()
	r = p.run("result", ctxID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitAuth)
	var d taskDoc
	json.Unmarshal([]byte(r.stdout), &d)
	if d.LastError == nil || d.LastError.Code != "forbidden" || d.Error == nil || !strings.Contains(d.Error.Hint, "fetch") {
		t.Fatalf("%s", r.stdout)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	r = p.run("result", ctxID)
	r.expect(t, ExitAuth)
	if n := len(workerPIDs(t, p.env["A2A_COURIER_STATE_DIR"])); n > 1 {
		t.Errorf("%d workers", n)
	}
}
