package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/doctor"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// These tests play every recovery scenario against the simulator as Kibana
// 9.5, 9.6 and Serverless behave (agent-builder.md §6, docs/simulator.md),
// with real processes and real detached workers: a proxy that cuts the
// call, Kibana's idle close, the caller's own --timeout, a worker killed
// mid-run, an agent that fails after the cut, and fetch from another
// machine. On 9.5 a blocking send survives all of them; on 9.6 and
// Serverless a blocking send would not (its run is aborted with its
// connection), so the default path there is blocking:false and tasks/get.
// Each must bring back the run's reply (or failed, exit 6) with one run.

// releaseMode is a Kibana release and the path sends take there by default.
type releaseMode struct {
	version agentbuildertest.Version
	path    string // the default path sends take
}

var releaseModes = []releaseMode{
	{agentbuildertest.V95, courier.PathBlocking},
	{agentbuildertest.V96, courier.PathTask},
	{agentbuildertest.VServerless, courier.PathTask},
}

// slowFlaky is an agent whose runs fail after a while: after a cut
// connection, on a release that stores no failed run, only tasks/get can
// tell.
var slowFlaky = agentbuildertest.Agent{ID: "slow-flaky", Name: "Slow Flaky", Description: "Fails late.",
	Fail: "model provider timed out", RunTime: 1500 * time.Millisecond}

func releaseSim(t *testing.T, v agentbuildertest.Version, faults agentbuildertest.Faults) *agentbuildertest.Server {
	t.Helper()
	return startSim(t, func(o *agentbuildertest.Options) {
		o.Version = v
		o.Agents[1].RunTime = 2 * time.Second
		o.Agents = append(o.Agents, slowFlaky)
		o.Faults = faults
	})
}

// recoveryTimes collects, per mode and scenario, the time from the run's
// end on the server to the outcome in the record (logged, not asserted:
// the figures go to docs/reliability.md).
type recoveryTimes struct {
	mu   sync.Mutex
	rows []string
}

func (r *recoveryTimes) add(mode, scenario string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, fmt.Sprintf("%-11s %-34s %6.0f ms", mode, scenario, float64(d)/float64(time.Millisecond)))
}

func (r *recoveryTimes) endToRecord(t *testing.T, mode, scenario string, sim *agentbuildertest.Server, st *store.Store, ctxID string) {
	t.Helper()
	rec, err := st.Load(ctxID)
	if err != nil || rec.FinishedAt == nil {
		t.Fatalf("record %v %+v", err, rec)
	}
	if end, ok := sim.CompletedAt(ctxID); ok {
		r.add(mode, scenario, rec.FinishedAt.Sub(end))
	}
}

func TestE2ERecoveryAcrossReleases(t *testing.T) {
	t.Parallel()
	var times recoveryTimes
	t.Cleanup(func() {
		sort.Strings(times.rows)
		t.Logf("time from the run's end to the outcome recorded:\n%s", strings.Join(times.rows, "\n"))
	})
	for _, m := range releaseModes {
		t.Run(string(m.version), func(t *testing.T) {
			t.Parallel()
			for _, sc := range releaseScenarios(m) {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					sc.run(t, m, &times)
				})
			}
		})
	}
}

// releaseScenario is one way a run's connection or process ends.
type releaseScenario struct {
	name string
	run  func(t *testing.T, m releaseMode, times *recoveryTimes)
}

func releaseScenarios(m releaseMode) []releaseScenario {
	sc := []releaseScenario{
		{"proxy cut, send", releaseProxyCutSend},
		{"proxy cut, send-async", releaseProxyCutSendAsync},
		{"idle close", releaseIdleClose},
		{"the caller's own --timeout", releaseOwnTimeout},
		{"worker killed", releaseWorkerKilled},
		{"agent fails after the cut", releaseAgentFailsAfterCut},
		{"fetch from an empty state dir", releaseFetchElsewhere},
	}
	if m.path == courier.PathTask {
		sc = append(sc, releaseScenario{"control: non_blocking false", releaseControlBlocking})
	}
	return sc
}

