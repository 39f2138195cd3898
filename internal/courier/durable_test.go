package courier

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/a2a-courier/a2a-courier/store"
)

// syncFailsAt makes the fsync of the tasks directory fail (EIO) after a
// write that put the record of id in state s in place: the record on disk
// is the new one, only its directory is not synced.
func syncFailsAt(t *testing.T, c *Courier, id string, s store.State) {
	t.Helper()
	c.Store.SetDirSyncFault(func(dir string) error {
		if dir != c.Store.TasksDir() {
			return nil
		}
		if rec, err := c.Store.Load(id); err == nil && rec.State == s {
			return &os.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
		}
		return nil
	})
}

// The sending write is in place but its directory cannot be synced: the
// message is not sent on its strength (a crash of the machine could bring
// the record back queued, and a worker would send it a second time); the
// record is written back queued with its text, and the error says so, not
// "not sent" beside a record that says sending. Once the directory syncs,
// a worker sends it once. (Before: "not sent", the record on disk sending
// without its text, which nobody would ever send.)
func TestSendingWriteNotDurableIsPutBack(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "sync me"))
	syncFailsAt(t, c, rec.ContextID, store.Sending)
	h, _ := c.Store.Lock(rec.ContextID)
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	h.Release()
	if err == nil || !strings.Contains(err.Error(), "not sent") || !strings.Contains(err.Error(), "queued again") {
		t.Fatalf("err %v", err)
	}
	disk := load(t, c, rec.ContextID)
	if disk.State != store.Queued || disk.Message != "sync me" || disk.SentAt != nil || got.State != store.Queued || sim.Runs(rec.ContextID) != 0 {
		t.Fatalf("on disk %s %q, returned %s, %d runs", disk.State, disk.Message, got.State, sim.Runs(rec.ContextID))
	}
	c.Store.SetDirSyncFault(nil)
	h, _ = c.Store.Lock(rec.ContextID)
	defer h.Release()
	got, err = c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	if err != nil || got.State != store.Completed || got.Reply != "Echo: sync me" || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("%v %s %q, %d runs", err, got.State, got.Reply, sim.Runs(rec.ContextID))
	}
}

// When the sending write is not durable and the write that would put it
// back fails outright, the error says the record cannot be put back and
// to send the message again: it is what the disk says (sending, no text).
func TestSendingWriteNotDurableAndNoPutBackSaysSendAgain(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "lost cause"))
	syncFailsAt(t, c, rec.ContextID, store.Sending)
	failWrites(c, func(p *store.Record) bool { return p.State == store.Queued })
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	_, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	if err == nil || !strings.Contains(err.Error(), "not sent") || !strings.Contains(err.Error(), "send the message again") {
		t.Fatalf("err %v", err)
	}
	if disk := load(t, c, rec.ContextID); disk.State != store.Sending || sim.Runs(rec.ContextID) != 0 {
		t.Fatalf("on disk %s, %d runs", disk.State, sim.Runs(rec.ContextID))
	}
}

// The outcome's write is in place but not synced: the run reports the
// outcome as written (the disk says completed), not "the record lags".
func TestOutcomeWriteNotDurableIsWritten(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "done"))
	syncFailsAt(t, c, rec.ContextID, store.Completed)
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	if err != nil || got.State != store.Completed || got.Reply != "Echo: done" {
		t.Fatalf("%v %s", err, got.State)
	}
	if disk := load(t, c, rec.ContextID); disk.State != store.Completed || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("on disk %s, %d runs", disk.State, sim.Runs(rec.ContextID))
	}
}

// A message stopped during its sending write goes back to the queue; that
// write in place but not synced is the record a worker finds: handed off,
// not "cannot be put back in the queue; send the message again".
func TestRequeueNotDurableIsHandedOff(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "back in line"))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c.write = func(h *store.Handle, fn func(*store.Record) error) (*store.Record, error) {
		var probe store.Record
		fn(&probe)
		nr, err := h.Update(fn)
		if probe.State == store.Sending {
			stop()
			syncFailsAt(t, c, rec.ContextID, store.Queued) // from the next write on
		}
		return nr, err
	}
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	got, err := c.Run(ctx, h, Work{Command: "send", Key: testKey})
	if !errors.Is(err, ErrHandedOff) || got.State != store.Queued {
		t.Fatalf("%v %s", err, got.State)
	}
	if disk := load(t, c, rec.ContextID); disk.State != store.Queued || disk.Message != "back in line" || sim.Runs(rec.ContextID) != 0 {
		t.Fatalf("on disk %s %q, %d runs", disk.State, disk.Message, sim.Runs(rec.ContextID))
	}
}
