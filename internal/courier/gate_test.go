package courier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// A caller that stops while the record is written sending (the write
// that says the message leaves) sends nothing: the record goes back to
// queued with its text, for a worker to send once (a stop of --timeout,
// SIGTERM, the MCP server stopping), or ends canceled, nothing sent (a
// cancel). It used to stay sending, nothing on the server, read until its
// maximum wait.
func TestStopDuringTheSendingWriteSendsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cause error
	}{{"stopped", context.Canceled}, {"canceled", errCancelRequested}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, nil)
			c := newEngine(t)
			rec := queued(t, c, message(sim, "quick", "stop while it leaves"))
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			c.write = func(h *store.Handle, fn func(*store.Record) error) (*store.Record, error) {
				var probe store.Record
				fn(&probe)
				nr, err := h.Update(fn)
				if probe.State == store.Sending {
					stop(tc.cause) // lands while the write is made
				}
				return nr, err
			}
			h, _ := c.Store.Lock(rec.ContextID)
			got, err := c.Run(ctx, h, Work{Command: "send", Key: testKey})
			h.Release()
			disk := load(t, c, rec.ContextID)
			if n := sim.Runs(rec.ContextID); n != 0 {
				t.Fatalf("%d runs for a send stopped before it left (record %s)", n, disk.State)
			}
			switch tc.cause {
			case errCancelRequested:
				if err != nil || got.State != store.Canceled || disk.State != store.Canceled || disk.SentAt != nil || disk.Reason != "canceled on request, before it was sent: nothing ran" {
					t.Fatalf("%v: %s %q sent %v", err, disk.State, disk.Reason, disk.SentAt)
				}
				return
			default:
				if !errors.Is(err, ErrHandedOff) || disk.State != store.Queued || disk.Message != "stop while it leaves" || disk.SentAt != nil {
					t.Fatalf("%v: on disk %s %q sent %v", err, disk.State, disk.Message, disk.SentAt)
				}
			}
			c.write = nil
			h, _ = c.Store.Lock(rec.ContextID)
			defer h.Release()
			got, err = c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
			if err != nil || got.State != store.Completed || got.Reply != "Echo: stop while it leaves" || sim.Runs(rec.ContextID) != 1 {
				t.Fatalf("%v %s %q, %d runs", err, got.State, got.Reply, sim.Runs(rec.ContextID))
			}
		})
	}
}

// A caller that stops the instant its message goes out (EventSent: the
// sending write made, the connection let through, nothing written yet),
// or once net/http says the request is written (EventWritten, before it
// flushes its last buffer), hands over a message that reached the
// server, whole: the run is on the server once, and a worker reads its
// reply. (A stop then used to close the connection with the request still
// unwritten, or cut in its last buffer: the record said sending, and
// nothing ran.)
func TestStopOnceTheMessageGoesOutSendsItWhole(t *testing.T) {
	t.Parallel()
	for _, at := range []client.EventKind{client.EventSent, client.EventWritten} {
		t.Run(string(at), func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, nil)
			c := newEngine(t)
			for i := 0; i < 4; i++ {
				m := message(sim, "slow", "whole")
				m.MaxWait = 30 * time.Second
				rec := queued(t, c, m)
				ctx, stop := context.WithCancel(context.Background())
				h, _ := c.Store.Lock(rec.ContextID)
				first, err := c.Run(ctx, h, Work{Command: "send", Key: testKey, OnEvent: func(e client.Event) {
					if e.Kind == at {
						stop()
					}
				}})
				h.Release()
				stop()
				if !errors.Is(err, ErrHandedOff) || first.State != store.Sending && first.State != store.Working || first.Message != "" {
					t.Fatalf("try %d: %v, %s %q", i, err, first.State, first.Message)
				}
				h, _ = c.Store.Lock(rec.ContextID)
				got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
				h.Release()
				if err != nil || got.State != store.Completed || got.Reply != "Report for whole." || sim.Runs(rec.ContextID) != 1 {
					t.Fatalf("try %d: %v %s %q, %d runs", i, err, got.State, got.Reply, sim.Runs(rec.ContextID))
				}
			}
		})
	}
}
