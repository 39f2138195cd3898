package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A2ADeliverOptions describes one delivery to a generic A2A agent.
type A2ADeliverOptions struct {
	// Message is the message to send; its TaskID, when set, answers a task
	// that asked for input.
	Message OutgoingMessage
	// Send is false in recovery mode: only TaskID (or, in v1.0, the
	// context's newest task) is followed; nothing is sent.
	Send bool
	// TaskID is the task to follow in recovery mode.
	TaskID string
	// Question is the question a message that answers a task (Message.TaskID)
	// answers: until the task moves on, a state that still asks it is stale.
	Question string
	// Streaming is the card's capabilities.streaming: follow tasks with
	// streams instead of polling.
	Streaming bool
	// PollInterval is the time between tasks/get calls.
	PollInterval time.Duration
	// OnEvent, if set, receives progress; an event of Kind "task" carries
	// the server's task id as soon as it is known, one of Kind "progress"
	// the text of each status message the task sends while it goes on.
	OnEvent func(Event)
	// BeforeSend is called once a connection is made and before the
	// message is written to it, as DeliverOptions.BeforeSend.
	BeforeSend func() error
	// Deadline is the task's maximum wait, as DeliverOptions.Deadline.
	Deadline time.Time
}

// ErrTaskGone means the server no longer knows the task (it restarted, or
// forgot it): it answered TaskNotFoundError (-32001, or reason
// TASK_NOT_FOUND) for an id it gave. There is nothing left to follow.
var ErrTaskGone = errors.New("the server no longer knows the task")

// ErrNoTask means a send's answer was lost before the server named its
// task, and the task cannot be found: the protocol or the server cannot
// list tasks by context (A2A 0.3), or the listing never showed it.
var ErrNoTask = errors.New("the connection was lost before the server named the task, and the task cannot be found")

// findTaskLooks is how many times a task lost before the server named it
// is looked for, a poll interval apart: a send cut just after the request
// was written may not be listed yet.
const findTaskLooks = 4

// Deliver sends one message to a generic A2A agent and follows the task it
// starts until its outcome is final: a Message reply is the answer; a Task
// is followed by its stream when the card offers streaming, else by
// polling tasks/get. A broken stream is resumed by subscribing again or by
// polling, never by sending again. It returns when the outcome is final or
// ctx ends; Outcome.Err then holds the last problem (ErrTaskGone, ErrNoTask).
func (c *A2A) Deliver(ctx context.Context, o A2ADeliverOptions) (out Outcome) {
	defer func() { out = c.t.scrubOutcome(out) }()
	if o.PollInterval <= 0 {
		o.PollInterval = 20 * time.Second
	}
	d := &a2aDelivery{c: c, o: o, ctx: ctx, taskID: o.TaskID,
		// An answer to a task that asked for input may be met first by the
		// task as it was (a2a-js restates it, still input-required): that
		// state is stale until the task has moved on.
		guard: &staleGuard{active: o.Message.TaskID != "", text: o.Question}}
	if o.Send {
		if out, final := d.send(); final {
			return out
		}
		if ctx.Err() != nil && !d.gate.connected.Load() {
			return Outcome{Err: d.lastErr, notSent: true}
		}
	}
	if d.taskID == "" {
		if out, found := d.findTask(); !found {
			return out
		}
	}
	return d.followTask()
}

// a2aDelivery is one Deliver to a generic agent, and what it has learned.
type a2aDelivery struct {
	c       *A2A
	o       A2ADeliverOptions
	ctx     context.Context
	guard   *staleGuard
	taskID  string
	acc     artifacts
	lastErr error
	// gate lets the send through once a connection is made (BeforeSend);
	// its connected: bytes may have left.
	gate *sendGate
	// lastProgress is the status last passed on as progress.
	lastProgress string
	// noStream: the task is followed by reading it only (a stream sent an
	// event over the size cap).
	noStream bool
	// looks counts the reads and subscriptions made (mayRead).
	looks int
}

func (d *a2aDelivery) emit(e Event) {
	if d.o.OnEvent != nil {
		d.o.OnEvent(e)
	}
}

