package courier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/httplog"
	"github.com/a2a-courier/a2a-courier/store"
)

// Work is what a process working on a task knows besides its record.
type Work struct {
	// Command names the runner in the audit log: "send" or "worker".
	Command string
	// Key is the credential the task is worked with; it must be the one it
	// was sent with (the record's identity).
	Key client.Secret
	// OnEvent, when set, receives the delivery's progress, and EventBusy
	// while a refused message waits to be sent again.
	OnEvent func(client.Event)
	// Interrupted, when set, says whether a context ended by the user's
	// interrupt (Ctrl-C), not a timeout or another signal: Task.Foreground
	// drops a message so stopped before it left.
	Interrupted func(context.Context) bool
	// feeds, when set (the worker), are the conversation lists the
	// worker's tasks share; hurry says when a caller waits on this task.
	feeds *feeds
	hurry *client.Hurry
}

// Run works on one task, whose record lock h this process holds, until its
// outcome is final, until the maximum wait passes (state expired), or until
// ctx ends (ErrHandedOff: the state stays, so that another worker picks
// the task up by reading, never by sending again). The foreground send and
// the detached worker both come here, so both behave the same.
//
// The steps, each a method of run: load the record and build the agent's
// client; decide whether this run sends the message or only follows it
// (and end a task canceled, or without text, before anything leaves);
// begin, which counts a run that only follows the task; follow the
// delivery, whose connection, once made, waits for leaving, the write that
// marks the message as leaving (after which nobody sends it again), and
// send a refused message again as the server asks (retry.go); settle the
// record with how it ended (settle.go).
func (c *Courier) Run(ctx context.Context, h *store.Handle, w Work) (*store.Record, error) {
	r := &run{c: c, h: h, w: w, id: h.ContextID()}
	if done, err := r.load(); done || err != nil {
		return r.rec, err
	}
	defer r.clearFinishedCancel()
	if r.current().Verbose {
		// Asked with -v: its requests are shown by a client that logs the
		// marked ones (the worker's, to its log).
		ctx = httplog.WithLabel(ctx, r.id)
	}
	if rec, done, err := r.decide(ctx); done || err != nil {
		return rec, err
	}
	if err := r.begin(); err != nil {
		return r.current(), err
	}
	// A wait on this process's clock (Courier.Now), as every time the
	// record holds.
	end := r.deadline()
	deadline, cancel := context.WithTimeout(ctx, end.Sub(r.c.now()))
	defer cancel()
	dctx, giveUp := context.WithCancelCause(deadline)
	defer giveUp(nil)
	r.giveUp = giveUp
	r.watchAbort()
	defer r.stopAbortWatch()
	defer r.stopProgress()
	out, err := r.follow(ctx, dctx)
	if err != nil {
		return r.current(), err
	}
	return r.settle(ctx, dctx, out)
}

// deliverer sends a record's message, its text and parts (send false: only
// follows it) and returns the outcome; on receives the progress, and
// before is called once a connection is made, before the request is
// written to it (client.DeliverOptions.BeforeSend).
type deliverer func(ctx context.Context, x *store.Record, send bool, text string, parts []client.Part, on func(client.Event), before func() error, until time.Time) client.Outcome

// run is one task being worked on. It is the one writer of the record in
// this process: every write goes through update, under mu, because the
// delivery's events arrive on the HTTP client's goroutines. rec and
// written are only touched under mu.
type run struct {
	c  *Courier
	h  *store.Handle
	w  Work
	id string

	deliver deliverer
	// send: this run sends the message (a record still queued); else it
	// recovers the task by reading.
	send bool
	text string
	// parts are the files and data sent beside the text, read back from
	// the spool (with their hashes checked) when this run sends.
	parts []client.Part

	mu  sync.Mutex
	rec *store.Record
	// written: the request was written whole (EventWritten), so the
	// record is due to say working. Every write carries that change; on its own it is written
	// after the working delay, so that an answer arriving sooner (a quick
	// agent) makes one write, with its fsyncs, instead of two.
	written      bool
	workingTimer *time.Timer
	// until is the task's deadline (run.deadline), which the delivery is
	// told.
	until time.Time
	// giveUp ends the delivery before its maximum wait, with the cause;
	// abortTimer does so abortGrace after the connection of a blocking
	// send to a release that aborts such a run ended (errLikelyAborted).
	giveUp     context.CancelCauseFunc
	abortTimer *time.Timer

	// refusals counts the sends the server refused before taking anything
	// in (429, 503 with Retry-After), across the processes that sent it.
	refusals int
	// refusedNote says why a refused message was not sent again.
	refusedNote string
	// unsent: the last send was refused and the wait before the next one
	// was cut short, so nothing is on the server.
	unsent bool

	// counted: this run counted itself in the record's workers.
	counted bool
	// leaveErr is why the write that says the message is leaving failed:
	// the message was not sent.
	leaveErr error

	// The latest status update waiting to be written (progress.go).
	progress progressWriter
}

