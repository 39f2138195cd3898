package courier

import (
	"context"
	"errors"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Task is a task Submit recorded and whose record lock this process holds:
// it runs it here (Run, or Foreground with the hand-off rules), gives it to
// a worker (HandOff), or drops a message the user stopped before it left
// (Drop). Release lets the lock go whatever happened (a no-op once handed
// off).
type Task struct {
	c   *Courier
	h   *store.Handle
	rec *store.Record
	key client.Secret
}

// Record is the task's record as it was submitted.
func (t *Task) Record() *store.Record { return t.rec }

// Release lets the record's lock go.
func (t *Task) Release() { t.h.Release() }

// Run works on the task in this process, as Courier.Run; w.Key defaults
// to the credential it was submitted with.
func (t *Task) Run(ctx context.Context, w Work) (*store.Record, error) {
	if w.Key == "" {
		w.Key = t.key
	}
	return t.c.Run(ctx, t.h, w)
}

// HandOff gives the task to a worker: it lets the record's lock go and
// makes sure a worker serves the task's identity.
func (t *Task) HandOff() error {
	t.h.Release()
	return t.c.ensureWorker(t.rec.Identity, t.key)
}

// Drop ends a task whose message the user stopped (Ctrl-C) before it left:
// nothing ran, so there is nothing to hand over, and no worker sends it. A
// record no longer queued is left as it is.
func (t *Task) Drop() (*store.Record, error) {
	rec, err := t.h.Update(func(x *store.Record) error {
		if x.State == store.Queued {
			x.Cancel("interrupt", "interrupted (Ctrl-C) before it was sent: nothing ran; sending again is safe", t.c.now())
			x.SentAt = nil
		}
		return nil
	})
	return rec, t.c.inPlace(err) // in place, not synced: canceled all the same
}

// Ending is how a foreground run ended, after the hand-off rules.
type Ending struct {
	// Record is the task's record as the run left it; nil when the run
	// could not start (Err says why).
	Record *store.Record
	// Err is the run's: a *RecordWriteError when the outcome is known but
	// the record lags (then nothing was handed off), ErrHandedOff, a
	// *client.Error of a run that ended on one, or another error, which
	// ends the command.
	Err error
	// HandedOff says a worker took the task over; HandOffErr that none
	// could be started (the task is recorded: result --wait retries).
	HandedOff  bool
	HandOffErr error
}

// Foreground runs the task in this process until it is final or ctx ends
// (the caller's wait, or its interrupt), with a cancel from another
// process reaching it, then applies the hand-off rules: a message the user
// interrupted (w.Interrupted) before it left is dropped, since nothing ran;
// a task that is not final goes to a worker, unless this credential may
// not read its reply (a worker holding it could do no better; result
// revives one once it is fixed). Nothing is handed off after an error that
// is neither a hand-off nor the agent's, nor when the record lags.
func (t *Task) Foreground(ctx context.Context, w Work) Ending {
	ctx, stopWatch := t.c.WatchCancel(ctx, t.rec)
	defer stopWatch()
	final, err := t.Run(ctx, w)
	end := Ending{Record: final, Err: err}
	var rwe *RecordWriteError
	var ce *client.Error
	switch {
	case final == nil, errors.As(err, &rwe):
		return end
	case err != nil && !errors.Is(err, ErrHandedOff) && !errors.As(err, &ce):
		return end
	}
	if final.State == store.Queued && w.Interrupted != nil && w.Interrupted(ctx) {
		// Ctrl-C before the message left: the user stopped the send.
		if dropped, derr := t.Drop(); derr == nil {
			end.Record = dropped
		}
	}
	if !end.Record.State.Terminal() && !ReadingRefused(end.Record) {
		// The wait ran out or the caller interrupted: hand the task over.
		end.HandOffErr = t.HandOff()
		end.HandedOff = end.HandOffErr == nil
	}
	return end
}
