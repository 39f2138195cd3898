package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Deliver sends one message (unless in recovery mode) and, at the same
// time, watches the conversation store for the round it starts: whichever
// shows the final outcome first wins. A connection that breaks is not a
// failure: Kibana 9.2 to 9.5 go on with the run server-side and its round is
// read back (9.6 aborts a blocking run whose connection ends, which is why
// callers send it NonBlocking there, and the task is followed). Deliver
// never sends twice. It returns when an outcome is final or ctx ends.
func (k *Kibana) Deliver(ctx context.Context, o DeliverOptions) (out Outcome) {
	defer func() { out = k.t.scrubOutcome(out) }()
	if o.Send {
		if err := textOnly("send message to agent "+o.AgentID, o.Message); err != nil {
			return rejectedOutcome(err)
		}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 20 * time.Second
	}
	if o.InputSHA256 == "" {
		o.InputSHA256 = HashText(o.Message.Text)
	}
	if o.Feed != nil {
		defer o.Feed.Follow()()
	}
	ctx, cancel := context.WithCancel(ctx)
	now := time.Now()
	d := &kibanaDelivery{started: now, lastTaskRead: now, k: k, o: o, ctx: ctx, stop: cancel, convID: ConversationIDForContext(o.Message.ContextID),
		postDone: make(chan postResult, 1), postExited: make(chan struct{}),
		taskRead: min(o.PollInterval, maxTaskReadInterval)}
	// Deliver does not return before the sending goroutine has ended, so no
	// event of that goroutine reaches the caller after Deliver returned
	// (the caller may have let its record go).
	defer func() {
		cancel()
		if o.Send {
			<-d.postExited
		}
	}()
	if o.NonBlocking {
		// Only a non-blocking run is a task tasks/get finds; a blocking
		// send's or stream's task id is never found, so it is not asked
		// for.
		d.taskID = o.TaskID
	}
	d.timer = time.NewTimer(time.Hour)
	defer d.timer.Stop()
	d.schedule(o.PollInterval)
	if o.Send {
		var stop context.CancelFunc
		d.gate, d.sendCtx, stop = newSendGate(ctx, o.BeforeSend, func() { d.emit(sentEvent) }, func() { d.emit(writtenEvent) })
		defer stop()
		d.postOpen = true
		go d.post()
	} else {
		d.schedule(0)
	}
	return d.loop()
}

// postResult is what the send came back with.
type postResult struct {
	res *SendResult
	out *Outcome // a stream that reached its outcome
	err error
	// blocking: res and err answer a blocking message/send, whose answer
	// comes when the run has finished.
	blocking bool
}

// kibanaDelivery is one Deliver: the send, on its own goroutine, and the
// reads, on Deliver's, which is the only one to touch the reads' state.
// The send's goroutine writes streamTask; loop reads it only after the
// send's result has come (postDone).
type kibanaDelivery struct {
	k      *Kibana
	o      DeliverOptions
	ctx    context.Context
	convID string

	postDone   chan postResult
	postExited chan struct{}
	postOpen   bool
	// gate lets the send through once a connection is made (BeforeSend);
	// its connected is the conservative sign that bytes may have left:
	// until then, nothing can have reached the server. sendCtx is the
	// send's context, traced by the gate.
	gate       *sendGate
	sendCtx    context.Context
	streamTask string // the task a stream named, once

	timer          *time.Timer
	lastErr        error
	pollingStopped bool
	// finishedTooLarge is the answer of a blocking send that came, over the
	// size cap: the run finished, and its reply is only in the conversation.
	finishedTooLarge error
	// taskID is the Kibana task tasks/get follows; "" to read the
	// conversation.
	taskID string
	// failures counts the reads that failed in a row: they back off, up to
	// five minutes or eight intervals, whichever is longer.
	failures int
	// malformedReads counts the reads that found this message's round in a
	// shape no Kibana writes.
	malformedReads int
	// quickReads counts the reads made since no open connection can bring
	// the outcome any more (it was cut, or this is a recovery): the first
	// come sooner (rampWait).
	quickReads int
	// reads counts the reads made (one look, for a task revived after its
	// deadline).
	reads int
	// stop ends the delivery's context (the send's too).
	stop context.CancelFunc
	// taskRead is the time between reads of a task tasks/get follows: a
	// small document, read more often than the conversation, so that the
	// reply is recorded within seconds of the run's end.
	taskRead time.Duration

	// due is when the timer was set to fire: a look asks the feed for a
	// list read begun then or later, which every delivery due then shares.
	due time.Time
	// mark is the updated_at of the conversation as this delivery last
	// read it ("" for none, or a read that found nothing), which the feed
	// compares with the list's.
	mark string
	// confirming is the updated_at of a change the list showed whose
	// tasks/get still read the run as going on: it is read once more
	// before mark takes it.
	confirming string
	// started and lastTaskRead time the task's reads on the task path
	// with a feed (taskReadDue).
	started, lastTaskRead time.Time
}