// load reads the record and builds the client of its agent. done is true
// for a record that is final already.
func (r *run) load() (done bool, err error) {
	rec, err := r.h.Load()
	if err != nil {
		return true, err
	}
	r.rec = rec
	if rec.State.Terminal() {
		return true, nil
	}
	if got := identity(rec.Target, r.w.Key); got != rec.Identity {
		return true, fmt.Errorf("task %s was sent with another credential; it is left for a worker holding that one", rec.ContextID)
	}
	r.deliver, err = r.c.deliverer(rec.Target, r.w)
	return err != nil, err
}

// deliverer builds the delivery of a target's tasks.
func (c *Courier) deliverer(t store.Target, w Work) (deliverer, error) {
	key := w.Key
	if t.Kind == store.TargetA2A {
		a, err := c.A2A(t, key)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, x *store.Record, send bool, text string, parts []client.Part, on func(client.Event), before func() error, until time.Time) client.Outcome {
			contextID := x.ContextID
			if x.LocalContext {
				contextID = ""
			}
			return a.Deliver(ctx, client.A2ADeliverOptions{
				Message:  client.OutgoingMessage{Text: text, Parts: parts, MessageID: x.MessageID, ContextID: contextID, TaskID: x.AnswersTask},
				Question: x.Question, Send: send, TaskID: x.TaskID, Streaming: t.Streaming,
				PollInterval: time.Duration(x.PollInterval), OnEvent: on, BeforeSend: before, Deadline: until,
			})
		}, nil
	}
	k, err := c.Kibana(t, key)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, x *store.Record, send bool, text string, parts []client.Part, on func(client.Event), before func() error, until time.Time) client.Outcome {
		return k.Deliver(ctx, client.DeliverOptions{
			AgentID:     x.Agent,
			Message:     client.OutgoingMessage{Text: text, Parts: parts, MessageID: x.MessageID, ContextID: x.ContextID, Blocking: true},
			Send:        send,
			InputSHA256: x.MessageSHA256, RoundsBefore: x.RoundsBefore, FreshContext: x.FreshContext,
			PollInterval: time.Duration(x.PollInterval),
			Stream:       x.Target.Streaming, NonBlocking: x.Target.NonBlocking, TaskID: x.TaskID,
			OnEvent: on, BeforeSend: before, Deadline: until,
			Feed: w.feeds.feed(k, x), Hurry: w.hurry,
		})
	}, nil
}

// decide says what this run does: send the message, or recover the task by
// reading. A task canceled or without text ends here, before anything
// leaves, and a refused message waits until the server said it may come
// back. done is true when the task ended (or was handed off) here; the
// record is then how it ended.
func (r *run) decide(ctx context.Context) (_ *store.Record, done bool, err error) {
	rec := r.current()
	if r.c.Store.CancelRequested(r.id, rec.MessageID) {
		rec, err := r.cancelWith("canceled on request", nil)
		return rec, true, err
	}
	r.send = rec.State == store.Queued
	r.text = rec.Message
	var perr error
	if r.send {
		r.parts, perr = r.c.spooledParts(rec)
	}
	switch {
	case r.send && r.text == "" && len(rec.Parts) == 0: // files or data alone may have no text
		rec, err := r.finalWrite(func(x *store.Record) {
			x.Finish(store.Failed, r.c.now())
			x.Reason = "the record holds no message text to send"
		})
		return rec, true, err
	case perr != nil:
		rec, err := r.finalWrite(func(x *store.Record) {
			x.Finish(store.Failed, r.c.now())
			x.Reason = OneLine(perr) + ": nothing was sent; send the message again"
		})
		return rec, true, err
	case !r.send:
		return nil, false, nil
	}
	if rec.RetryAt != nil {
		// The server refused this message earlier and said when to come
		// back: not before then (and never longer than a send waits).
		if d := min(rec.RetryAt.Sub(r.c.now()), MaxSendRetryWait); d > 0 {
			r.c.logf("%s: the server asked to wait; sending in %s", r.id, WaitText(d))
			if client.SleepContext(ctx, d) != nil {
				if canceled(ctx) {
					rec, err := r.cancelWith("canceled on request", nil)
					return rec, true, err
				}
				return r.current(), true, ErrHandedOff
			}
		}
	}
	if canceled(ctx) || r.c.Store.CancelRequested(r.id, rec.MessageID) {
		// Canceled while it waited its turn: it is still queued, nothing
		// left.
		rec, err := r.cancelWith("canceled on request before it was sent", nil)
		return rec, true, err
	}
	return nil, false, nil
}