// noteTask keeps the task id the server named. A server's id goes into
// records, file names and commands shown to callers: one that is not a
// plain id is not kept.
func (d *a2aDelivery) noteTask(id string) {
	if id != "" && id != d.taskID && ValidID(id) {
		d.taskID = id
		d.emit(Event{Kind: EventTask, TaskID: id, Message: "the server named the task " + id})
	}
}

// progress passes on a status message of a task still going, once: a
// stream's update, then the same status read by a poll, is one.
func (d *a2aDelivery) progress(state, text, ts string) {
	if strings.TrimSpace(text) == "" || finalState(state) {
		return
	}
	if key := state + "\x00" + ts + "\x00" + text; key != d.lastProgress {
		d.lastProgress = key
		d.emit(d.c.t.progressEvent(state, text, d.taskID))
	}
}

func (d *a2aDelivery) onStatus(ev StreamEvent) { d.progress(ev.State, ev.Text, ev.Timestamp) }

// send sends the message, by stream when the card streams, else by
// message/send. final is true with the outcome (the answer, or a refusal
// that proves nothing ran); else the task is to be followed.
func (d *a2aDelivery) send() (Outcome, bool) {
	o := d.o
	gate, traced, stop := newSendGate(d.ctx, o.BeforeSend, func() { d.emit(sentEvent) }, func() { d.emit(writtenEvent) })
	defer stop()
	d.gate = gate
	if o.Streaming {
		// Any event means the server took the message in: an error after
		// it (an error event, a broken read) is never a refusal.
		accepted := false
		out, final, err := d.c.follow(traced, d.guard, o.Message.ContextID, func(fn func(StreamEvent) bool) error { return d.c.Stream(traced, o.Message, fn) }, &d.acc,
			func(id string) { accepted = true; d.noteTask(id) }, d.onStatus)
		if final {
			return out, true
		}
		if rerr := gate.refusal(); rerr != nil {
			return Outcome{Err: rerr, notSent: true}, true
		}
		if !gate.connected.Load() && d.ctx.Err() != nil {
			// The caller stopped before anything left.
			return Outcome{Err: err, notSent: true}, true
		}
		if err != nil && !accepted && (!gate.connected.Load() || !MayHaveArrived(err) && !errors.Is(err, errStreamCut)) && d.ctx.Err() == nil {
			return rejectedOutcome(err), true
		}
		d.lastErr = err
		switch {
		case errors.Is(err, ErrReplyTooLarge):
			// The task's own read may be smaller (no history); a stream
			// of it again would bring the same events.
			d.noStream = true
			d.emit(Event{Kind: EventReplyTooLarge, Message: "the agent's streamed answer is larger than the size cap; reading the task", Err: err})
		case errors.Is(err, ErrOtherContext):
			d.noStream = true // a stream again would answer the same
			d.emit(Event{Kind: EventPollError, Message: "the agent's stream answered for another context; following this message's task", Err: err})
		default:
			d.emit(Event{Kind: EventConnectionLost, Message: "the stream ended before the task finished; following the task", Err: err})
		}
		return Outcome{}, false
	}
	res, err := d.c.Send(traced, o.Message, true)
	if err == nil {
		err = otherContext("send message", o.Message.ContextID, res.ContextID)
	}
	switch {
	case gate.refusal() != nil:
		return Outcome{Err: gate.refusal(), notSent: true}, true
	case !gate.connected.Load() && d.ctx.Err() != nil:
		// The caller stopped before anything left.
		return Outcome{Err: err, notSent: true}, true
	case err != nil && (!MayHaveArrived(err) || !gate.connected.Load()) && d.ctx.Err() == nil:
		return rejectedOutcome(err), true
	case errors.Is(err, ErrOtherContext):
		// Not this context's answer: its task (if it names one) is not
		// ours either. The message may have run: it is looked for.
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "the agent answered for another context; looking for this message's task", Err: err})
	case errors.Is(err, ErrReplyTooLarge):
		d.lastErr = err
		if res != nil && res.Kind == "task" && otherContext("", o.Message.ContextID, res.ContextID) == nil {
			d.noteTask(res.TaskID)
		}
		d.emit(Event{Kind: EventReplyTooLarge, Message: "the agent answered, but the answer is larger than the size cap; following the task", Err: err})
	case err != nil:
		d.lastErr = err
		d.emit(Event{Kind: EventConnectionLost, Message: "the answer was lost; following the task", Err: err})
	case res.Kind == "message":
		out, _ := res.outcome("reply")
		return out, true
	default:
		d.noteTask(res.TaskID)
		if d.guard.stale(res.State, res.Text, res.Timestamp) {
			break
		}
		if out, ok := res.outcome("reply"); ok {
			return out, true
		}
		d.progress(res.State, res.StatusText, res.Timestamp)
	}
	return Outcome{}, false
}

