package courier

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// busyLoop burns one CPU for ever: the body of a busy process.
func busyLoop() {
	runtime.GOMAXPROCS(1)
	for n := 0; ; n++ {
		_ = n * n
	}
}

// startBusy starts n processes (this test binary) that only burn CPU, and
// ends them, each by its own process, when the test ends.
func startBusy(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "A2A_COURIER_TEST_BUSY=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

// TestStarvedWorkersStayOne: 300 tasks of one credential, sent while two
// busy processes per CPU starve the machine, and a crowd of callers makes
// sure a worker serves them (as send-async and result do), with the
// production timing (a worker silent 10 s counts as stopped): exactly one
// worker holds the credential's worker lock at any look, every task
// completes, and none is run twice (the simulator's counts). Not parallel:
// the busy processes would starve the package's other tests too.
func TestStarvedWorkersStayOne(t *testing.T) {
	const n = 300
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "long", Name: "Long", RunTime: 3 * time.Second, Reply: "Done: {{input}}."})
	})
	c := newEngine(t)
	c.Logf = nil
	c.Timing = store.WorkerTiming{Beat: time.Second, StaleAfter: 10 * time.Second}
	env := c.Environ
	c.Environ = func() []string { return append(env(), "A2A_COURIER_TEST_STALE_AFTER=10s") }
	startBusy(t, 2*runtime.NumCPU())
	var recs []*store.Record
	for i := range n {
		m := message(sim, "long", fmt.Sprintf("task %d", i))
		m.PollInterval = time.Second
		m.MaxWait = 5 * time.Minute
		recs = append(recs, queued(t, c, m))
	}
	ident := recs[0].Identity
	ctx, stop := context.WithTimeout(context.Background(), 4*time.Minute)
	defer stop()
	var wg sync.WaitGroup
	for range 8 { // callers that each make sure a worker serves
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := c.ensureWorker(ident, testKey); err != nil {
					t.Errorf("ensureWorker: %v", err)
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}
	most, pids := 0, map[int]bool{}
	for ctx.Err() == nil {
		ws := c.Store.Workers(ident)
		most = max(most, len(ws))
		for _, w := range ws {
			pids[w.PID] = true
		}
		final := 0
		for _, r := range recs {
			if cur, err := c.Store.Load(r.ContextID); err == nil && cur.State.Terminal() {
				final++
			}
		}
		if final == n {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if most != 1 {
		t.Errorf("%d workers held the credential's locks at once (pids %v)", most, pids)
	}
	for _, r := range recs {
		cur := load(t, c, r.ContextID)
		if cur.State != store.Completed || sim.Runs(r.ContextID) != 1 {
			t.Errorf("%s: %s, %d runs", r.ContextID, cur.State, sim.Runs(r.ContextID))
		}
	}
	if sends := sim.Count(agentbuildertest.KindSend); sends != n {
		t.Errorf("%d sends for %d tasks", sends, n)
	}
	t.Logf("worker pids %v; requests %v", pids, sim.Counts())
}
