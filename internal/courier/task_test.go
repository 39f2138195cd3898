package courier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// errInterrupt stands for the caller's Ctrl-C (cmd/cli's signal cause).
var errInterrupt = errors.New("interrupt")

func interrupted(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errInterrupt) }

// Task.Foreground's hand-off rules: a final outcome stays here; a message
// interrupted before it left is dropped (nothing ran); one stopped before
// it left otherwise, or after it left, goes to a worker, which sends the
// first once and only reads the second: one run each on the server.
func TestForegroundHandOffRules(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	submit := func(agent, text string) *Task {
		t.Helper()
		task, err := c.Submit(context.Background(), message(sim, agent, text), "send")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(task.Release)
		return task
	}
	settled := func(rec *store.Record) *store.Record {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		got, err := c.Wait(ctx, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	task := submit("quick", "here")
	end := task.Foreground(context.Background(), Work{Command: "send", Interrupted: interrupted})
	if end.Err != nil || end.HandedOff || end.Record.State != store.Completed || end.Record.Reply != "Echo: here" {
		t.Fatalf("final: %+v", end)
	}

	task = submit("quick", "never mind")
	ctx, stop := context.WithCancelCause(context.Background())
	stop(errInterrupt)
	end = task.Foreground(ctx, Work{Command: "send", Interrupted: interrupted})
	if end.HandedOff || end.Record.State != store.Canceled || end.Record.CanceledBy != "interrupt" || !strings.Contains(end.Record.Reason, "nothing ran") {
		t.Fatalf("interrupted before it left: %+v", end)
	}

	unsent := submit("quick", "later")
	ctx, stop = context.WithCancelCause(context.Background())
	stop(context.DeadlineExceeded) // the caller's wait, before anything left
	end = unsent.Foreground(ctx, Work{Command: "send", Interrupted: interrupted})
	if !errors.Is(end.Err, ErrHandedOff) || !end.HandedOff || end.Record.State != store.Queued {
		t.Fatalf("stopped before it left: %+v", end)
	}

	sent := submit("slow", "going")
	ctx, stop = context.WithCancelCause(context.Background())
	end = sent.Foreground(ctx, Work{Command: "send", Interrupted: interrupted, OnEvent: func(e client.Event) {
		if e.Kind == client.EventWritten {
			stop(errInterrupt) // Ctrl-C once the request is out
		}
	}})
	if !errors.Is(end.Err, ErrHandedOff) || !end.HandedOff || end.Record.State.Terminal() || end.Record.State == store.Queued {
		t.Fatalf("stopped after it left: %+v", end)
	}

	for _, task := range []*Task{unsent, sent} {
		rec := task.Record()
		if got := settled(rec); got.State != store.Completed || sim.Runs(rec.ContextID) != 1 {
			t.Errorf("%s: %s after %d runs", rec.ContextID, got.State, sim.Runs(rec.ContextID))
		}
	}
	if n := sim.Runs(task.Record().ContextID); n != 0 {
		t.Errorf("the dropped message ran %d times", n)
	}
}
