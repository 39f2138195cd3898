package courier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// ending is how a run ended: what settle writes into the record.
type ending int

const (
	// endOutcome: the agent's outcome (completed, failed, rejected,
	// canceled, input required).
	endOutcome ending = iota
	// endCanceled: cancel asked.
	endCanceled
	// endUnsent: the caller stopped before anything left (or while a
	// refusal was waited out): the task is queued again, for a worker.
	endUnsent
	// endHandedOff: the caller stopped after the message left: a worker
	// follows it by reading.
	endHandedOff
	// endGone: the agent can no longer show the task.
	endGone
	// endAborted: a blocking send to a release that stops such a run with
	// its connection lost it, and no outcome came within abortGrace.
	endAborted
	// endExpired: no outcome within the maximum wait.
	endExpired
	// endRefused: reading the reply was refused (401, 403).
	endRefused
	// endTooLarge: the conversation is larger than is read, and only grows.
	endTooLarge
	// endUnreadable: the round stored for the message stayed in a shape no
	// Kibana writes, once nothing else could bring the answer.
	endUnreadable
	// endStuck: nothing more can be read (a page that is not the server's,
	// a request it refuses).
	endStuck
)

// ending tells how the delivery ended; the order matters: an outcome wins
// over everything, a cancel over the caller stopping, and the caller
// stopping over the reasons the delivery gave up.
func (r *run) ending(ctx, dctx context.Context, out client.Outcome) ending {
	switch {
	case out.Final():
		return endOutcome
	case canceled(ctx):
		return endCanceled
	case ctx.Err() != nil && (out.NotSent() || r.unsent):
		return endUnsent
	case ctx.Err() != nil:
		return endHandedOff
	case errors.Is(out.Err, client.ErrTaskGone) || errors.Is(out.Err, client.ErrNoTask):
		return endGone
	case errors.Is(context.Cause(dctx), errLikelyAborted):
		return endAborted
	case dctx.Err() != nil || out.PastDeadline():
		return endExpired
	case client.IsKind(out.Err, client.KindAuth, client.KindForbidden):
		return endRefused
	case errors.Is(out.Err, client.ErrReplyTooLarge):
		return endTooLarge
	case errors.Is(out.Err, client.ErrRoundUnreadable):
		return endUnreadable
	}
	return endStuck
}

// settle writes how the run ended into the record and returns it. A write
// that fails is never silent: the record as it would be comes back with a
// *RecordWriteError (or, for a message that could not be put back in the
// queue, an error that says to send it again).
func (r *run) settle(ctx, dctx context.Context, out client.Outcome) (*store.Record, error) {
	how := r.ending(ctx, dctx, out)
	switch how {
	case endOutcome:
		return r.settleOutcome(out)
	case endCanceled:
		// Canceled before a connection was made (or while a refusal was
		// waited out): nothing reached the server, and the record says so.
		notSent := r.send && (out.NotSent() || r.unsent)
		return r.cancelWith("canceled on request", func(x *store.Record) {
			if notSent {
				x.Requeue(r.text, nil) // and canceled: it never left
			}
		})
	case endUnsent:
		return r.requeue()
	case endHandedOff:
		if cur := r.current(); cur.Target.Kind == store.TargetKibana && !cur.Target.NonBlocking && !cur.ConnectionLost {
			// This process's connection carried the blocking send: it
			// ends with the hand-off (a note; the hand-off stands without
			// it).
			r.update(func(x *store.Record) { x.ConnectionLost = true })
		}
		r.c.logf("%s: handed off in state %s", r.id, r.current().State)
		return r.current(), ErrHandedOff
	case endRefused:
		// Reading was refused and no answer is coming on the POST: the task
		// stays open (a fixed key may read it with fetch), reported as such.
		r.update(func(x *store.Record) { x.LastError = errorInfo(out.Err) })
		r.c.logf("%s: stopped: %v", r.id, out.Err)
		return r.current(), out.Err
	}
	rec, err := r.expire(out, how)
	r.audit()
	return rec, err
}

