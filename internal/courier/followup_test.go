package courier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/store"
)

// TestFollowUpWaitsForTheLockOfAFinishedExchange: whoever ends an exchange
// writes its final state before it lets the context's lock go, so a
// follow-up sent the moment result --wait returned may find the lock
// still held (seen: "a message is already in flight" right after the
// reply, TestSendKilledBeforeItsRequestLeftIsSentOnce and
// TestFollowUpInTheSameContextWhileTheWorkerIsBusy under load). While the
// record says the exchange is final, the follow-up waits for the lock and
// is recorded once it is free; while it is not final, the follow-up is
// refused at once, nothing recorded.
func TestFollowUpWaitsForTheLockOfAFinishedExchange(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	first := queued(t, c, message(sim, "elastic-ai-agent", "first"))
	h, err := c.Store.Lock(first.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	// Still in flight, the lock held: refused at once.
	m := message(sim, "elastic-ai-agent", "too soon")
	m.ContextID = first.ContextID
	if _, _, err := submitted(c, context.Background(), m, "send"); !errors.As(err, new(*InFlightError)) {
		t.Fatalf("a follow-up of a queued exchange: %v, want InFlightError", err)
	}
	// The holder ends the exchange, then lets the lock go a moment later.
	for _, step := range []func(*store.Record){
		func(r *store.Record) { r.Send(time.Now()) },
		func(r *store.Record) { r.Work() },
		func(r *store.Record) { r.Reply = "done"; r.Finish(store.Completed, time.Now()) },
	} {
		if _, err := h.Update(func(r *store.Record) error { step(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		close(released)
		h.Release()
	}()
	m.Text = "and then?"
	rec, h2, err := submitted(c, context.Background(), m, "send")
	if err != nil {
		t.Fatalf("a follow-up of a completed exchange whose lock was held a moment: %v", err)
	}
	defer h2.Release()
	select {
	case <-released:
	default:
		t.Fatal("the follow-up was recorded while the lock was held")
	}
	if rec.ContextID != first.ContextID || rec.Message != "and then?" || rec.State != store.Queued {
		t.Errorf("follow-up record %s %s %q", rec.ContextID, rec.State, rec.Message)
	}
}