// canceled reports whether ctx ended because cancel asked.
func canceled(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCancelRequested)
}

// begin readies the run: a run that sends writes nothing yet (its record
// stays queued, text included, until a connection is made: leaving); a run
// that only follows the task counts itself in the record.
func (r *run) begin() error {
	if r.send {
		r.c.logf("%s: connecting to send to agent %s", r.id, r.current().Agent)
		return nil
	}
	// A count and a note: reading goes on if they cannot be written.
	r.update(func(x *store.Record) {
		x.Workers++
		// Whatever held a blocking send's connection is gone.
		x.ConnectionLost = x.ConnectionLost || x.Target.Kind == store.TargetKibana && !x.Target.NonBlocking
	})
	r.c.logf("%s: recovering (state %s): reading the conversation, never sending again", r.id, r.current().State)
	return nil
}

// leaving makes the write that says the message is leaving, as the
// delivery's BeforeSend: a connection to the server is made, and nothing
// of the request is written to it yet. Past it, the text leaves the record
// (only its hash and size stay) and the task is never sent again by
// anyone. If the write fails, the delivery closes the connection with
// nothing on it: the record, still queued with its text, is sent by the
// next worker, once. A process killed before this write leaves the record
// queued, and one killed after it a record that only ever is read. A
// caller that stops while it is made gets nothing sent (the delivery is
// NotSent, and settle puts the record back: requeue, or canceled before
// it was sent); one that stops after it gets the request written whole
// first (client's sendGate), so that sending means the message goes out.
func (r *run) leaving() error {
	r.mu.Lock()
	undurable, err := r.writeLocked(func(x *store.Record) {
		x.Send(r.c.now())
		if !r.counted {
			x.Workers++
		}
	})
	r.counted = r.counted || err == nil
	switch {
	case err != nil:
		err = fmt.Errorf("task %s not sent: cannot record that it is being sent: %w", r.id, err)
	case undurable != nil:
		err = r.unleaveLocked(undurable)
	}
	r.leaveErr = err
	rec := r.rec
	r.mu.Unlock()
	if err == nil {
		r.c.logf("%s: sending to agent %s (%d bytes)", r.id, rec.Agent, rec.MessageSize)
	}
	return err
}

// unleaveLocked answers a sending write that is in place but could not be
// synced to disk (store.ErrNotDurable): the message does not leave on its
// strength. Sent now, a crash of the machine could bring the record back
// queued with its text, and the next worker would send it a second time;
// so the record is written back queued with its text first (that write
// in place suffices: undone by a crash, it leaves the record sending, which
// nobody sends), and the send is refused. The error says what the record
// holds: queued, for a worker to send once the state directory syncs
// again, or, when even that write failed, sending without the text, which
// nobody will send.
func (r *run) unleaveLocked(undurable error) error {
	if err := r.updateLocked(func(x *store.Record) { x.Requeue(r.text, nil) }); err != nil {
		return fmt.Errorf("task %s not sent: its record could not be synced to disk (%v), and cannot be put back in the queue (%w): no worker will send it; send the message again", r.id, undurable, err)
	}
	return fmt.Errorf("task %s not sent: the state directory could not sync the record that says it is being sent (%w): it is queued again, and a worker sends it once the directory syncs; `a2a-courier result %s --wait` has one do so", r.id, undurable, r.id)
}

