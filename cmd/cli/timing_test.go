package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A worker timing the environment gives that is not a duration
// (A2A_COURIER_WORKER_STALE_AFTER=10) is refused before the task is
// recorded, by every command that records one: send-async, whose worker
// it would stop, and send, which hands its task to a worker when its
// --timeout runs out (a follow-up with --context, and --json too). Exit 2, one error line and a hint suggesting 10s,
// no "task … started" line; nothing is sent, and the state directory
// holds no record, no spool and no audit line of it.
func TestBadWorkerTimingRecordsNothing(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	setup := newHarness(t, sim)
	first := decodeTask(t, setup.run("send", "elastic-ai-agent", "first", "--json").stdout)
	runsBefore := sim.TotalRuns()
	for _, args := range [][]string{
		{"send-async", "elastic-ai-agent", "hi"},
		{"send-async", "elastic-ai-agent", "hi", "--json"},
		{"send", "elastic-ai-agent", "hi"},
		{"send", "elastic-ai-agent", "hi", "--timeout", "1ms"},
		{"send", "elastic-ai-agent", "--context", first.ContextID, "and then?"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			h := newHarness(t, sim)
			h.env["A2A_COURIER_STATE_DIR"] = setup.env["A2A_COURIER_STATE_DIR"]
			h.env["A2A_COURIER_WORKER_STALE_AFTER"] = "10"
			r := h.run(args...)
			r.expect(t, ExitUsage)
			asJSON := strings.Contains(strings.Join(args, " "), "--json")
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if asJSON && r.stderr != "" {
				t.Errorf("stderr of --json: %s", r.stderr)
			} else if !asJSON && (len(lines) != 2 || !strings.HasPrefix(lines[0], "a2a-courier: ") || !strings.Contains(lines[0], `A2A_COURIER_WORKER_STALE_AFTER="10"`) ||
				!strings.HasPrefix(lines[1], "hint: did you mean 10s?")) {
				t.Errorf("want one error line and a hint suggesting 10s, got:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, "started") || strings.Contains(r.stderr, "recorded") {
				t.Errorf("a task was started: %s", r.stderr)
			}
			if asJSON {
				if e := decodeError(t, r.stdout); !strings.HasPrefix(e.Hint, "did you mean 10s?") || !strings.Contains(e.Message, "A2A_COURIER_WORKER_STALE_AFTER") {
					t.Errorf("%+v", e)
				}
			} else if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
	if n := sim.TotalRuns(); n != runsBefore {
		t.Errorf("%d runs after the refusals", n-runsBefore)
	}
	state := setup.env["A2A_COURIER_STATE_DIR"]
	records, _ := filepath.Glob(filepath.Join(state, "tasks", "*.json"))
	if len(records) != 1 || filepath.Base(records[0]) != first.ContextID+".json" {
		t.Errorf("records %v, want only the first task's", records)
	}
	if spool, _ := os.ReadDir(filepath.Join(state, "spool")); len(spool) != 0 {
		t.Errorf("spool %v", spool)
	}
	audit, err := os.ReadFile(filepath.Join(state, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(audit)), "\n") {
		if !strings.Contains(l, first.ContextID) {
			t.Errorf("audit line of another task: %s", l)
		}
	}
	if rec := loadRecord(t, setup, first.ContextID); rec.State != "completed" || rec.Message != "" {
		t.Errorf("the first task: %s", rec.State)
	}
}