// findTask looks for a task lost before the server named it, when the
// protocol can list tasks: while reading fails for as long as the caller
// waits, and while the task is not listed findTaskLooks times (within the
// caller's wait). found is false with the outcome when it cannot be found.
func (d *a2aDelivery) findTask() (_ Outcome, found bool) {
	looks := 0
	for d.taskID == "" {
		if !d.mayRead() {
			return Outcome{Err: d.lastErr, pastDeadline: true}, false
		}
		id, err := d.c.FindTask(d.ctx, d.o.Message.ContextID, d.o.Message.MessageID)
		switch {
		case err == nil && id != "":
			d.noteTask(id)
			continue
		case errors.Is(err, ErrNoTaskList):
			return d.lost(fmt.Errorf("%w: the agent cannot list tasks by context", ErrNoTask)), false
		case errors.Is(err, ErrReplyTooLarge):
			// A listing only grows: it cannot be read, now or later.
			return d.lost(fmt.Errorf("%w: the agent's task list is larger than the size cap", ErrNoTask)), false
		case err == nil:
			if looks++; looks >= findTaskLooks {
				return d.lost(fmt.Errorf("%w: the agent listed no task holding the message (%d looks)", ErrNoTask, looks)), false
			}
			d.emit(Event{Kind: EventPoll, Message: "the agent lists no task holding the message yet; looking again"})
		case IsKind(err, KindAuth, KindForbidden):
			return Outcome{Err: err}, false
		default:
			d.lastErr = err
		}
		if out, end := d.sleep(readRetryWait(d.o.PollInterval, err)); end {
			return out, false
		}
	}
	return Outcome{}, true
}

// mayRead reports whether a read may begin, and counts it: not at or after
// the deadline, but for a recovery's first look (a task revived after its
// deadline gets one).
func (d *a2aDelivery) mayRead() bool {
	if (d.o.Send || d.looks > 0) && pastDeadline(d.o.Deadline) {
		return false
	}
	d.looks++
	return true
}

// sleep waits d before the next read, or until the deadline when that
// comes first: end is true, with the outcome, when ctx ended or the
// deadline came (no read begins then).
func (d *a2aDelivery) sleep(w time.Duration) (_ Outcome, end bool) {
	if SleepContext(d.ctx, waitUntil(w, d.o.Deadline)) != nil {
		return Outcome{Err: d.lastErr}, true
	}
	if pastDeadline(d.o.Deadline) {
		return Outcome{Err: d.lastErr, pastDeadline: true}, true
	}
	return Outcome{}, false
}

// lost is the outcome of a task that cannot be found.
func (d *a2aDelivery) lost(why error) Outcome {
	how := strings.TrimPrefix(why.Error(), ErrNoTask.Error()+": ")
	switch {
	case errors.Is(d.lastErr, errTooManyParts):
		return Outcome{Err: &joinedError{errs: []error{why, d.lastErr},
			msg: fmt.Sprintf("the agent answered, but its answer has more than the %d parts a2a-courier reads and no task to read it from can be found (%s)", MaxReplyParts, how)}}
	case errors.Is(d.lastErr, ErrReplyTooLarge):
		// The agent answered, but its answer is gone with no task to read
		// it from: lost, not failed (nothing says the run failed).
		return Outcome{Err: &joinedError{errs: []error{why, d.lastErr},
			msg: fmt.Sprintf("the agent answered, but its answer is larger than the %s cap and no task to read it from can be found (%s)", byteSize(d.c.t.maxBody), how)}}
	case errors.Is(d.lastErr, ErrOtherContext):
		return Outcome{Err: &joinedError{errs: []error{why, d.lastErr},
			msg: fmt.Sprintf("%s, and no task of this context holding the message can be found (%s)", rpcMessage(d.lastErr), how)}}
	}
	return Outcome{Err: errors.Join(why, d.lastErr)}
}