func (d *kibanaDelivery) emit(e Event) {
	if d.o.OnEvent != nil {
		d.o.OnEvent(e)
	}
}

// post sends the message, by message/stream when asked and the server
// streams, else by message/send, and hands the result to the loop.
func (d *kibanaDelivery) post() {
	defer close(d.postExited)
	// The server may have the request once a connection is made: from then
	// on a lost answer means "recover by reading", never "send again".
	tctx := d.sendCtx
	if d.o.Stream {
		if pr, done := d.stream(tctx); done {
			d.postDone <- pr
			return
		}
	}
	m := d.o.Message
	m.Blocking = !d.o.NonBlocking
	res, err := d.k.SendMessage(tctx, d.o.AgentID, m)
	d.postDone <- postResult{res: res, err: err, blocking: m.Blocking}
}

// stream sends by message/stream. done is false when the server does not
// stream after all (an older card kept in a cache): it ran nothing, so the
// message goes once by message/send.
func (d *kibanaDelivery) stream(tctx context.Context) (_ postResult, done bool) {
	o := d.o
	var acc artifacts
	accepted := false // an event came: the server took the message in
	out, final, err := d.k.a2a(o.AgentID).follow(tctx, nil, "", func(fn func(StreamEvent) bool) error {
		return d.k.a2a(o.AgentID).streamMessage(tctx, o.Message, o.NonBlocking, fn)
	}, &acc, func(id string) {
		accepted = true
		if id != "" && id != d.streamTask && ValidID(id) {
			d.streamTask = id
			d.emit(Event{Kind: EventTask, TaskID: id, Message: "the server named the task " + id})
		}
	}, func(ev StreamEvent) {
		// "Calling tool X...", a tool's progress, reasoning.
		if strings.TrimSpace(ev.Text) != "" {
			d.emit(d.k.t.progressEvent(ev.State, ev.Text, d.streamTask))
		}
	})
	switch {
	case final:
		return postResult{out: &out}, true
	case !accepted && IsKind(err, KindRPC) && rpcCode(err) == -32004:
		d.emit(Event{Kind: EventStreamUnsupported, Message: "the server does not stream; sending by message/send", Err: err})
		return postResult{}, false
	case accepted && IsKind(err, KindRPC):
		// Kibana ends a stream whose run failed with an error event; the
		// failed round is not stored.
		return postResult{out: &Outcome{State: StateFailed, Via: "stream", HTTPStatus: 200, TaskID: d.streamTask,
			Reason: "the agent's run ended with an error: " + nonEmpty(strings.TrimPrefix(rpcMessage(err), AgentErrorPrefix), "no message")}}, true
	}
	if errors.Is(err, errStreamCut) {
		err = &Error{Kind: KindConnection, Op: "stream message to agent " + o.AgentID, Message: errStreamCut.Error(), Err: err}
	}
	return postResult{err: err}, true
}

// loop waits for the send's answer and reads the task or the conversation
// until one shows the outcome, or ctx ends.
func (d *kibanaDelivery) loop() Outcome {
	for {
		var pollC <-chan time.Time
		if !d.pollingStopped {
			pollC = d.timer.C
		}
		hurryC := d.o.Hurry.Changed()
		if !d.postOpen && d.pollingStopped {
			return Outcome{Err: d.lastErr}
		}
		select {
		case <-d.ctx.Done():
			if d.postOpen {
				<-d.postDone // it ends with ctx; then the gate is settled
			}
			return Outcome{Err: d.lastErr, notSent: d.o.Send && !d.gate.connected.Load()}
		case pr := <-d.postDone:
			d.postOpen = false
			if out, final := d.answered(pr); final {
				return out
			}
		case <-hurryC:
			if d.o.Hurry.Waiting() && !d.pollingStopped && d.failures == 0 && time.Until(d.due) > FastPoll {
				// A caller has just begun to wait: look soon.
				d.schedule(FastPoll)
			}
		case <-pollC:
			if (d.reads > 0 || d.o.Send) && pastDeadline(d.o.Deadline) {
				// The maximum wait has passed: no read begins now (the
				// first of a recovery is a revived task's one look).
				return d.expire()
			}
			d.reads++
			if out, final := d.read(); final {
				return out
			}
		}
	}
}

