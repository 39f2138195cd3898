package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
)

func on() *bool { b := true; return &b }

// TestKibana96Streaming: a card that says streaming is streamed on the
// blocking path only (9.2 to 9.5, or non_blocking false); 9.6 and
// Serverless send blocking:false without a stream, since a stream, even
// sent blocking:false, dies with its connection there.
func TestKibana96Streaming(t *testing.T) {
	t.Parallel()
	t.Run("9.6 default: no stream, the task path", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96; o.Streaming = on() })
		h := newHarness(t, sim)
		r := h.run("send", "audit-agent", "thirty days", "--poll-interval", "100ms", "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if *d.Reply != "Report for thirty days: 14 escalations." || sim.Runs(d.ContextID) != 1 || d.Path != courier.PathTask || d.TaskID == "" {
			t.Fatalf("%+v", d)
		}
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		if rec, _ := st.Load(d.ContextID); rec.Target.Streaming || !rec.Target.NonBlocking {
			t.Errorf("streaming %v, non-blocking %v", rec.Target.Streaming, rec.Target.NonBlocking)
		}
	})
	t.Run("streamed reply", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96; o.Streaming = on() })
		h := newHarness(t, sim)
		h.env["A2A_COURIER_NON_BLOCKING"] = "false"
		r := h.run("send", "audit-agent", "thirty days", "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if *d.Reply != "Report for thirty days: 14 escalations." || sim.Runs(d.ContextID) != 1 {
			t.Fatalf("%+v", d)
		}
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		if rec, _ := st.Load(d.ContextID); rec.Via != "stream" || !rec.Target.Streaming {
			t.Errorf("via %q, streaming %v", rec.Via, rec.Target.Streaming)
		}
	})
	t.Run("stream cut by a proxy, on a Kibana that does not abort", func(t *testing.T) {
		t.Parallel()
		off := false
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Version = agentbuildertest.V96
			o.Streaming = on()
			o.AbortOnDisconnect = &off // the OAuth line of Kibana's code has no abort wiring
			o.Faults.ProxyCutAfter = 300 * time.Millisecond
		})
		h := newHarness(t, sim)
		h.env["A2A_COURIER_NON_BLOCKING"] = "false"
		r := h.run("send", "audit-agent", "cut me", "--poll-interval", "100ms", "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if *d.Reply != "Report for cut me: 14 escalations." || sim.Runs(d.ContextID) != 1 {
			t.Fatalf("%+v runs %d", d, sim.Runs(d.ContextID))
		}
	})
	t.Run("--no-stream", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96; o.Streaming = on() })
		h := newHarness(t, sim)
		h.env["A2A_COURIER_NON_BLOCKING"] = "false"
		r := h.run("send", "elastic-ai-agent", "plain", "--no-stream", "--json")
		r.expect(t, ExitOK)
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		if rec, _ := st.Load(decodeTask(t, r.stdout).ContextID); rec.Via != "reply" {
			t.Errorf("via %q", rec.Via)
		}
	})
}

func TestKibana96NonBlockingTasks(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
	p := newProc(t, sim)
	p.env["A2A_COURIER_NON_BLOCKING"] = "true"
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "in the background", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	r = p.run("result", ctxID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if *d.Reply != "Report for in the background: 14 escalations." || d.TaskID == "" || sim.Runs(ctxID) != 1 {
		t.Fatalf("%+v", d)
	}
}

func TestCancelOnAgentBuilder(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 20 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "never mind", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st := p.store()
	waitUntil(t, "the worker to take the task", 10*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.State == store.Working
	})
	r = p.run("cancel", ctxID)
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "Agent Builder cannot stop a run") || !strings.Contains(r.stderr, "canceled") {
		t.Errorf("stderr %q", r.stderr)
	}
	rec, _ := st.Load(ctxID)
	if rec.State != store.Canceled || !strings.Contains(rec.Reason, "fetch") {
		t.Errorf("record %s %q", rec.State, rec.Reason)
	}
	r = p.run("cancel", ctxID)
	r.expect(t, ExitTaskFailed)
	if !strings.Contains(r.stderr, "already canceled") {
		t.Errorf("stderr %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(st.TasksDir(), ctxID+".cancel")); err == nil {
		t.Error("the cancel marker stayed behind")
	}
}