// followTask follows the named task until its outcome: by subscribing to
// it (three tries) when the card streams, and by reading it.
func (d *a2aDelivery) followTask() Outcome {
	subscribeTries := 0
	reads := 0 // of the task, which no open connection brings any more
	for {
		if d.ctx.Err() != nil {
			return Outcome{Err: d.lastErr}
		}
		// Past the deadline (a task revived after it): one look, by
		// reading, not a stream that stays open.
		if d.o.Streaming && !d.noStream && subscribeTries < 3 && !pastDeadline(d.o.Deadline) {
			d.looks++
			subscribeTries++
			out, final, refused := d.subscribe()
			if final {
				return out
			}
			if refused {
				subscribeTries = 3
			}
		}
		if !d.mayRead() {
			return Outcome{Err: d.lastErr, pastDeadline: true}
		}
		out, final, err := d.poll()
		if final {
			return out
		}
		// The first reads come sooner (rampWait); a rate-limited read (429,
		// 503) waits as long as the server asked.
		wait := d.o.PollInterval
		if err == nil {
			reads++
			wait = rampWait(d.o.PollInterval, reads)
		}
		if out, end := d.sleep(readRetryWait(wait, err)); end {
			return out
		}
	}
}

// subscribe follows the task's stream (tasks/resubscribe, SubscribeToTask).
// refused is true when the server will not resubscribe (a finished task,
// a server that does not): polling takes over.
func (d *a2aDelivery) subscribe() (_ Outcome, final, refused bool) {
	ctx := d.ctx
	if !d.o.Deadline.IsZero() {
		// A stream open at the deadline ends there.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(d.ctx, d.o.Deadline)
		defer cancel()
	}
	out, final, err := d.c.follow(ctx, d.guard, d.o.Message.ContextID, func(fn func(StreamEvent) bool) error { return d.c.Subscribe(ctx, d.taskID, fn) }, &d.acc, d.noteTask, d.onStatus)
	if final {
		if out.State == StateCompleted {
			// Chunks sent while no stream was open are not sent again: the
			// task itself holds the whole reply.
			if res, err := d.c.GetTask(d.ctx, d.taskID); err == nil && res.State == "completed" && hasArtifacts(res) {
				out.Reply, out.Parts = res.Text, res.Parts
			}
		}
		return out, true, false
	}
	switch {
	case taskNotFound(err):
		return Outcome{Err: errors.Join(ErrTaskGone, err)}, true, false
	case errors.Is(err, ErrReplyTooLarge):
		d.emit(Event{Kind: EventReplyTooLarge, Message: "the task's stream sent an event larger than the size cap; reading the task", Err: err})
		d.lastErr, d.noStream = err, true
		return Outcome{}, false, true
	case IsKind(err, KindRPC), IsKind(err, KindAuth, KindForbidden, KindBadRequest):
		refused = true
	}
	if err != nil && (ctx.Err() == nil || d.ctx.Err() != nil) { // not the deadline's end of the stream
		d.lastErr = err
	}
	if IsKind(err, KindBusy) && SleepContext(d.ctx, readRetryWait(0, err)) != nil {
		// Rate limited: the task is read when the server said, not at once.
		return Outcome{Err: d.lastErr}, true, refused
	}
	return Outcome{}, false, refused
}