// schedule sets the timer for the next read: after w, or at the
// deadline when that comes first (where the loop ends instead of reading).
// With a feed, the look falls on the grid of w (at most w from now), where
// the other deliveries of the agent look too.
func (d *kibanaDelivery) schedule(w time.Duration) {
	now := time.Now()
	if d.o.Feed != nil {
		// "Now" too: the deliveries whose connections were cut at once
		// share one read.
		w = onGrid(now, max(w, feedMinGrid))
	}
	d.due = now.Add(w)
	d.timer.Reset(waitUntil(w, d.o.Deadline))
}

// expire ends the delivery at its deadline: a send still open is stopped
// first (the gate passes that on as for a caller that stops), so that the
// outcome says whether anything left.
func (d *kibanaDelivery) expire() Outcome {
	if d.postOpen {
		d.stop()
		<-d.postDone
		d.postOpen = false
	}
	return Outcome{Err: d.lastErr, pastDeadline: true, notSent: d.o.Send && !d.gate.connected.Load()}
}

// feedMinGrid is the finest grid looks with a feed fall on.
const feedMinGrid = 250 * time.Millisecond

// nextPoll is the wait before the next read.
func (d *kibanaDelivery) nextPoll() time.Duration {
	interval := d.o.PollInterval
	if d.o.Hurry.Waiting() {
		interval = min(interval, FastPoll)
	}
	if d.taskID != "" && d.failures == 0 {
		d.quickReads++
		if d.o.Feed != nil {
			// The list is looked at every poll; the task is read as
			// taskReadDue says.
			return rampWait(interval, d.quickReads)
		}
		return rampWait(min(d.taskRead, interval), d.quickReads)
	}
	if !d.postOpen && d.failures == 0 {
		d.quickReads++
		return rampWait(interval, d.quickReads)
	}
	w := d.o.PollInterval
	for i := 0; i < d.failures && w < 5*time.Minute && w < 8*d.o.PollInterval; i++ {
		w *= 2
	}
	return w
}

// answered takes the send's answer: the outcome, or what to follow next.
func (d *kibanaDelivery) answered(pr postResult) (Outcome, bool) {
	if pr.out != nil {
		return *pr.out, true
	}
	if d.taskID == "" && d.o.NonBlocking && d.streamTask != "" {
		// A blocking:false stream runs as a task that tasks/get finds (the
		// goroutine that set streamTask has ended).
		d.taskID = d.streamTask
	}
	if pr.res != nil && pr.res.Kind == "task" && ValidID(pr.res.TaskID) {
		d.taskID = pr.res.TaskID
		d.emit(Event{Kind: EventTask, TaskID: d.taskID, Message: "the server named the task " + d.taskID})
	}
	if err := d.gate.refusal(); err != nil {
		// BeforeSend refused: the connection was closed before anything
		// of the request was written.
		return Outcome{Err: err, notSent: true}, true
	}
	if pr.err != nil && !d.gate.connected.Load() {
		if d.ctx.Err() != nil {
			// The caller stopped before a connection was made (this answer
			// came before the loop saw ctx end): nothing left, as there.
			return Outcome{Err: d.lastErr, notSent: d.o.Send}, true
		}
		// No connection was ever made: nothing reached the server.
		return Outcome{State: StateRejected, Reason: pr.err.Error(), Err: pr.err, Via: "reply"}, true
	}
	if pr.blocking && errors.Is(pr.err, ErrReplyTooLarge) {
		d.finishedTooLarge = pr.err
	}
	if out, final := d.k.judgeReply(d.ctx, d.o, pr.res, pr.err, d.emit); final {
		return out, true
	}
	d.lastErr = pr.err
	d.pollingStopped = false
	if d.taskID != "" {
		// Kibana answered with the task at once: it has only just been
		// scheduled, so the first look comes after a second.
		d.schedule(d.nextPoll())
		return Outcome{}, false
	}
	// The run may go on: look at the conversation now, then keep polling.
	d.schedule(0)
	return Outcome{}, false
}