// TestKibana96StreamCutAbortsRun: with non_blocking false on 9.6, a stream
// a proxy cuts takes its run with it (Kibana aborts the run with the
// request) and nothing is stored. The client must say so honestly (never
// completed, never a second send): the task is lost, exit 6. On Serverless, whose rounds keep
// interrupted runs, the aborted round says it at once.
func TestKibana96StreamCutAbortsRun(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V96, agentbuildertest.VServerless} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = v
				o.Streaming = on()
				o.Faults.ProxyCutAfter = 300 * time.Millisecond
			})
			h := newHarness(t, sim)
			h.env["A2A_COURIER_MAX_WAIT"] = "3s"
			h.env["A2A_COURIER_NON_BLOCKING"] = "false"
			r := h.run("send", "audit-agent", "cut and aborted", "--poll-interval", "100ms", "--timeout", "20s", "--json")
			d := decodeTask(t, r.stdout)
			if sim.Runs(d.ContextID) != 1 {
				t.Fatalf("%d runs, want 1", sim.Runs(d.ContextID))
			}
			if d.Path != courier.PathStream || d.Reply != nil && *d.Reply != "" {
				t.Fatalf("%+v", d)
			}
			if v == agentbuildertest.VServerless {
				r.expect(t, ExitTaskFailed)
				if d.State != "canceled" || !strings.Contains(d.Reason, "Kibana aborted the run") {
					t.Fatalf("an aborted run reported as %q (%q)", d.State, d.Reason)
				}
				return
			}
			// Lost, not still running: no reply is coming (send again).
			r.expect(t, ExitTaskFailed)
			if d.State != "expired" || !strings.Contains(d.Reason, "most likely ended without a reply") || d.Error == nil || d.Error.Code != "task_lost" {
				t.Fatalf("an aborted run reported as %q (%q)", d.State, d.Reason)
			}
		})
	}
}

// TestKibanaStreamEdges: a streamed run that fails ends failed at once
// (Kibana stores no failed round to wait for); a cached card that says
// streaming while the server does not stream falls back to message/send
// once, and the card is read anew next time.
func TestKibanaStreamEdges(t *testing.T) {
	t.Parallel()
	t.Run("failing run", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96; o.Streaming = on() })
		h := newHarness(t, sim)
		r := h.run("send", "flaky-agent", "break", "--json")
		r.expect(t, ExitTaskFailed)
		d := decodeTask(t, r.stdout)
		if d.State != "failed" || !strings.Contains(d.Reason, "No complete response received from chat service") ||
			strings.Contains(d.Reason, "Error: ") || sim.Runs(d.ContextID) != 1 {
			t.Fatalf("%+v runs %d", d, sim.Runs(d.ContextID))
		}
	})
	t.Run("stale card says streaming", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, nil) // 9.5: no streaming
		h := newHarness(t, sim)
		h.run("send", "elastic-ai-agent", "cache the card").expect(t, ExitOK)
		cards, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "cards", "*.json"))
		if len(cards) != 1 {
			t.Fatalf("%d cached cards", len(cards))
		}
		b, _ := os.ReadFile(cards[0])
		stale := strings.Replace(string(b), `"streaming":false`, `"streaming":true`, 1)
		if stale == string(b) {
			t.Fatalf("no streaming:false in the cached card: %s", b)
		}
		writePrivate(cards[0], []byte(stale))
		r := h.run("send", "elastic-ai-agent", "stream please", "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		if sim.Runs(d.ContextID) != 1 || !strings.Contains(*d.Reply, "stream please") && *d.Reply == "" {
			t.Fatalf("%+v runs %d", d, sim.Runs(d.ContextID))
		}
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		if rec, _ := st.Load(d.ContextID); rec.Target.Streaming || rec.Via != "reply" {
			t.Errorf("streaming %v via %q", rec.Target.Streaming, rec.Via)
		}
		if _, err := os.Stat(cards[0]); err == nil {
			t.Error("the stale card is still cached")
		}
	})
}

// TestKibana96NonBlockingSurvivesAbort is the way out docs/design.md gives
// for TestKibana96StreamCutAbortsRun's Kibana: with non_blocking the run
// belongs to the server, not to the connection, so the same proxy and the
// same abort-on-disconnect lose nothing.
func TestKibana96NonBlockingSurvivesAbort(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V96
		o.Streaming = on()
		o.AbortOnDisconnect = on()
		o.Faults.ProxyCutAfter = 300 * time.Millisecond
		o.Agents[1].RunTime = 1500 * time.Millisecond
	})
	h := newHarness(t, sim)
	h.env["A2A_COURIER_NON_BLOCKING"] = "true"
	r := h.run("send", "audit-agent", "outlive the proxy", "--poll-interval", "100ms", "--timeout", "20s", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.State != "completed" || *d.Reply != "Report for outlive the proxy: 14 escalations." || d.TaskID == "" {
		t.Fatalf("%+v", d)
	}
	if sim.Runs(d.ContextID) != 1 {
		t.Fatalf("%d runs, want 1", sim.Runs(d.ContextID))
	}
}