// checkReleaseDoc checks a recovered task: the reply, one run, the path of
// the release.
func checkReleaseDoc(t *testing.T, m releaseMode, d taskDoc, sim *agentbuildertest.Server, reply string) {
	t.Helper()
	if d.State != "completed" || d.Reply == nil || *d.Reply != reply {
		t.Fatalf("%+v", d)
	}
	if n := sim.Runs(d.ContextID); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if d.Path != m.path || d.KibanaVersion == "" {
		t.Errorf("path %q (want %q), kibana %q %q", d.Path, m.path, d.KibanaVersion, d.KibanaFlavor)
	}
}

// releaseProxyCutSend: a proxy cuts a blocking send: send reads the reply back.
func releaseProxyCutSend(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{ProxyCutAfter: 500 * time.Millisecond})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send", "audit-agent", "cut", "--poll-interval", "200ms", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	checkReleaseDoc(t, m, d, sim, "Report for cut: 14 escalations.")
	times.endToRecord(t, mode, "proxy cut, send", sim, p.store(), d.ContextID)
}

// releaseProxyCutSendAsync: a proxy cuts the worker's send: result --wait has the reply.
func releaseProxyCutSendAsync(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{ProxyCutAfter: 500 * time.Millisecond})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "cut async", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	r = p.run("result", ctxID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	checkReleaseDoc(t, m, decodeTask(t, r.stdout), sim, "Report for cut async: 14 escalations.")
	times.endToRecord(t, mode, "proxy cut, send-async", sim, p.store(), ctxID)
}

// releaseIdleClose: Kibana's idle close ends the connection: the reply is read back.
func releaseIdleClose(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{IdleCloseAfter: 500 * time.Millisecond})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send", "audit-agent", "idle", "--poll-interval", "200ms", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	checkReleaseDoc(t, m, d, sim, "Report for idle: 14 escalations.")
	times.endToRecord(t, mode, "idle close", sim, p.store(), d.ContextID)
}

// releaseOwnTimeout: send's own --timeout hands the task to a worker (exit 8), which brings the reply.
func releaseOwnTimeout(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send", "audit-agent", "impatient", "--timeout", "700ms", "--poll-interval", "200ms", "--json")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	if d.State != "working" || d.Resume != "a2a-courier result "+d.ContextID+" --wait --timeout 700ms --json" {
		t.Fatalf("%+v", d)
	}
	r = p.run("result", d.ContextID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	checkReleaseDoc(t, m, decodeTask(t, r.stdout), sim, "Report for impatient: 14 escalations.")
	times.endToRecord(t, mode, "the caller's own --timeout", sim, p.store(), d.ContextID)
}

// releaseWorkerKilled: the worker is killed mid-run: the next one reads the reply, sending nothing.
func releaseWorkerKilled(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "kill the worker", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st := p.store()
	waitUntil(t, "the worker to send", 10*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		// On the task path, the task's id is what the next
		// worker follows.
		return err == nil && rec.State == store.Working && (m.path != courier.PathTask || rec.TaskID != "")
	})
	pids := workerPIDs(t, p.env["A2A_COURIER_STATE_DIR"])
	if len(pids) != 1 {
		t.Fatalf("workers %v", pids)
	}
	proctest.Kill(pids[0])
	waitUntil(t, "the lock to be freed", 5*time.Second, func() bool { return !st.Locked(ctxID) })
	r = p.run("result", ctxID, "--wait", "--timeout", "30s", "--json")
	r.expect(t, ExitOK)
	checkReleaseDoc(t, m, decodeTask(t, r.stdout), sim, "Report for kill the worker: 14 escalations.")
	if rec, _ := st.Load(ctxID); rec.Workers != 2 {
		t.Errorf("%d workers took it, want 2", rec.Workers)
	}
	times.endToRecord(t, mode, "worker killed", sim, st, ctxID)
}