// read reads the task, when there is one to follow, else (or when reading
// it failed) the conversation, and sets the timer for the next read.
func (d *kibanaDelivery) read() (Outcome, bool) {
	if d.taskID != "" {
		read, seen := d.taskReadDue()
		if !read {
			d.emit(Event{Kind: EventPoll, Message: "task " + d.taskID + ": nothing new in the conversation list"})
			d.schedule(d.nextPoll())
			return Outcome{}, false
		}
		d.lastTaskRead = time.Now()
		out, final, again := d.readTask()
		if seen != "" && !final && !again {
			// The final round and the execution document are two writes:
			// a change read as still running is read once more at the
			// next look (a confirm read) before it counts as read.
			if d.confirming == seen {
				d.mark, d.confirming = seen, "" // this change is read: the next one is news
			} else {
				d.confirming = seen
			}
		}
		if final || !again {
			return out, final
		}
	}
	return d.readConversation()
}

// taskReadDue says whether a look on the task path reads the task: always
// without a feed; with one, when the list shows its conversation changed
// (seen is then the updated_at it shows; a change whose read still found
// the run going on is read once more, see read) or cannot tell, at every
// look while a caller waits, and otherwise as the task's age says. On
// 9.6.0 a failed run never reaches the conversation, so the task is read
// at every look during its first three poll intervals (a minute by
// default), then every tenth of its age (at least the task read interval,
// at most eight poll intervals). Where a failed run is stored as a round
// with an interruption (Serverless), the list tells of most ends, but not
// of a run that ends without a round (a Kibana node that dies mid-run
// leaves no terminal event; tasks/get is the authority on the run's
// state), nor of one that fails before its conversation is stored: a task
// the list does not show is read every eight poll intervals, one it shows
// every quarter of its age (at least eight poll intervals, at most
// thirty).
func (d *kibanaDelivery) taskReadDue() (read bool, seen string) {
	f := d.o.Feed
	if f == nil {
		return true, ""
	}
	v, seen := f.Check(d.ctx, d.due, d.convID, d.mark)
	if v != FeedUnchanged || d.o.Hurry.Waiting() {
		return true, seen
	}
	since := time.Since(d.lastTaskRead)
	age := time.Since(d.started)
	p := d.o.PollInterval
	if f.failuresInRounds {
		if seen == "" {
			return since >= 8*p, ""
		}
		return since >= min(max(age/4, 8*p), 30*p), ""
	}
	if age < 3*p {
		return true, ""
	}
	return since >= min(max(age/10, d.taskRead), 8*p), ""
}

// readCtx is the context of a read: while a caller waits on the task, its
// reads take a reserved read slot rather than queue behind the reads of
// every other task of the process (withUrgentRead).
func (d *kibanaDelivery) readCtx() context.Context {
	if d.o.Hurry.Waiting() {
		return withUrgentRead(d.ctx)
	}
	return d.ctx
}

// readTask reads the Kibana task (Kibana 9.6+ keeps the tasks of
// blocking:false sends, Task Manager runs): tasks/get is the authority on
// their state, and the only one that sees a failure, which never reaches
// the conversation. While it runs, the conversation is not read at all.
// again is true when the conversation is to be read this time.
func (d *kibanaDelivery) readTask() (out Outcome, final, again bool) {
	res, err := d.k.a2a(d.o.AgentID).GetTask(d.readCtx(), d.taskID)
	switch {
	case err == nil:
		d.failures = 0
		if out, final := d.k.settleTask(d.readCtx(), d.o, res, d.taskID, d.emit); final {
			return out, true, false
		}
		if d.ctx.Err() != nil {
			return Outcome{Err: d.lastErr}, true, false
		}
		d.emit(Event{Kind: EventPoll, Message: fmt.Sprintf("task %s is %s", d.taskID, nonEmpty(res.State, "unknown"))})
		d.schedule(d.nextPoll())
		return Outcome{}, false, false
	case d.ctx.Err() != nil:
		return Outcome{Err: d.lastErr}, true, false
	case IsKind(err, KindBusy):
		// Rate limited: the conversation is on the same server; come back
		// when it says, not at once.
		d.failures++
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "the server is busy; reading again later", Err: err})
		d.schedule(readRetryWait(d.nextPoll(), err))
		return Outcome{}, false, false
	case taskNotFound(err):
		// Kibana no longer finds the execution (it was cleaned up, or is in
		// another space): the conversation is all that is left to read.
		d.taskID = ""
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "Kibana no longer finds the task; reading the conversation instead", Err: err})
	default:
		// A failed read of the task: this time, the conversation may
		// answer instead.
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "reading the task failed; reading the conversation this time", Err: err})
	}
	return Outcome{}, false, true
}

