package courier

import (
	"context"
	"errors"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Cancelling a task is a record transition like any other, and only the
// holder of the record's lock writes it: cancel leaves a marker, which the
// worker holding the record notices (the foreground send too, WatchCancel);
// with nobody holding it, cancel writes the record itself.

// ErrCancelPending means the worker holding a task has not confirmed the
// cancel yet: the marker stays, and the worker stops following the task
// when it next looks.
var ErrCancelPending = errors.New("the worker holding the task has not confirmed the cancel yet")

// ErrCancelReplaced means the task got a new message while it was being
// canceled, and the canceled message's record is not in the archive.
var ErrCancelReplaced = errors.New("the task got a new message while it was being canceled, and the canceled message's record is not in the archive")

// Cancel ends a task's record as canceled and returns it: the worker
// holding it does so when it notices the marker (Cancel waits for it until
// ctx ends: ErrCancelPending); with no worker, this process does. stopped
// says the agent stopped the run, which the reason then says.
func (c *Courier) Cancel(ctx context.Context, rec *store.Record, stopped bool) (*store.Record, error) {
	msgID := rec.MessageID
	if err := c.Store.RequestCancel(rec.ContextID, rec.MessageID); err != nil {
		return nil, err
	}
	if h, err := c.Store.Lock(rec.ContextID); err == nil {
		updated, err := h.Update(func(x *store.Record) error {
			// Only the message this cancel read: a later message of the
			// context may have replaced it since (the earlier one, final,
			// is then in the archive).
			if x.MessageID == msgID && !x.State.Terminal() {
				MarkCanceled(x, c.now())
			}
			return nil
		})
		h.Release()
		if err != nil {
			// The marker stays: whoever holds the record next cancels it.
			return nil, err
		}
		c.Store.ClearCancel(rec.ContextID)
		if rec = updated; rec.MessageID != msgID {
			old, aerr := c.Store.LoadArchived(rec.ContextID, msgID)
			if aerr != nil {
				return nil, ErrCancelReplaced
			}
			return old, nil
		}
	} else {
		var err error
		if rec, err = c.waitCanceled(ctx, rec); err != nil {
			return nil, err
		}
	}
	if rec.State == store.Canceled && rec.MessageID == msgID && (rec.CanceledBy == "" || stopped) {
		// The agent's canceled state reached the worker before the marker
		// did: it was this cancel all the same. And a Kibana that stopped
		// the run is said to have.
		if h, err := c.Store.Lock(rec.ContextID); err == nil {
			if updated, err := h.Update(func(x *store.Record) error {
				if x.State == store.Canceled && x.MessageID == msgID {
					x.CanceledBy = "cancel"
					if stopped {
						x.Reason = "canceled on request; Kibana stopped the run"
					}
				}
				return nil
			}); err == nil {
				rec = updated
			}
			h.Release()
		}
	}
	return rec, nil
}

// waitCanceled waits for the worker holding a record to notice the cancel
// marker and end the message: until then, the record is not what the
// cancel is about. A later message of the context may replace the record
// meanwhile: the canceled one is then in the archive (only a final record
// is archived).
func (c *Courier) waitCanceled(ctx context.Context, rec *store.Record) (*store.Record, error) {
	msgID := rec.MessageID
	for {
		cur, err := c.Store.Load(rec.ContextID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			// Being replaced by a new message: look again.
		case err != nil:
			return nil, err
		case cur.MessageID != msgID:
			if old, aerr := c.Store.LoadArchived(rec.ContextID, msgID); aerr == nil {
				return old, nil
			}
			return nil, ErrCancelReplaced
		case cur.State.Terminal():
			return cur, nil
		}
		if client.SleepContext(ctx, 100*time.Millisecond) != nil {
			return nil, ErrCancelPending
		}
	}
}

// LoadSettled loads a record, looking again for a moment when it is not
// there: a new message of the context replaces its record (archive, then
// create), and in between there is none.
func (c *Courier) LoadSettled(ctx context.Context, id string) (*store.Record, error) {
	for i := 0; ; i++ {
		rec, err := c.Store.Load(id)
		if !errors.Is(err, store.ErrNotFound) || i == 4 || client.SleepContext(ctx, 25*time.Millisecond) != nil {
			return rec, err
		}
	}
}

// WatchCancel returns a context that ends, with ErrCancelRequested as its
// cause, when cancel asks to stop the message of rec: a foreground send
// honours it as a worker does. stop ends the watch.
func (c *Courier) WatchCancel(ctx context.Context, rec *store.Record) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		t := time.NewTicker(300 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if c.Store.CancelRequested(rec.ContextID, rec.MessageID) {
					cancel(ErrCancelRequested)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}