// releaseAgentFailsAfterCut: a run that fails after the cut: failed at once on the task path, expired on 9.5.
func releaseAgentFailsAfterCut(t *testing.T, m releaseMode, times *recoveryTimes) {
	mode := string(m.version)
	sim := releaseSim(t, m.version, agentbuildertest.Faults{ProxyCutAfter: 300 * time.Millisecond})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	p.env["A2A_COURIER_MAX_WAIT"] = "6s"
	start := time.Now()
	r := p.run("send", "slow-flaky", "fail late", "--poll-interval", "200ms", "--json")
	d := decodeTask(t, r.stdout)
	if n := sim.Runs(d.ContextID); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if m.path == courier.PathTask {
		// tasks/get says failed: at once, with its reason.
		r.expect(t, ExitTaskFailed)
		if d.State != "failed" || !strings.Contains(d.Reason, "model provider timed out") || d.Error == nil {
			t.Fatalf("%+v", d)
		}
		times.add(mode, "agent fails after the cut (to exit 6)", time.Since(start)-slowFlaky.RunTime)
		return
	}
	// 9.5 stores no failed run and has no task to ask: after
	// the cut nothing can tell a failure from a long run, and
	// the record says so when the maximum wait ends.
	r.expect(t, ExitStillRunning)
	if d.State != "expired" || !strings.Contains(d.Reason, "store no failed run") {
		t.Fatalf("%+v", d)
	}
}