// requeue puts a message that never left back in the queue, text included,
// for the next worker to send (once). If that cannot be written, the record
// stays sending without its text, which nobody would send again: the caller
// is told to send it again.
func (r *run) requeue() (*store.Record, error) {
	if cur := r.current(); cur.State == store.Queued && cur.SentAt == nil {
		// It never went to sending (no connection was made): the record
		// is as a worker needs it, text included.
		r.c.logf("%s: handed off before sending; still queued", r.id)
		return cur, ErrHandedOff
	}
	if err := r.update(func(x *store.Record) { x.Requeue(r.text, nil) }); err != nil {
		return r.current(), fmt.Errorf("task %s was not sent, and cannot be put back in the queue (%w): no worker will send it; send the message again", r.id, err)
	}
	r.c.logf("%s: handed off before sending; back to queued", r.id)
	return r.current(), ErrHandedOff
}

// expire ends the task as expired, with the reason its ending gives; lost
// when nothing can read its reply back any more.
func (r *run) expire(out client.Outcome, how ending) (*store.Record, error) {
	reason, lost := "", false
	switch how {
	case endGone:
		// Nothing left to follow: said now rather than after the maximum
		// wait.
		reason, lost = OneLine(out.Err), true
	case endTooLarge:
		// The conversation is larger than a2a-courier reads, and it only
		// grows: no reply can ever be read back, here or by fetch.
		reason, lost = "the reply is larger than a2a-courier reads, and cannot be read back: "+OneLine(out.Err), true
	case endUnreadable:
		// The run ended (a round is stored), but what it answered cannot be
		// read: lost, not failed (nothing says it failed).
		reason, lost = "the run ended, but the round Kibana stored for it cannot be read: "+OneLine(out.Err), true
	case endAborted:
		// Most likely never coming: said now, not after hours.
		reason, lost = "its connection ended, and this Kibana release stops a blocking run when that happens (non_blocking is false): no reply came within "+
			WaitText(r.c.abortGrace())+" of it, so the run most likely ended without one; send again to ask again (fetch still reads a reply that comes later)", true
	case endStuck:
		// End it rather than leave it open for ever.
		reason = "following the task stopped: " + OneLine(out.Err)
	case endExpired:
		// The maximum wait; a run its release stopped with its connection
		// is not one to wait for longer (the reason says so).
		lost = RunLikelyAborted(r.current())
	}
	// (endExpired, the maximum wait: the reason the release behaves by.)
	rec, err := r.finalWrite(func(x *store.Record) {
		x.Finish(store.Expired, r.c.now())
		x.Reason = reason
		if reason == "" {
			x.Reason = expiredReason(x)
		}
		if out.Err != nil {
			x.LastError = errorInfo(out.Err)
		}
		x.Lost = x.Lost || lost
	})
	switch {
	case lost:
		r.c.logf("%s: lost: %v", r.id, out.Err)
	case out.Err != nil:
		r.c.logf("%s: expired: %v", r.id, out.Err)
	default:
		r.c.logf("%s: expired", r.id)
	}
	return rec, err
}

// finalWrite writes how the run ended. When the write fails, it returns
// the record as it would be and a *RecordWriteError: the caller still
// learns the outcome, and knows the record lags.
func (r *run) finalWrite(fn func(*store.Record)) (*store.Record, error) {
	if err := r.update(fn); err != nil {
		res := *r.current()
		fn(&res)
		store.BoundFreeText(&res) // as it would have been written
		return &res, &RecordWriteError{err}
	}
	return r.current(), nil
}