// poll reads the task once (tasks/get, GetTask). err is the read's error,
// which decides the wait before the next.
func (d *a2aDelivery) poll() (_ Outcome, final bool, err error) {
	res, err := d.c.GetTask(d.ctx, d.taskID)
	if err == nil {
		err = otherContext("get task "+d.taskID, d.o.Message.ContextID, res.ContextID)
	}
	switch {
	case err == nil && res.State == "completed" && !hasArtifacts(res) && (d.acc.over != nil || d.acc.overCap("get task "+d.taskID, d.c.t.maxBody, statusParts(res)) != nil):
		// A server that keeps no artifacts in the task, and streamed more
		// than the cap (or the chunks and the task's status message come
		// to more): the answer cannot be read within it, here or later
		// (never completed with what the task alone shows).
		d.emit(Event{Kind: EventReplyTooLarge, Message: "the task holds no artifacts, and its stream brought more than the size cap", Err: d.acc.over})
		return Outcome{Err: d.acc.over}, true, nil
	case err == nil:
		if res.State == "completed" && !hasArtifacts(res) && !d.acc.empty() {
			// A server that keeps no artifacts in the task: the chunks a
			// stream brought are the reply.
			res = res.withArtifacts(&d.acc)
		}
		if d.guard.stale(res.State, res.Text, res.Timestamp) {
			d.emit(Event{Kind: EventPoll, Message: "task " + d.taskID + " has not taken the answer in yet"})
		} else if out, ok := res.outcome("task"); ok {
			out.TaskID = d.taskID
			return out, true, nil
		} else {
			d.progress(res.State, res.StatusText, res.Timestamp)
		}
		d.emit(Event{Kind: EventPoll, Message: "task " + d.taskID + " is " + res.State})
	case taskNotFound(err):
		// Only TaskNotFoundError on an id the server gave says the task is
		// gone.
		return Outcome{Err: errors.Join(ErrTaskGone, err)}, true, err
	case IsKind(err, KindAuth, KindForbidden):
		return Outcome{Err: err}, true, err
	case errors.Is(err, ErrReplyTooLarge):
		// A task only grows: it cannot be read whole, now or later.
		d.emit(Event{Kind: EventReplyTooLarge, Message: "the task is larger than the size cap and cannot be read", Err: err})
		return Outcome{Err: err}, true, err
	case errors.Is(err, ErrOtherContext):
		// The task says it is another context's: nothing it shows is this
		// message's reply, and reading it again will not change that.
		d.emit(Event{Kind: EventPollError, Message: "task " + d.taskID + " answered for another context", Err: err})
		return Outcome{Err: err}, true, err
	case d.acc.over != nil && noTaskList(err):
		// The stream brought an answer over the cap, and the agent has no
		// tasks/get (-32601, 405, 501) to read it in a smaller form: the
		// answer came and was dropped, and no read will bring it.
		d.emit(Event{Kind: EventReplyTooLarge, Message: "the agent's streamed answer is larger than the size cap, and the agent cannot be asked for its task", Err: d.acc.over})
		return Outcome{Err: fmt.Errorf("%w; the agent cannot be asked for its task (%v)", d.acc.over, err)}, true, err
	default:
		// Any other error (a JSON-RPC error such as -32603, an HTTP 400 or
		// 404, a broken connection) may pass: read again after the usual
		// wait, until the task ends or the caller stops waiting.
		if d.ctx.Err() != nil {
			return Outcome{Err: d.lastErr}, true, err
		}
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "reading the task failed; will try again", Err: err})
	}
	return Outcome{}, false, err
}

// staleGuard recognises the question an answer answers while the task has
// not moved on: a2a-js restates the task (still input-required) at the start
// of the follow-up, and a poll may come before the agent took the answer in.
type staleGuard struct {
	active   bool
	text, ts string
}

// stale reports whether an observed state is the old question.
func (g *staleGuard) stale(state, text, ts string) bool {
	if g == nil || !g.active {
		return false
	}
	if !interrupted(state) {
		if state != "" {
			g.active = false // the task moved on: later questions are new
		}
		return false
	}
	switch {
	case g.ts == "" && (g.text == "" || g.text == text):
		g.text, g.ts = text, ts // the question being answered, as the server shows it
		return true
	case text == g.text && ts == g.ts:
		return true
	}
	g.active = false
	return false
}