// leaveError is the error of a leaving write that failed.
func (r *run) leaveError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaveErr
}

// deadline is when the task is given up as expired: its maximum wait from
// the send (for a run that sends, from now: the record says when it left
// once its connection is made), kept in r.until, which the delivery is
// told: no read begins at or after it. It returns when the run's context
// ends: r.until, or, for a run that only reads, at least oneLook from now,
// so that a read begun just before r.until, and the one look a task
// revived after its deadline gets (the delivery's first read), can finish.
// (It used to be the deadline moved to now + the poll interval + 5 s
// whenever less was left, so that a worker revived a few seconds before
// the deadline went on reading 25 s past it.)
func (r *run) deadline() time.Time {
	rec := r.current()
	if r.send {
		r.until = r.c.now().Add(time.Duration(rec.MaxWait))
		return r.until
	}
	r.until = rec.Deadline()
	if minEnd := r.c.now().Add(oneLook); r.until.Before(minEnd) {
		return minEnd
	}
	return r.until
}

// oneLook bounds the last read of a run that only reads: one begun just
// before the deadline, or the one look of a task revived after it.
const oneLook = 30 * time.Second

// follow delivers the message (or follows the task) until the delivery
// has an outcome or its context ends; a message the server refused before
// taking it in is sent again as it asks (resend). An error is returned
// only when the record cannot say that the message leaves (leaving): it
// was not sent.
func (r *run) follow(ctx, dctx context.Context) (client.Outcome, error) {
	r.refusals = r.current().Refusals
	var before func() error
	if r.send {
		before = r.leaving
	}
	for {
		// The delivery's deadline is on the machine's clock (time.Now), as
		// its timers are; r.until is on this process's (Courier.Now).
		until := time.Now().Add(r.until.Sub(r.c.now()))
		out := r.deliver(dctx, r.current(), r.send, r.text, r.parts, r.onEvent, before, until)
		r.stopWorkingTimer()
		if err := r.leaveError(); err != nil {
			// Nothing left: the record is as it was, queued.
			return out, err
		}
		if !r.send || out.State != client.StateRejected || !client.RetryLater(out.Err) {
			if !out.Final() {
				r.markWorking()
			}
			return out, nil
		}
		again, out := r.resend(ctx, dctx, out)
		if !again {
			if !out.Final() && !r.unsent {
				r.markWorking()
			}
			return out, nil
		}
	}
}

// current is the record as last written.
func (r *run) current() *store.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

// update writes the record: fn's change, and working for a request that
// reached the server.
func (r *run) update(fn func(*store.Record)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.updateLocked(fn)
}

// updateLocked writes as update does. A write in place whose directory
// could not be synced (store.ErrNotDurable) counts as made: the record is
// what the disk says.
func (r *run) updateLocked(fn func(*store.Record)) error {
	_, err := r.writeLocked(fn)
	return err
}

// writeLocked writes the record; undurable is the error of a write in
// place whose directory could not be synced (err is nil then: it is made,
// and logged).
func (r *run) writeLocked(fn func(*store.Record)) (undurable, err error) {
	write := r.c.write
	if write == nil {
		write = (*store.Handle).Update
	}
	nr, err := write(r.h, func(x *store.Record) error {
		if r.written && x.State == store.Sending {
			x.Work()
		}
		fn(x)
		return nil
	})
	if err != nil && (nr == nil || !store.InPlace(err)) {
		r.c.logf("%s: cannot write the record: %v", r.id, err)
		return nil, err
	}
	r.rec = nr
	if err != nil {
		r.c.logf("%s: %v; going on as written", r.id, err)
		return err, nil
	}
	return nil, nil
}

// markWorking writes the working state if no other write carried it.
func (r *run) markWorking() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.written || r.rec.State != store.Sending {
		return
	}
	r.updateLocked(func(*store.Record) {})
}

func (r *run) stopWorkingTimer() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.workingTimer != nil {
		r.workingTimer.Stop()
	}
}

