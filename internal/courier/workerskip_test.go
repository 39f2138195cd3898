package courier

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A task whose reply could not be read is not claimed again when an event
// of its record comes after the run ended: Windows delivers the event of
// the worker's own last write late, and a second claim held the task's
// lock when `result --wait` looked (it said "still running", exit 8,
// instead of the refusal). Only a record that changed is looked at again.
func TestALateEventDoesNotClaimARefusedTaskAgain(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.ProxyCutAfter = 100 * time.Millisecond
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 403}}
	})
	c := newEngine(t)
	m := message(sim, "slow", "forbidden to read")
	rec := queued(t, c, m)
	w := &worker{st: c.Store, ident: rec.Identity, c: c, key: m.Key,
		active: map[string]context.CancelCauseFunc{}, skip: map[string]time.Time{}, done: make(chan taskEnd, 16),
		feeds: newFeeds(), hurry: map[string]*client.Hurry{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer func() { cancel(); w.wg.Wait() }()
	w.claim(ctx, rec.ContextID)
	select {
	case end := <-w.done:
		if !end.stopped {
			t.Fatalf("the run did not stop on the refusal: %+v", end)
		}
		w.ended(end)
	case <-ctx.Done():
		t.Fatal("the run did not end")
	}
	runs := sim.TotalRuns()
	w.changed(ctx, store.Change{Kind: store.RecordChanged, ContextID: rec.ContextID}) // the late event of the last write
	if w.active[rec.ContextID] != nil {
		t.Errorf("the refused task was claimed again by a late event of its unchanged record")
	}
	if got := sim.TotalRuns(); got != runs {
		t.Errorf("%d runs, want %d", got, runs)
	}
}
