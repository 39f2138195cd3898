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
	if err := c.inPlace(c.Store.RequestCancel(rec.ContextID, rec.MessageID)); err != nil {
		return nil, err
	}
	h, lerr := c.Store.Lock(rec.ContextID)
	if lerr != nil && !errors.Is(lerr, store.ErrLocked) {
		// Not held by a worker: the lock cannot be taken at all (a state
		// directory that cannot be written). The marker stays.
		return nil, lerr
	}
	if lerr == nil {
		updated, err := h.Update(func(x *store.Record) error {
			// Only the message this cancel read: a later message of the
			// context may have replaced it since (the earlier one, final,
			// is then in the archive).
			if x.MessageID == msgID && !x.State.Terminal() {
				markCanceled(x, c.now())
			}
			return nil
		})
		h.Release()
		if err = c.inPlace(err); err != nil {
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
			}); c.inPlace(err) == nil {
				rec = updated
			} else {
				// Canceled all the same; only who did it is not written.
				c.logf("%s: canceled, but the record could not say by whom: %v", rec.ContextID, err)
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

// WatchCancel returns a context that ends, with errCancelRequested as its
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
					cancel(errCancelRequested)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }
}

// StopWay is how cancel can stop a task's run on its server, as far as
// the server lets it (StopWayOf).
type StopWay int

const (
	// StopNothing: the message was not sent (queued), so nothing of it is
	// on the server. An answer (send --task) carries the id of the task it
	// answers, whose work is not this record's to cancel.
	StopNothing StopWay = iota
	// StopAgent: the generic agent is asked to cancel the task
	// (tasks/cancel, CancelTask: StopAgentTask).
	StopAgent
	// StopUnnamed: the generic agent has not named the task yet, so it
	// cannot be canceled on the server; the record stops being followed.
	StopUnnamed
	// StopTaskManager: a Task Manager run (blocking:false) is asked
	// (StopKibanaTask); Kibana 9.6 answers not cancelable, a release that
	// can stop it answers canceled.
	StopTaskManager
	// StopKibanaUnnamed: a blocking:false send whose task Kibana has not
	// named yet: it cannot be asked, and may go on.
	StopKibanaUnnamed
	// StopByClosing: a blocking send to a release that stops the run when
	// its connection is closed (9.6, Serverless), which ending its holder
	// does.
	StopByClosing
	// StopCannot: Agent Builder cannot stop the run (9.2 to 9.5): it may go
	// on, and fetch can still read its reply.
	StopCannot
)

// StopWayOf says how a record's run can be stopped on its server.
func StopWayOf(rec *store.Record) StopWay {
	kibana := rec.Target.Kind != store.TargetA2A
	switch {
	case rec.State == store.Queued:
		return StopNothing
	case !kibana && rec.TaskID != "":
		return StopAgent
	case !kibana:
		return StopUnnamed
	case rec.Target.NonBlocking && rec.TaskID != "":
		return StopTaskManager
	case rec.Target.NonBlocking:
		return StopKibanaUnnamed
	case ReleaseAborts(rec.Target):
		return StopByClosing
	}
	return StopCannot
}

// StopAgentTask asks a generic agent to cancel a record's task (StopAgent),
// with key, the credential of its target.
func (c *Courier) StopAgentTask(ctx context.Context, rec *store.Record, key client.Secret) error {
	ag, err := c.A2A(rec.Target, key)
	if err != nil {
		return err
	}
	_, err = ag.CancelTask(ctx, rec.TaskID)
	return err
}

// KibanaStop is what Kibana answered when asked to cancel a Task Manager
// run.
type KibanaStop struct {
	// Stopped: Kibana canceled the run.
	Stopped bool
	// NotCancelable: Kibana cannot stop a Task Manager run over A2A
	// (tasks/cancel answered "task not cancelable", -32002): it goes on.
	NotCancelable bool
	// State is the task's state when Kibana answered with it, not canceled.
	State string
	// Err is any other failure of the request.
	Err error
}

// StopKibanaTask asks Kibana (k, the client of the record's Kibana) to
// cancel a record's Task Manager run (StopTaskManager).
func StopKibanaTask(ctx context.Context, k *client.Kibana, rec *store.Record) KibanaStop {
	task, err := k.CancelTask(ctx, rec.Agent, rec.TaskID)
	var ce *client.Error
	switch {
	case err == nil && task.State == "canceled":
		return KibanaStop{Stopped: true}
	case errors.As(err, &ce) && ce.RPCCode == -32002:
		return KibanaStop{NotCancelable: true}
	case err != nil:
		return KibanaStop{Err: err}
	}
	return KibanaStop{State: task.State}
}

// CancelRemote cancels a task this machine has no record of, by its id, on
// a generic agent (target, with key), and returns the record of what the
// agent answered: not written anywhere (A2A tasks carry no creation time,
// so created_at is left out). agent names it.
func (c *Courier) CancelRemote(ctx context.Context, target store.Target, key client.Secret, agent, taskID string) (*store.Record, error) {
	ag, err := c.A2A(target, key)
	if err != nil {
		return nil, err
	}
	task, err := ag.CancelTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	return &store.Record{ContextID: task.ContextID, TaskID: task.TaskID, Agent: agent, CanceledBy: "cancel",
		Target: target, State: stateFromA2A(task.State), Reason: "canceled on request"}, nil
}

// stateFromA2A maps an A2A task state to a record state; a state not final
// is working.
func stateFromA2A(s string) store.State {
	switch s {
	case "completed":
		return store.Completed
	case "failed":
		return store.Failed
	case "canceled":
		return store.Canceled
	case "rejected":
		return store.Rejected
	case "input-required", "auth-required":
		return store.InputRequired
	}
	return store.Working
}
