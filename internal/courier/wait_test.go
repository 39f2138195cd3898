package courier

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// Wait replaces a worker that died in the middle of a task, with the key
// it was handed once (no call back into the caller): the new worker reads
// the reply back, never sends again, and the run happened once.
func TestWaitRevivesADeadWorker(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	c := newEngine(t)
	rec := queued(t, c, message(sim, "slow", "survive"))
	if err := c.Revive(rec, testKey); err != nil {
		t.Fatal(err)
	}
	// Once the message has left, the worker dies (SIGKILL, TerminateProcess:
	// no hand-off).
	deadline := time.Now().Add(20 * time.Second)
	for load(t, c, rec.ContextID).State != store.Working && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	workers := c.Store.Workers(rec.Identity)
	if len(workers) != 1 || load(t, c, rec.ContextID).State != store.Working {
		t.Fatalf("workers %v, record %+v", workers, load(t, c, rec.ContextID))
	}
	if err := proctest.Kill(workers[0].PID); err != nil {
		t.Fatal(err)
	}
	for c.Store.Locked(rec.ContextID) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.Wait(ctx, rec, Keys{rec.ContextID: testKey})
	if err != nil || got.State != store.Completed || got.Reply != "Report for survive." {
		t.Fatalf("%v %+v", err, got)
	}
	if got.Workers != 2 || sim.Runs(rec.ContextID) != 1 {
		t.Errorf("workers %d, runs %d", got.Workers, sim.Runs(rec.ContextID))
	}
}

// Without a key for it, Wait starts no worker for a task nobody works on:
// it returns the record as it stands when its wait ends.
func TestWaitWithoutAKeyRevivesNothing(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "nobody"))
	ctx, cancel := context.WithTimeout(context.Background(), reviveAfter+2*time.Second)
	defer cancel()
	got, err := c.Wait(ctx, rec, Keys{"another-context": testKey})
	if err != nil || got.State != store.Queued || len(c.Store.Workers(rec.Identity)) != 0 || sim.TotalRuns() != 0 {
		t.Fatalf("%v %+v, workers %v, runs %d", err, got, c.Store.Workers(rec.Identity), sim.TotalRuns())
	}
}