// releaseFetchElsewhere: fetch from another machine, while the run goes on and after it.
func releaseFetchElsewhere(t *testing.T, m releaseMode, times *recoveryTimes) {
	sim := releaseSim(t, m.version, agentbuildertest.Faults{ProxyCutAfter: 500 * time.Millisecond})
	a := newProc(t, sim)
	defer a.waitWorkersExit()
	r := a.run("send-async", "audit-agent", "elsewhere", "--poll-interval", "200ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	b := newProc(t, sim) // another machine
	// While the run goes on, fetch says so, honestly.
	r = b.run("fetch", ctxID, "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); d.State != "working" || d.Reply != nil || !strings.Contains(d.Reason, "may still be going") {
		t.Errorf("while running: %+v", d)
	}
	waitUntil(t, "the run to end", 10*time.Second, func() bool { _, ok := sim.CompletedAt(ctxID); return ok })
	r = b.run("fetch", ctxID, "--json")
	r.expect(t, ExitOK)
	if d := decodeTask(t, r.stdout); d.State != "completed" || *d.Reply != "Report for elsewhere: 14 escalations." {
		t.Errorf("after: %+v", d)
	}
	a.run("result", ctxID, "--wait", "--timeout", "30s").expect(t, ExitOK)
	if n := sim.Runs(ctxID); n != 1 {
		t.Errorf("%d runs", n)
	}
	// A run that failed: Serverless's rounds keep it, 9.6 and
	// 9.5 keep nothing.
	r = a.run("send", "flaky-agent", "fails", "--json")
	r.expect(t, ExitTaskFailed)
	failed := decodeTask(t, r.stdout).ContextID
	r = b.run("fetch", failed, "--json")
	d := decodeTask(t, r.stdout)
	if m.version == agentbuildertest.VServerless {
		r.expect(t, ExitTaskFailed)
		if d.State != "failed" || !strings.Contains(d.Reason, "No complete response") {
			t.Errorf("failed run, fetched: %+v", d)
		}
	} else {
		r.expect(t, ExitStillRunning)
		if d.State != "working" || !strings.Contains(d.Reason, "failed") {
			t.Errorf("failed run, fetched: %+v", d)
		}
	}
}

// releaseControlBlocking is the control on the task path: with
// non_blocking false the same cut takes the run with it, as the source
// says, and the texts say so; a wait while the connection holds is still a
// wait.
func releaseControlBlocking(t *testing.T, m releaseMode, _ *recoveryTimes) {
	sim := releaseSim(t, m.version, agentbuildertest.Faults{ProxyCutAfter: 500 * time.Millisecond})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	p.env["A2A_COURIER_NON_BLOCKING"] = "false"
	p.env["A2A_COURIER_MAX_WAIT"] = "3s"
	r := p.run("send", "audit-agent", "cut and lost", "--poll-interval", "200ms", "--json")
	d := decodeTask(t, r.stdout)
	if n := sim.Runs(d.ContextID); n != 1 || d.Path != courier.PathBlocking {
		t.Fatalf("%d runs, path %q", n, d.Path)
	}
	if m.version == agentbuildertest.VServerless {
		r.expect(t, ExitTaskFailed) // the aborted run's round says so
		if d.State != "canceled" || !strings.Contains(d.Reason, "Kibana aborted the run") {
			t.Fatalf("%+v", d)
		}
	} else {
		// Not "still running": waiting longer cannot bring what the
		// release stopped (exit 6, lost).
		r.expect(t, ExitTaskFailed)
		if d.State != "expired" || d.Error == nil || d.Error.Code != "task_lost" || !strings.Contains(d.Reason, "most likely ended without a reply") {
			t.Fatalf("%+v", d)
		}
		r = p.run("result", d.ContextID)
		r.expect(t, ExitTaskFailed)
		if !strings.Contains(r.stderr, "most likely ended without a reply") || strings.Contains(r.stderr, "nothing is lost") {
			t.Errorf("text: %q", r.stderr)
		}
	}
	// A worker holding the open POST: a short wait is a wait.
	quiet := releaseSim(t, m.version, agentbuildertest.Faults{})
	q := newProc(t, quiet)
	defer q.waitWorkersExit()
	q.env["A2A_COURIER_NON_BLOCKING"] = "false"
	r = q.run("send-async", "audit-agent", "held", "--poll-interval", "200ms")
	ctxID := strings.TrimSpace(r.stdout)
	r = q.run("result", ctxID, "--wait", "--timeout", "500ms")
	r.expect(t, ExitStillRunning)
	if !strings.Contains(r.stderr, "Nothing is lost") || strings.Contains(r.stderr, "never come") {
		t.Errorf("a wait shown as a loss: %q", r.stderr)
	}
	q.run("result", ctxID, "--wait", "--timeout", "30s").expect(t, ExitOK)
}

// TestKibanaPathDecision: the release decides the path (GET /api/status,
// kept per Kibana), non_blocking overrides it both ways, and a status that
// cannot be read leaves it to the server's answer to blocking:false.
func TestKibanaPathDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		version     agentbuildertest.Version
		statusFault int    // the status route answers this instead
		nonBlocking string // A2A_COURIER_NON_BLOCKING
		path        string
		kibana      string // the document's kibana_version
	}{
		{"9.5", agentbuildertest.V95, 0, "", courier.PathBlocking, "9.5.1"},
		{"9.2", agentbuildertest.V92, 0, "", courier.PathBlocking, "9.2.4"},
		{"9.6", agentbuildertest.V96, 0, "", courier.PathTask, "9.6.0"},
		{"serverless", agentbuildertest.VServerless, 0, "", courier.PathTask, "9.7.0"},
		{"9.5, non_blocking true", agentbuildertest.V95, 0, "true", courier.PathBlocking, "9.5.1"}, // 9.5 ignores blocking:false
		{"9.6, non_blocking false", agentbuildertest.V96, 0, "false", courier.PathBlocking, "9.6.0"},
		{"9.6, status refused", agentbuildertest.V96, 403, "", courier.PathTask, ""},
		{"9.5, status refused", agentbuildertest.V95, 403, "", courier.PathBlocking, ""},
		{"9.6, no status route", agentbuildertest.V96, 404, "", courier.PathTask, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = tc.version
				if tc.statusFault != 0 {
					o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteStatus, Status: tc.statusFault}}
				}
			})
			h := newHarness(t, sim)
			if tc.nonBlocking != "" {
				h.env["A2A_COURIER_NON_BLOCKING"] = tc.nonBlocking
			}
			for i := 1; i <= 2; i++ {
				r := h.run("send", "audit-agent", fmt.Sprintf("which path %d", i), "--poll-interval", "100ms", "--json")
				r.expect(t, ExitOK)
				d := decodeTask(t, r.stdout)
				if d.Path != tc.path || d.KibanaVersion != tc.kibana || sim.Runs(d.ContextID) != 1 {
					t.Fatalf("send %d: path %q kibana %q, %d runs", i, d.Path, d.KibanaVersion, sim.Runs(d.ContextID))
				}
			}
			// The answer is kept: the second send did not ask again.
			if n := sim.Requests(agentbuildertest.RouteStatus); n != 1 {
				t.Errorf("the status was read %d times for two sends", n)
			}
		})
	}
}