// follow reads one stream into acc and reports the outcome if the stream
// reached one. Interrupted states the guard calls stale are passed over.
// onStatus, if set, is given each status of the task while it goes on (a
// status update, or a task snapshot, not final). An event that names a
// context other than contextID ("" checks none) ends the stream with
// ErrOtherContext, before its task is noted; an answer that comes to more
// than the answer cap (its chunks and final status message summed) ends
// it with an error wrapping ErrReplyTooLarge, acc dropped and marked over.
func (c *A2A) follow(ctx context.Context, guard *staleGuard, contextID string, open func(func(StreamEvent) bool) error, acc *artifacts, noteTask func(string), onStatus func(StreamEvent)) (Outcome, bool, error) {
	const op = "read the stream"
	var out Outcome
	final := false
	var refused error // why the stream was stopped
	err := open(func(ev StreamEvent) bool {
		if refused = otherContext(op, contextID, ev.ContextID); refused != nil {
			return false
		}
		if guard.stale(ev.State, ev.Text, ev.Timestamp) {
			noteTask(ev.TaskID)
			return true
		}
		noteTask(ev.TaskID)
		switch ev.Kind {
		case "message":
			if refused = checkAnswer(op, &ev, c.t.maxBody); refused != nil {
				return false
			}
			out, final = Outcome{State: StateCompleted, Reply: ev.Text, Via: "stream", HTTPStatus: 200, TaskID: ev.TaskID,
				Parts: replyParts(SourceMessage, ev.Parts)}, true
			return false
		case "task":
			acc.reset(ev.Artifacts)
		case "artifact":
			acc.apply(ev.Artifact, ev.Append)
			refused = acc.overCap(op, c.t.maxBody, nil)
			return refused == nil
		}
		if finalState(ev.State) {
			if refused = acc.overCap(op, c.t.maxBody, ev.Parts); refused != nil {
				return false
			}
			text := ev.Text
			if ev.State == "completed" {
				text = composeAnswer(acc.String(), ev.Text)
			}
			if out, final = taskOutcome(ev.State, text, "stream", ev.TaskID); final {
				out.Parts = append(acc.replyParts(), replyParts(SourceStatus, ev.Parts)...)
			}
			return false
		}
		if err := acc.overCap(op, c.t.maxBody, nil); err != nil {
			refused = err // a snapshot over the cap
			return false
		}
		if onStatus != nil {
			onStatus(ev)
		}
		return true
	})
	switch {
	case final:
		return out, true, nil
	case refused != nil:
		return Outcome{}, false, refused
	}
	return Outcome{}, false, err
}

// hasArtifacts reports whether a task read holds artifacts with parts.
func hasArtifacts(r *SendResult) bool {
	for _, p := range r.Parts {
		if p.Source == SourceArtifact {
			return true
		}
	}
	return false
}

// taskOutcome maps a task state to an outcome; ok is false while the task
// is still going.
func taskOutcome(state, text, via, taskID string) (Outcome, bool) {
	o := Outcome{Via: via, HTTPStatus: 200, TaskID: taskID}
	switch state {
	case "completed":
		o.State, o.Reply = StateCompleted, text
	case "failed":
		// Kibana words its failures "Error: …"; the state already says it.
		o.State, o.Reason = StateFailed, nonEmpty(strings.TrimPrefix(text, AgentErrorPrefix), "the agent reported the task failed")
	case "rejected":
		o.State, o.Reason = StateRejected, nonEmpty(text, "the agent rejected the task")
	case "canceled":
		o.State, o.Reason = StateCanceled, nonEmpty(text, "the task was canceled")
	case "input-required":
		o.State, o.Reply = StateInputRequired, text
	case "auth-required":
		o.State, o.Reply = StateInputRequired, nonEmpty(text, "the agent needs authorisation to go on")
	default:
		return Outcome{}, false
	}
	return o, true
}

func interrupted(state string) bool { return state == "input-required" || state == "auth-required" }

func rejectedOutcome(err error) Outcome {
	var ce *Error
	status := 0
	if errors.As(err, &ce) {
		status = ce.StatusCode
	}
	return Outcome{State: StateRejected, Reason: err.Error(), Err: err, Via: "reply", HTTPStatus: status}
}

// rpcMessage is the server's message of a JSON-RPC error.
func rpcMessage(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return ""
}

func rpcCode(err error) int {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.RPCCode
	}
	return 0
}

// joinedError is several errors under one message of its own.
type joinedError struct {
	msg  string
	errs []error
}

func (e *joinedError) Error() string   { return e.msg }
func (e *joinedError) Unwrap() []error { return e.errs }
