package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// TestStillRunningWhereAFailureLeavesNoTrace: on 9.5 a blocking send whose
// connection was cut can fail without anything ever saying so (no failed
// run is stored, and the answer that would have said it is gone). While
// it runs, send and result (text and --json note) say "no reply yet; on
// this release a failed run leaves no trace" and how long --max-wait
// follows it, never "Nothing is lost". On 9.6 (the task path, whose
// tasks/get sees a failure) they still say nothing is lost.
func TestStillRunningWhereAFailureLeavesNoTrace(t *testing.T) {
	t.Parallel()
	const phrase = "no reply yet; on this release a failed run leaves no trace"
	for _, v := range []agentbuildertest.Version{agentbuildertest.V95, agentbuildertest.V96} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = v
				o.Agents[1].RunTime = 20 * time.Second
				o.Faults.ProxyCutAfter = 300 * time.Millisecond
			})
			h := newHarness(t, sim)
			r := h.run("send", "audit-agent", "long and cut", "--timeout", "1500ms", "--max-wait", "40s", "--poll-interval", "200ms")
			r.expect(t, ExitStillRunning)
			sendSaid := afterStarted(r.stderr)
			rj := h.run("result", startedContext(r.stderr), "--json")
			rj.expect(t, ExitStillRunning)
			d := decodeTask(t, rj.stdout)
			rt := h.run("result", d.ContextID)
			rt.expect(t, ExitStillRunning)
			if v == agentbuildertest.V96 {
				if !strings.Contains(sendSaid, "Nothing is lost") || strings.Contains(rt.stderr, phrase) || d.Note != "" {
					t.Fatalf("task path: send %q, result %q, note %q", r.stderr, rt.stderr, d.Note)
				}
				return
			}
			for name, said := range map[string]string{"send": sendSaid, "result": rt.stderr, "result --json note": d.Note} {
				if !strings.Contains(said, phrase) || !strings.Contains(said, "(--max-wait 40s), then it ends expired") || strings.Contains(said, "Nothing is lost") {
					t.Errorf("%s says %q", name, said)
				}
			}
		})
	}
}

// The MCP result tool says the same of such a task, in its text, in tool
// terms.
func TestMCPStillRunningWhereAFailureLeavesNoTrace(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V95
		o.Agents[1].RunTime = 20 * time.Second
		o.Faults.ProxyCutAfter = 300 * time.Millisecond
	})
	p := newProc(t, sim)
	r := p.run("send", "audit-agent", "long and cut", "--timeout", "1500ms", "--max-wait", "40s", "--poll-interval", "200ms")
	r.expect(t, ExitStillRunning)
	ctxID := startedContext(r.stderr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := startMCP(t, ctx, p)
	defer m.cs.Close()
	res, doc, text := m.call("result", map[string]any{"context_id": ctxID})
	// In tool terms: a sentence of its own, and the maximum wait said as
	// what no tool sets.
	if res.IsError || doc["state"] != "working" || !strings.Contains(text, "background worker. No reply yet; on this release a failed run leaves no trace") ||
		!strings.Contains(text, "(its maximum wait of 40s, set on the command line (--max-wait) or in the config file (max_wait)), then it ends expired. Call the result tool") ||
		strings.Contains(text, "(--max-wait 40s") || strings.Contains(text, "Nothing is lost") {
		t.Errorf("%v %v %q", res.IsError, doc, text)
	}
}