// onEvent takes the delivery's progress into the record. It is called on
// the HTTP client's goroutines; whatever it writes goes through update.
func (r *run) onEvent(e client.Event) {
	if e.Kind == client.EventProgress {
		// An agent's status text may be megabytes on one line: it goes
		// on as the record keeps it.
		e.Message = progressText(e.Message)
	}
	switch e.Kind {
	case client.EventTask:
		r.update(func(x *store.Record) {
			x.TaskID = e.TaskID
			if x.Target.Kind == store.TargetKibana && !x.Target.Streaming {
				x.Path = PathTask // the server answered blocking:false with its task
			}
		})
	case client.EventWritten:
		r.mu.Lock()
		if !r.written {
			r.written = true
			r.workingTimer = time.AfterFunc(r.c.workingDelay(), r.markWorking)
		}
		r.mu.Unlock()
	case client.EventStreamUnsupported:
		// The cached card said streaming; the next send reads it anew.
		r.c.forgetCard(r.current(), r.w.Key)
		r.update(func(x *store.Record) { x.Target.Streaming = false })
	case client.EventConnectionLost, client.EventPollError, client.EventReplyTooLarge:
		r.noteProblem(e)
	case client.EventProgress:
		r.noteProgress(e)
	}
	if e.Err != nil {
		r.c.logf("%s: %s: %s: %s", r.id, e.Kind, logText(e.Message), logText(e.Err.Error()))
	} else {
		r.c.logf("%s: %s: %s", r.id, e.Kind, logText(e.Message))
	}
	if r.w.OnEvent != nil {
		r.w.OnEvent(e)
	}
}

// noteProblem keeps the last problem of a delivery in the record, and that
// the connection of a blocking send ended; the same problem again is not
// written again.
func (r *run) noteProblem(e client.Event) {
	info := errorInfo(e.Err)
	cur := r.current()
	lost := e.Kind == client.EventConnectionLost && cur.Target.Kind == store.TargetKibana && !cur.Target.NonBlocking
	if cur.LastError != nil && info != nil && *cur.LastError == *info && (!lost || cur.ConnectionLost) {
		return
	}
	r.update(func(x *store.Record) {
		x.LastError = info
		x.ConnectionLost = x.ConnectionLost || lost
	})
	r.watchAbort()
}

// abortGrace is how long a blocking send to a Kibana release that stops
// such a run when its connection ends (9.6 and later, Serverless) is read
// back after its connection ended: a run that finished just before the
// cut (or behind a proxy that kept its own connection) shows its round by
// then; past it, the run most likely ended without one, and waiting the
// whole maximum wait (hours) would only keep a caller waiting.
const abortGrace = 2 * time.Minute

// errLikelyAborted ends a delivery abortGrace after the connection of a
// blocking send to a release that aborts such a run ended.
var errLikelyAborted = errors.New("the run was most likely stopped with its connection")

// watchAbort starts the abort grace once the record says its run was
// likely aborted (once per run).
func (r *run) watchAbort() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abortTimer != nil || r.giveUp == nil || r.rec == nil || !RunLikelyAborted(r.rec) {
		return
	}
	giveUp := r.giveUp
	r.abortTimer = time.AfterFunc(r.c.abortGrace(), func() { giveUp(errLikelyAborted) })
}

func (r *run) stopAbortWatch() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abortTimer != nil {
		r.abortTimer.Stop()
	}
}

// clearFinishedCancel removes the cancel marker of a task that ended: it
// has nothing left to cancel.
func (r *run) clearFinishedCancel() {
	if cur := r.current(); cur != nil && cur.State.Terminal() {
		r.c.Store.ClearCancel(r.id)
	}
}

// audit logs a task's final state: metadata only.
func (r *run) audit() {
	rec := r.current()
	if rec == nil || !rec.State.Terminal() {
		return
	}
	e := store.AuditEntry{Command: r.w.Command, Agent: rec.Agent, ContextID: rec.ContextID, MessageSize: rec.MessageSize,
		MessageSHA256: rec.MessageSHA256, State: string(rec.State), HTTPStatus: rec.HTTPStatus}
	if rec.SentAt != nil && rec.FinishedAt != nil {
		e.DurationMS = rec.FinishedAt.Sub(*rec.SentAt).Milliseconds()
	}
	if rec.Error != nil {
		e.Error = rec.Error.Kind
	}
	r.c.Store.Audit(e)
}
