package courier

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// failWrites makes the engine's record writes fail when bad says so about
// what the write would set (probed on an empty record).
func failWrites(c *Courier, bad func(probe *store.Record) bool) {
	c.write = func(h *store.Handle, fn func(*store.Record) error) (*store.Record, error) {
		var probe store.Record
		fn(&probe)
		if bad(&probe) {
			return nil, errNoSpace
		}
		return h.Update(fn)
	}
}

// A message refused by a busy server, whose wait is cut short, goes back to
// the queue; when that write fails (and the one before the wait failed
// too, so the record still says sending), the run says to send it again
// instead of leaving a record nobody would send. (A record the wait's
// write put back in the queue needs no second write: it stays queued.)
func TestRequeueThatCannotBeWrittenSaysSendAgain(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: 429, RetryAfter: "30"}}
	})
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "busy?"))
	failWrites(c, func(p *store.Record) bool { return p.State == store.Queued })
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	ctx, cancel := context.WithCancel(context.Background())
	got, err := c.Run(ctx, h, Work{Command: "worker", Key: testKey, OnEvent: func(e client.Event) {
		if e.Kind == client.EventBusy {
			cancel()
		}
	}})
	if err == nil || errors.Is(err, ErrHandedOff) || !strings.Contains(err.Error(), "send the message again") {
		t.Fatalf("err %v, record %+v", err, got)
	}
	if sim.TotalRuns() != 0 {
		t.Errorf("%d runs", sim.TotalRuns())
	}
}

// A cancel whose write fails is not lost: the run says the record lags,
// and the marker stays for the next holder of the record.
func TestCancelThatCannotBeWrittenKeepsItsMarker(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "never mind"))
	if err := c.Store.RequestCancel(rec.ContextID, rec.MessageID); err != nil {
		t.Fatal(err)
	}
	failWrites(c, func(p *store.Record) bool { return p.State == store.Canceled })
	h, _ := c.Store.Lock(rec.ContextID)
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	var rwe *RecordWriteError
	if !errors.As(err, &rwe) || got.State != store.Canceled {
		t.Fatalf("err %v, record %+v", err, got)
	}
	if !c.Store.CancelRequested(rec.ContextID, rec.MessageID) || load(t, c, rec.ContextID).State != store.Queued {
		t.Fatal("the cancel marker went with the failed write")
	}
	if sim.TotalRuns() != 0 {
		t.Errorf("%d runs", sim.TotalRuns())
	}
}

// A task that expires while its record cannot be written: the run hands
// back the expired record and says the record lags, never nil, never
// silence.
func TestExpiryThatCannotBeWrittenSaysSo(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	m := message(sim, "slow", "too slow")
	m.MaxWait = 200 * time.Millisecond
	rec := queued(t, c, m)
	failWrites(c, func(p *store.Record) bool { return p.State == store.Expired })
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	var rwe *RecordWriteError
	if !errors.As(err, &rwe) || got == nil || got.State != store.Expired || !strings.Contains(got.Reason, "maximum wait") {
		t.Fatalf("err %v, record %+v", err, got)
	}
	if disk := load(t, c, rec.ContextID); disk.State.Terminal() {
		t.Errorf("on disk %s", disk.State)
	}
}

// A reply fetch read, for a record whose lock cannot be taken at all (an
// immutable state directory), is said not to be written: the error comes
// back, instead of fetch reporting the record as updated.
func TestFetchedReplyWhoseLockCannotBeTakenIsNotSilent(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "read me"))
	h, _ := c.Store.Lock(rec.ContextID)
	for _, s := range []store.State{store.Sending, store.Working} {
		if _, err := h.Update(func(x *store.Record) error { x.State = s; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	local, _ := h.Load()
	h.Release()
	os.Remove(filepath.Join(c.Store.TasksDir(), rec.ContextID+".lock"))
	if out, err := exec.Command("chattr", "+i", c.Store.TasksDir()).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", c.Store.TasksDir()).Run() })
	fetched := *local
	fetched.State, fetched.Reply = store.Completed, "the reply"
	written, err := c.writeFetched(local, &fetched)
	if written || err == nil {
		t.Fatalf("written %v, err %v: a lock that cannot be taken went unsaid", written, err)
	}
}