// TestDoctorReportsTheRelease: doctor names the release and the path sends
// take, in text and in --json.
func TestDoctorReportsTheRelease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version     agentbuildertest.Version
		statusFault int
		nonBlocking string
		status      string // of the "Kibana release" check
		number      string
		flavor      string
		path        string
	}{
		{agentbuildertest.V95, 0, "", doctor.Pass, "9.5.1", "traditional", courier.PathBlocking},
		{agentbuildertest.V96, 0, "", doctor.Pass, "9.6.0", "traditional", courier.PathTask},
		{agentbuildertest.VServerless, 0, "", doctor.Pass, "9.7.0", "serverless", courier.PathTask},
		{agentbuildertest.V96, 0, "false", doctor.Warn, "9.6.0", "traditional", courier.PathBlocking},
		{agentbuildertest.V96, 403, "", doctor.Warn, "", "", ""},
	} {
		t.Run(fmt.Sprintf("%s %d %s", tc.version, tc.statusFault, tc.nonBlocking), func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = tc.version
				if tc.statusFault != 0 {
					o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteStatus, Status: tc.statusFault}}
				}
			})
			h := newHarness(t, sim)
			h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
			if tc.nonBlocking != "" {
				h.env["A2A_COURIER_NON_BLOCKING"] = tc.nonBlocking
			}
			r := h.run("doctor", "--json")
			r.expect(t, ExitOK)
			var doc struct {
				Checks []doctor.Check `json:"checks"`
				Kibana struct {
					Version, BuildFlavor, Path, Why string
				} `json:"kibana"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			var release *doctor.Check
			for i := range doc.Checks {
				if doc.Checks[i].Name == "Kibana release" {
					release = &doc.Checks[i]
				}
			}
			if release == nil || release.Status != tc.status || doc.Kibana.Path != tc.path || doc.Kibana.Why == "" {
				t.Fatalf("%+v %+v", release, doc.Kibana)
			}
			var raw map[string]map[string]any
			json.Unmarshal([]byte(r.stdout), &raw)
			if raw["kibana"]["version"] != nilIfEmpty(tc.number) || raw["kibana"]["build_flavor"] != nilIfEmpty(tc.flavor) {
				t.Errorf("kibana %v", raw["kibana"])
			}
			r = h.run("doctor")
			if !strings.Contains(r.stdout, "Kibana release") || tc.number != "" && !strings.Contains(r.stdout, tc.number) {
				t.Errorf("text: %s", r.stdout)
			}
		})
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestCancelOnKibana96: the task of a blocking:false send is asked to
// cancel; Kibana answers not cancelable, and cancel says its run goes on.
func TestCancelOnKibana96(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V96
		o.Agents[1].RunTime = 5 * time.Second
	})
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "stop it", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	st := p.store()
	waitUntil(t, "the task to be named", 10*time.Second, func() bool {
		rec, err := st.Load(ctxID)
		return err == nil && rec.TaskID != ""
	})
	r = p.run("cancel", ctxID)
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "tasks/cancel: not cancelable") || !strings.Contains(r.stderr, "canceled") {
		t.Errorf("stderr %q", r.stderr)
	}
	rec, _ := st.Load(ctxID)
	if rec.State != store.Canceled || !strings.Contains(rec.Reason, "Task Manager run") {
		t.Errorf("record %s %q", rec.State, rec.Reason)
	}
	// The run goes on, and fetch reads its reply.
	waitUntil(t, "the run to end", 15*time.Second, func() bool { _, ok := sim.CompletedAt(ctxID); return ok })
	r = p.run("fetch", ctxID)
	r.expect(t, ExitOK)
	if r.stdout != "Report for stop it: 14 escalations.\n" || sim.Runs(ctxID) != 1 {
		t.Errorf("stdout %q, %d runs", r.stdout, sim.Runs(ctxID))
	}
}

// TestFetchAsksTheTask: on the task path, a run that failed leaves no round
// in 9.6's conversation; fetch with the local record asks tasks/get, which
// says failed. And when the conversation cannot be read at all (a Task
// Manager run's shifting owner), the task's own text is the reply.
func TestFetchAsksTheTask(t *testing.T) {
	t.Parallel()
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		fetchAfterWorkerDies(t, "slow-flaky", nil, ExitTaskFailed, func(f taskDoc) bool {
			return f.State == "failed" && strings.Contains(f.Reason, "model provider timed out")
		})
	})
	t.Run("completed, conversation unreadable", func(t *testing.T) {
		t.Parallel()
		unreadable := []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 404}}
		fetchAfterWorkerDies(t, "slow-done", unreadable, ExitOK, func(f taskDoc) bool {
			return f.State == "completed" && f.Reply != nil && *f.Reply == "done late"
		})
	})
}

// fetchAfterWorkerDies sends to agent on 9.6 with a short --timeout, kills
// the worker that took over before the run ends, sets faults, and runs
// fetch once the run has ended.
func fetchAfterWorkerDies(t *testing.T, agent string, faults []agentbuildertest.StatusFault, code int, ok func(taskDoc) bool) {
	t.Helper()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V96
		o.Agents = append(o.Agents, slowFlaky, agentbuildertest.Agent{ID: "slow-done", Name: "Slow", RunTime: 1500 * time.Millisecond, Reply: "done late"})
	})
	h := newHarness(t, sim)
	r := h.run("send", agent, "fails", "--timeout", "300ms", "--poll-interval", "100ms", "--json")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	stateDir := h.env["A2A_COURIER_STATE_DIR"]
	killWorkersAtCleanup(t, stateDir)
	// The worker that took over is killed before the run fails (1.5 s):
	// fetch, not a worker, must tell.
	waitUntil(t, "the worker to start", 5*time.Second, func() bool { return len(proctest.Workers(stateDir)) > 0 })
	killWorkers(stateDir)
	st, _ := store.Open(stateDir)
	waitUntil(t, "the lock to be freed", 5*time.Second, func() bool { return !st.Locked(d.ContextID) })
	waitUntil(t, "the run to fail", 10*time.Second, func() bool { return sim.ActiveRuns() == 0 })
	if rec, _ := st.Load(d.ContextID); rec.State.Terminal() {
		t.Fatalf("the worker recorded %s before it was killed", rec.State)
	}
	sim.SetFaults(agentbuildertest.Faults{Statuses: faults})
	r = h.run("fetch", d.ContextID, "--json")
	r.expect(t, code)
	if f := decodeTask(t, r.stdout); !ok(f) {
		t.Fatalf("%+v", f)
	}
}

// TestHistoryOrderOnStaleUpdatedAt: Kibana 9.3 does not move updated_at on
// follow-up rounds; a conversation continued on this machine sorts by its
// last reply.
func TestHistoryOrderOnStaleUpdatedAt(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V93 })
	h := newHarness(t, sim)
	first := decodeTask(t, h.run("send", "elastic-ai-agent", "first conversation", "--json").stdout).ContextID
	second := decodeTask(t, h.run("send", "elastic-ai-agent", "second conversation", "--json").stdout).ContextID
	h.run("send", "elastic-ai-agent", "first again", "--context", first).expect(t, ExitOK)
	r := h.run("history", "--json")
	r.expect(t, ExitOK)
	var doc historyDoc
	json.Unmarshal([]byte(r.stdout), &doc)
	if len(doc.Conversations) != 2 || doc.Conversations[0].ID != "a2a-"+first || doc.Conversations[1].ID != "a2a-"+second {
		t.Fatalf("order %+v", doc.Conversations)
	}
}

// TestShowInterruptedRound: on Serverless a failed run is a round with an
// empty response and an interruption; show says it failed, never prints an
// empty reply as an answer.
func TestShowInterruptedRound(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.VServerless })
	h := newHarness(t, sim)
	ctxID := decodeTask(t, h.run("send", "elastic-ai-agent", "works", "--json").stdout).ContextID
	// The next run fails (a follow-up goes to the conversation's own agent).
	sim.SetFaults(agentbuildertest.Faults{FailRuns: 1, FailReason: "No complete response received from chat service"})
	r := h.run("send", "elastic-ai-agent", "breaks", "--context", ctxID, "--json")
	r.expect(t, ExitTaskFailed)
	r = h.run("show", ctxID)
	r.expect(t, ExitTaskFailed)
	if r.stdout != "" || !strings.Contains(r.stderr, "round 2 of conversation a2a-"+ctxID+" failed: No complete response") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = h.run("show", ctxID, "--all-rounds", "--json")
	r.expect(t, ExitTaskFailed)
	var doc showAllDoc
	json.Unmarshal([]byte(r.stdout), &doc)
	if len(doc.Rounds) != 2 || doc.Rounds[0].Reply == nil || doc.Rounds[1].Reply != nil || doc.Rounds[1].Interruption != "failed" {
		t.Errorf("%s", r.stdout)
	}
}

// --progress on Kibana's task path (9.6) says once that tasks/get reports
// no status updates, for send and for result --wait; on 9.5's stream the
// agent's own updates are the lines.
func TestProgressOnTheTaskPathSaysThereIsNone(t *testing.T) {
	t.Parallel()
	const quiet = "progress: working: Kibana's task path (tasks/get) reports no status updates; the reply comes when the run ends\n"
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
	h := newHarness(t, sim)
	r := h.run("send", "audit-agent", "quietly", "--progress")
	r.expect(t, ExitOK)
	if strings.Count(r.stderr, quiet) != 1 || strings.Count(r.stderr, "progress:") != 1 {
		t.Errorf("send: stderr %q", r.stderr)
	}
	r = h.run("send-async", "audit-agent", "quietly, later")
	r.expect(t, ExitOK)
	r = h.run("result", strings.TrimSpace(r.stdout), "--wait", "--timeout", "30s", "--progress")
	r.expect(t, ExitOK)
	if strings.Count(r.stderr, quiet) != 1 {
		t.Errorf("result: stderr %q", r.stderr)
	}
	var ids []string
	for range 2 {
		r = h.run("send-async", "audit-agent", "one of two")
		r.expect(t, ExitOK)
		ids = append(ids, strings.TrimSpace(r.stdout))
	}
	r = h.run("result", ids[0], ids[1], "--wait", "--timeout", "30s", "--progress")
	r.expect(t, ExitOK)
	if strings.Count(r.stderr, quiet) != 1 {
		t.Errorf("result of two: stderr %q", r.stderr)
	}
	old := newHarness(t, startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V95 }))
	if r := old.run("send", "audit-agent", "streamed", "--progress"); strings.Contains(r.stderr, "task path") {
		t.Errorf("9.5: stderr %q", r.stderr)
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}