// readConversation reads the conversation for the message's round.
func (d *kibanaDelivery) readConversation() (Outcome, bool) {
	if d.o.Feed != nil {
		if v, _ := d.o.Feed.Check(d.ctx, d.due, d.convID, d.mark); v == FeedUnchanged {
			d.failures = 0
			d.emit(Event{Kind: EventPoll, Message: "no reply stored yet"})
			d.schedule(d.nextPoll())
			return Outcome{}, false
		}
	}
	conv, err := d.k.GetConversation(d.readCtx(), d.convID)
	if err == nil || IsKind(err, KindNotFound) {
		d.failures = 0
	} else {
		d.failures++
	}
	switch {
	case err == nil:
		d.mark = conv.UpdatedAt()
	case IsKind(err, KindNotFound):
		d.mark = ""
	}
	switch {
	case err == nil:
		if out, final := d.judgeConversation(conv); final {
			return out, true
		}
	case IsKind(err, KindNotFound):
		d.emit(Event{Kind: EventPoll, Message: "no reply stored yet"})
	case errors.Is(err, ErrReplyTooLarge):
		// A conversation only grows: reading it again cannot succeed.
		d.lastErr = err
		if d.finishedTooLarge != nil {
			// The run finished, and what it answered cannot be read by any
			// means: lost (Err, no state), never failed, never completed.
			return Outcome{Err: fmt.Errorf("the run finished, but its reply cannot be kept: the answer is larger than the %s cap and the conversation larger than the %s cap: %w",
				byteSize(d.k.t.maxBody), byteSize(d.k.maxCV), d.finishedTooLarge)}, true
		}
		d.pollingStopped = true
		d.emit(Event{Kind: EventPollError, Message: "the conversation is larger than the size cap and cannot be read", Err: err})
		return Outcome{}, false
	case IsKind(err, KindAuth, KindForbidden) || IsKind(err, KindBadRequest) && statusCode(err) != 400 ||
		IsKind(err, KindProtocol) && !MayHaveArrived(err):
		// Reading cannot succeed (refused credentials, a page that is not
		// Kibana's); the POST, if still open, may yet answer.
		d.lastErr = err
		d.pollingStopped = true
		d.emit(Event{Kind: EventPollError, Message: "reading the conversation was refused", Err: err})
		return Outcome{}, false
	default:
		if d.ctx.Err() != nil {
			return Outcome{Err: d.lastErr}, true
		}
		d.lastErr = err
		d.emit(Event{Kind: EventPollError, Message: "reading the conversation failed; will try again", Err: err})
	}
	d.schedule(readRetryWait(d.nextPoll(), err))
	return Outcome{}, false
}

// judgeConversation looks for the message's round in the conversation.
func (d *kibanaDelivery) judgeConversation(conv *Conversation) (Outcome, bool) {
	out, ok := findOutcome(conv, d.o)
	if ok {
		d.emit(Event{Kind: EventReply, Message: "the reply was read from conversation " + d.convID})
		return out, true
	}
	why := out.Malformed()
	if why == "" {
		d.emit(Event{Kind: EventPoll, Message: "no reply stored yet"})
		return Outcome{}, false
	}
	// Not an answer: read again (a proxy's glitch, a document being
	// rewritten). Once no open connection can bring the answer either, a
	// round that stays unreadable leaves nothing to read the outcome from:
	// the task is lost, not failed (nothing says the run failed) and not
	// completed.
	perr := &Error{Kind: KindProtocol, Op: "read conversation " + d.convID, StatusCode: 200, Processed: true,
		Message: "the round stored for this message is not a Kibana round: " + why}
	if !d.postOpen {
		d.malformedReads++
	}
	if d.malformedReads >= maxMalformedReads {
		return Outcome{Err: errors.Join(ErrRoundUnreadable, perr)}, true
	}
	d.lastErr = perr
	d.emit(Event{Kind: EventPollError, Message: "the stored round is not a Kibana round; reading again", Err: perr})
	return Outcome{}, false
}