// settleOutcome writes the agent's outcome. When it cannot be written, the
// outcome is returned all the same, with a *RecordWriteError.
func (r *run) settleOutcome(out client.Outcome) (*store.Record, error) {
	if r.refusedNote != "" {
		out.Reason += "; " + r.refusedNote
	}
	err := r.update(func(x *store.Record) {
		x.Finish(store.State(out.State), r.c.now())
		kerr := keepReply(r.c.Store, x, out.Reply)
		if kerr == nil && x.Target.Kind == store.TargetA2A && (x.State == store.Completed || x.State == store.InputRequired) {
			kerr = keepReplyParts(r.c.Store, x, out.Parts) // files saved, data and texts apart
		}
		if kerr != nil {
			// The run finished and said something, but it cannot be kept
			// here: not a completed empty reply, and not a failure of the
			// run either. The server still has it, for fetch to read by
			// the task, which the record names; a generic agent's Message
			// is kept nowhere, and is lost.
			x.Finish(store.Expired, r.c.now())
			if out.TaskID != "" && client.ValidID(out.TaskID) {
				x.TaskID = out.TaskID
			}
			x.Reason = "the run ended " + string(out.State) + ", but its reply could not be kept (" + OneLine(kerr) +
				"): fetch " + x.ContextID + " reads it again from the server"
			if x.Target.Kind == store.TargetA2A && x.TaskID == "" {
				x.Reason = "the run ended " + string(out.State) + ", but its reply could not be kept (" + OneLine(kerr) +
					"), and the agent answered with a message, which agents do not keep: nothing can read it again"
				x.Lost = true
			}
			x.LastError = errorInfo(kerr)
			return
		}
		x.Reason = out.Reason
		x.Refusals = r.refusals
		x.Error = errorInfo(out.Err)
		x.HTTPStatus = out.HTTPStatus
		x.Via = out.Via
		if out.TaskID != "" {
			x.TaskID = out.TaskID
		}
		if x.Target.Kind == store.TargetKibana && x.Path == "" {
			// blocking:false answered without a task: a release that
			// ignores it (9.2 to 9.5), the blocking path.
			x.Path = PathBlocking
		}
	})
	r.c.logf("%s: %s (via %s)", r.id, out.State, out.Via)
	if err != nil {
		// The outcome is known but not recorded: hand it back so the
		// caller can still show it, and say the record lags.
		res := *r.current()
		res.Finish(store.State(out.State), r.c.now())
		res.Reply, res.Reason, res.Error, res.Via = out.Reply, out.Reason, errorInfo(out.Err), out.Via
		store.BoundFreeText(&res) // as it would have been written
		return &res, &RecordWriteError{err}
	}
	if rec := r.current(); rec.State == store.Rejected && KindOf(rec.Error) == client.KindNotFound {
		// The agent is gone: a cached card would let the next send record
		// a task for it.
		r.c.forgetCard(rec, r.w.Key)
	}
	r.audit()
	return r.current(), nil
}

// cancelWith ends the task canceled (after before, when given), then
// clears its cancel marker, logs and audits it. When the write fails the
// marker stays, so that the next holder of the record cancels it.
func (r *run) cancelWith(why string, before func(*store.Record)) (*store.Record, error) {
	rec, err := r.finalWrite(func(x *store.Record) {
		if before != nil {
			before(x)
		}
		markCanceled(x, r.c.now())
	})
	if err != nil {
		return rec, err
	}
	r.c.Store.ClearCancel(r.id)
	r.c.logf("%s: %s", r.id, why)
	r.audit()
	return rec, nil
}

// markCanceled ends a task canceled with the cancel command, with the
// reason that says what became of its run.
func markCanceled(x *store.Record, now time.Time) {
	var reason string
	switch {
	case x.State == store.Queued:
		reason = "canceled on request, before it was sent: nothing ran"
	case x.Target.Kind == store.TargetA2A:
		reason = "canceled on request"
	case x.Path == PathTask:
		reason = "canceled on request; Kibana cannot stop a Task Manager run over A2A (its tasks/cancel answers not cancelable), so it may still finish and `fetch` can read its reply"
	case !x.Target.NonBlocking && ReleaseAborts(x.Target):
		reason = "canceled on request; its connection was closed, and this Kibana release stops a blocking run when its connection ends: no reply will be stored"
	default:
		reason = "canceled on request; Agent Builder cannot stop a run, so it may still finish and `fetch` can read its reply"
	}
	x.Cancel("cancel", reason, now)
}

// expiredReason says what a task that had no outcome within its maximum
// wait may still come to, as the release it was sent to behaves.
func expiredReason(x *store.Record) string {
	base := fmt.Sprintf("no reply within the maximum wait (%s)", time.Duration(x.MaxWait))
	switch {
	case x.Target.Kind == store.TargetA2A || x.Path == PathTask:
		return base + "; the server may still finish: look again with fetch"
	case x.Target.NonBlocking:
		// Sent blocking:false, but its task was never named here (the
		// answer was lost): a Task Manager run may go on.
		return base + "; the run may still be going on Kibana's Task Manager, but its task id was never recorded, so only the conversation can show its end (a failure cannot be seen there): look again with fetch"
	case RunLikelyAborted(x):
		return base + "; its connection ended, and this Kibana release stops a blocking run when that happens (non_blocking is false), so the run most likely ended without a reply: send again to ask again"
	case ReleaseAborts(x.Target):
		return base + "; the server may still finish: look again with fetch"
	}
	return base + "; the server may still finish (look again with fetch), or the run failed: Kibana 9.2 to 9.5 store no failed run"
}
