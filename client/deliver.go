package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"
)

// Outcome states, the terminal ones of the task record plus "" for "no
// final outcome yet".
const (
	StateCompleted     = "completed"
	StateFailed        = "failed"
	StateRejected      = "rejected"
	StateCanceled      = "canceled"
	StateInputRequired = "input_required"
)

// Outcome is what delivering a message came to.
type Outcome struct {
	// State is one of the State constants, or "" when no final outcome was
	// seen before the context ended.
	State string
	// Reply is the agent's final reply (completed), or its question
	// (input_required).
	Reply string
	// Reason explains failed, rejected and canceled outcomes.
	Reason string
	// Err is the classified error behind a rejected or failed outcome, or
	// the last error met while recovering when State is "".
	Err error
	// Via tells how the outcome was learned: "reply" (the POST answered),
	// "conversation" (read from the conversation store).
	Via string
	// HTTPStatus is the status of the answer that decided the outcome.
	HTTPStatus int
	// TaskID is the server's task id, when it gave one.
	TaskID string
	// Parts are the structured answer of a generic A2A agent: the
	// Message's parts (Source SourceMessage), or the task's artifacts'
	// parts (SourceArtifact, in order, chunks joined) then its status
	// message's (SourceStatus), files decoded and data as sent. Reply is
	// their text: for a completed task, the artifacts' text followed by
	// the status message's when the artifacts do not already end with it.
	// Kibana's outcomes carry parts only when a stream brought them (the
	// data part of a confirmation prompt).
	Parts []ReplyPart

	notSent bool
	// malformed says why the round found for the message is not a round
	// (no final outcome then).
	malformed string
}

// Malformed says why the conversation's round for the message is in a
// shape no Kibana writes (a scalar, an array, no response), when that is
// why there is no outcome.
func (o Outcome) Malformed() string { return o.malformed }

// Final reports whether the outcome is terminal.
func (o Outcome) Final() bool { return o.State != "" }

// NotSent reports whether a send ended before its request was written:
// nothing reached the server, so the task may be sent later.
func (o Outcome) NotSent() bool { return o.notSent }

// Event is progress worth telling a person or a log about.
type Event struct {
	// Kind is "sent", "written", "task", "connection_lost", "poll",
	// "poll_error", "reply", "stream_unsupported", "progress", or
	// "reply_too_large": the server answered the send, but its answer was
	// over the size cap (Err wraps ErrReplyTooLarge); the outcome is read
	// another way. A "progress" event carries, in Message, the text of a
	// status message the task sent while still going ("Calling tool
	// X..."), once per status (a stream's update, or a poll that shows a
	// new one); its text has the credential redacted.
	Kind    string
	Message string
	Err     error
	// TaskID is the server's task id, on events of Kind "task" (and
	// "progress", once known).
	TaskID string
	// State is the task's state on "progress" events ("working").
	State string
}

// DeliverOptions describes one delivery.
type DeliverOptions struct {
	AgentID string
	Message OutgoingMessage
	// Send is false in recovery mode: the message may already have been
	// sent, so Deliver only reads the conversation store.
	Send bool
	// InputSHA256 is the hex SHA-256 of the message text, used to find the
	// round in the conversation once the text itself is no longer kept.
	InputSHA256 string
	// RoundsBefore is how many rounds the conversation had before the
	// message was sent; 0 for a context the client made up.
	RoundsBefore int
	// FreshContext says the contextId was generated for this message, so
	// the first new round is this message's even if the server changed the
	// text on the way.
	FreshContext bool
	// PollInterval is the time between reads of the conversation.
	PollInterval time.Duration
	// Stream sends with message/stream (Kibana 9.6+ cards that say
	// streaming); the conversation is read as well, in case the stream
	// breaks.
	Stream bool
	// NonBlocking sends configuration.blocking:false: Kibana 9.6+ answers
	// with a Task at once (or, with Stream, streams a task that runs on Task
	// Manager), followed with tasks/get beside the conversation.
	NonBlocking bool
	// TaskID is a Kibana task id known from an earlier non-blocking send.
	TaskID string
	// OnEvent, if set, receives progress.
	OnEvent func(Event)
}

// HashText returns the hex SHA-256 that identifies a message's text.
func HashText(text string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return hex.EncodeToString(sum[:])
}

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
	emit := func(e Event) {
		if o.OnEvent != nil {
			o.OnEvent(e)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	// postExited closes when the sending goroutine has ended: Deliver does
	// not return before, so no event of that goroutine reaches the caller
	// after Deliver returned (the caller may have let its record go).
	postExited := make(chan struct{})
	defer func() {
		cancel()
		if o.Send {
			<-postExited
		}
	}()

	type postResult struct {
		res *SendResult
		out *Outcome // a stream that reached its outcome
		err error
		// blocking: res and err answer a blocking message/send, whose
		// answer comes when the run has finished.
		blocking bool
	}
	postDone := make(chan postResult, 1)
	postOpen := false
	// gotConn is the conservative sign that bytes may have left: until a
	// connection is obtained, nothing can have reached the server.
	var gotConn atomic.Bool
	var streamTask string // the task a stream named, once
	if o.Send {
		postOpen = true
		go func() {
			defer close(postExited)
			// The server has the request once it is written: from then on a
			// lost answer means "recover by reading", never "send again".
			tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
				WroteRequest: func(info httptrace.WroteRequestInfo) {
					if info.Err == nil {
						emit(Event{Kind: "written", Message: "the request reached the server"})
					}
				},
			})
			if o.Stream {
				var acc artifacts
				accepted := false // an event came: the server took the message in
				out, final, err := k.a2a(o.AgentID).follow(tctx, nil, func(fn func(StreamEvent) bool) error {
					return k.a2a(o.AgentID).streamMessage(tctx, o.Message, o.NonBlocking, fn)
				}, &acc, func(id string) {
					accepted = true
					if id != "" && id != streamTask && ValidID(id) {
						streamTask = id
						emit(Event{Kind: "task", TaskID: id, Message: "the server named the task " + id})
					}
				}, func(ev StreamEvent) {
					// "Calling tool X...", a tool's progress, reasoning.
					if strings.TrimSpace(ev.Text) != "" {
						emit(Event{Kind: "progress", Message: k.t.redactText(ev.Text), TaskID: streamTask, State: ev.State})
					}
				})
				switch {
				case final:
					postDone <- postResult{out: &out}
					return
				case !accepted && IsKind(err, KindRPC) && rpcCode(err) == -32004:
					// The card said streaming but the server does not
					// stream (an older card kept in a cache): it ran
					// nothing, so the message goes once by message/send.
					emit(Event{Kind: "stream_unsupported", Message: "the server does not stream; sending by message/send", Err: err})
				case accepted && IsKind(err, KindRPC):
					// Kibana ends a stream whose run failed with an error
					// event; the failed round is not stored.
					postDone <- postResult{out: &Outcome{State: StateFailed, Via: "stream", HTTPStatus: 200, TaskID: streamTask,
						Reason: "the agent's run ended with an error: " + nonEmpty(strings.TrimPrefix(rpcMessage(err), AgentErrorPrefix), "no message")}}
					return
				default:
					if errors.Is(err, errStreamCut) {
						err = &Error{Kind: KindConnection, Op: "stream message to agent " + o.AgentID, Message: errStreamCut.Error(), Err: err}
					}
					postDone <- postResult{err: err}
					return
				}
			}
			m := o.Message
			m.Blocking = !o.NonBlocking
			res, err := k.SendMessage(tctx, o.AgentID, m)
			postDone <- postResult{res: res, err: err, blocking: m.Blocking}
		}()
		emit(Event{Kind: "sent", Message: "message sent; waiting for the agent"})
	}

	convID := ConversationIDForContext(o.Message.ContextID)
	timer := time.NewTimer(o.PollInterval)
	if !o.Send {
		timer.Reset(0)
	}
	defer timer.Stop()
	var lastErr error
	pollingStopped := false
	// finishedTooLarge is the answer of a blocking send that came, over the
	// size cap: the run finished, and its reply is only in the conversation.
	var finishedTooLarge error
	// Only a non-blocking run is a task tasks/get finds; a blocking send's
	// or stream's task id is never found, so it is not asked for.
	taskID := ""
	if o.NonBlocking {
		taskID = o.TaskID
	}
	// Reads that keep failing (the server is down) back off, up to five
	// minutes or eight intervals, whichever is longer.
	failures := 0
	// malformedReads counts the reads that found this message's round in a
	// shape no Kibana writes.
	malformedReads := 0
	// quickReads counts the reads made since no open connection can bring
	// the outcome any more (it was cut, or this is a recovery): the first
	// come sooner (rampWait).
	quickReads := 0
	// taskRead is the time between reads of a task tasks/get follows: a
	// small document, read more often than the conversation, so that the
	// reply is recorded within seconds of the run's end.
	taskRead := min(o.PollInterval, maxTaskReadInterval)
	nextPoll := func() time.Duration {
		if taskID != "" && failures == 0 {
			quickReads++
			return rampWait(taskRead, quickReads)
		}
		if !postOpen && failures == 0 {
			quickReads++
			return rampWait(o.PollInterval, quickReads)
		}
		d := o.PollInterval
		for i := 0; i < failures && d < 5*time.Minute && d < 8*o.PollInterval; i++ {
			d *= 2
		}
		return d
	}

	for {
		var pollC <-chan time.Time
		if !pollingStopped {
			pollC = timer.C
		}
		if !postOpen && pollingStopped {
			return Outcome{Err: lastErr}
		}
		select {
		case <-ctx.Done():
			if postOpen {
				<-postDone // it ends with ctx; then gotConn is settled
			}
			return Outcome{Err: lastErr, notSent: o.Send && !gotConn.Load()}
		case pr := <-postDone:
			postOpen = false
			if pr.out != nil {
				return *pr.out
			}
			if taskID == "" && o.NonBlocking && streamTask != "" {
				// A blocking:false stream runs as a task that tasks/get
				// finds (the goroutine that set streamTask has ended).
				taskID = streamTask
			}
			if pr.res != nil && pr.res.Kind == "task" && ValidID(pr.res.TaskID) {
				taskID = pr.res.TaskID
				emit(Event{Kind: "task", TaskID: taskID, Message: "the server named the task " + taskID})
			}
			if pr.err != nil && !gotConn.Load() && ctx.Err() == nil {
				// No connection was ever made: nothing reached the server.
				return Outcome{State: StateRejected, Reason: pr.err.Error(), Err: pr.err, Via: "reply"}
			}
			if pr.blocking && errors.Is(pr.err, ErrReplyTooLarge) {
				finishedTooLarge = pr.err
			}
			if out, final := k.judgeReply(ctx, o, pr.res, pr.err, emit); final {
				return out
			}
			lastErr = pr.err
			pollingStopped = false
			if taskID != "" {
				// Kibana answered with the task at once: it has only just
				// been scheduled, so the first look comes after a second.
				timer.Reset(nextPoll())
				continue
			}
			// The run may go on: look at the conversation now, then keep
			// polling.
			timer.Reset(0)
		case <-pollC:
			if taskID != "" {
				// Kibana 9.6+ keeps the tasks of blocking:false sends (Task
				// Manager runs): tasks/get is the authority on their state,
				// and the only one that sees a failure, which never reaches
				// the conversation. While it runs, the conversation is not
				// read at all.
				res, err := k.a2a(o.AgentID).GetTask(ctx, taskID)
				switch {
				case err == nil:
					failures = 0
					if out, final := k.settleTask(ctx, o, res, taskID, emit); final {
						return out
					}
					if ctx.Err() != nil {
						return Outcome{Err: lastErr}
					}
					emit(Event{Kind: "poll", Message: fmt.Sprintf("task %s is %s", taskID, nonEmpty(res.State, "unknown"))})
					timer.Reset(nextPoll())
					continue
				case ctx.Err() != nil:
					return Outcome{Err: lastErr}
				case IsKind(err, KindBusy):
					// Rate limited: the conversation is on the same server;
					// come back when it says, not at once.
					failures++
					lastErr = err
					emit(Event{Kind: "poll_error", Message: "the server is busy; reading again later", Err: err})
					timer.Reset(readRetryWait(nextPoll(), err))
					continue
				case taskNotFound(err):
					// Kibana no longer finds the execution (it was cleaned
					// up, or is in another space): the conversation is all
					// that is left to read.
					taskID = ""
					lastErr = err
					emit(Event{Kind: "poll_error", Message: "Kibana no longer finds the task; reading the conversation instead", Err: err})
				default:
					// A failed read of the task: this time, the conversation
					// may answer instead.
					lastErr = err
					emit(Event{Kind: "poll_error", Message: "reading the task failed; reading the conversation this time", Err: err})
				}
			}
			conv, err := k.GetConversation(ctx, convID)
			if err == nil || IsKind(err, KindNotFound) {
				failures = 0
			} else {
				failures++
			}
			switch {
			case err == nil:
				out, ok := findOutcome(conv, o)
				if ok {
					emit(Event{Kind: "reply", Message: "the reply was read from conversation " + convID})
					return out
				}
				if why := out.Malformed(); why != "" {
					// Not an answer: read again (a proxy's glitch, a
					// document being rewritten), then say what it is.
					malformedReads++
					perr := &Error{Kind: KindProtocol, Op: "read conversation " + convID, StatusCode: 200, Processed: true,
						Message: "the round stored for this message is not a Kibana round: " + why}
					if malformedReads >= maxMalformedReads {
						return Outcome{State: StateFailed, Err: perr, Via: "conversation", HTTPStatus: 200,
							Reason: "the run ended, but the round Kibana stored for it cannot be read (" + why + "): no reply can be kept"}
					}
					lastErr = perr
					emit(Event{Kind: "poll_error", Message: "the stored round is not a Kibana round; reading again", Err: perr})
					break
				}
				emit(Event{Kind: "poll", Message: "no reply stored yet"})
			case IsKind(err, KindNotFound):
				emit(Event{Kind: "poll", Message: "no reply stored yet"})
			case errors.Is(err, ErrReplyTooLarge):
				// A conversation only grows: reading it again cannot succeed.
				lastErr = err
				if finishedTooLarge != nil {
					return Outcome{State: StateFailed, Err: finishedTooLarge, Via: "reply", HTTPStatus: 200,
						Reason: fmt.Sprintf("the run finished, but its reply could not be kept: the answer is larger than the %s cap and the conversation larger than the %s cap",
							byteSize(k.t.maxBody), byteSize(k.maxCV))}
				}
				pollingStopped = true
				emit(Event{Kind: "poll_error", Message: "the conversation is larger than the size cap and cannot be read", Err: err})
				continue
			case IsKind(err, KindAuth, KindForbidden) || IsKind(err, KindBadRequest) && statusCode(err) != 400 ||
				IsKind(err, KindProtocol) && !MayHaveArrived(err):
				// Reading cannot succeed (refused credentials, a page that
				// is not Kibana's); the POST, if still open, may yet answer.
				lastErr = err
				pollingStopped = true
				emit(Event{Kind: "poll_error", Message: "reading the conversation was refused", Err: err})
				continue
			default:
				if ctx.Err() != nil {
					return Outcome{Err: lastErr}
				}
				lastErr = err
				emit(Event{Kind: "poll_error", Message: "reading the conversation failed; will try again", Err: err})
			}
			timer.Reset(readRetryWait(nextPoll(), err))
		}
	}
}

// maxTaskReadInterval bounds the time between reads of a Kibana task
// (tasks/get): with the default 20 s poll interval a task is read every
// 5 s, after the first reads at 1, 2 and 4 s.
const maxTaskReadInterval = 5 * time.Second

// settleTask turns what tasks/get says into the outcome, when the task has
// ended. The task is the authority on the state: a failed or canceled task
// ends at once with its reason. A completed (or interrupted) task's reply
// is read from the conversation, which holds the round and, for a run that
// stopped on a confirmation prompt, the only sign of it; the task's own
// text (status.message) stands in when the conversation cannot be read or
// does not have the round (Task Manager runs have had a shifting owner:
// Kibana #271650, #274535, #286573, #291362).
func (k *Kibana) settleTask(ctx context.Context, o DeliverOptions, res *SendResult, taskID string, emit func(Event)) (Outcome, bool) {
	out, final := taskOutcome(res.State, res.Text, "task", taskID)
	if !final {
		return Outcome{}, false
	}
	if out.State != StateCompleted && out.State != StateInputRequired {
		return out, true
	}
	convID := ConversationIDForContext(o.Message.ContextID)
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		conv, err := k.GetConversation(ctx, convID)
		if err == nil {
			if cout, ok := findOutcome(conv, o); ok {
				cout.TaskID = taskID
				emit(Event{Kind: "reply", Message: "the reply was read from conversation " + convID})
				return cout, true
			}
		}
		switch {
		case ctx.Err() != nil:
			return Outcome{}, false
		case attempt == 3 || err != nil && IsKind(err, KindAuth, KindForbidden):
			// The round may be projected a moment after the execution
			// ends; past that, the task's own text is the reply. A task
			// "completed" with no text and no round to show is not an
			// answer: a run stopped on a confirmation prompt looks so
			// until its round is read, so it is looked at again.
			if strings.TrimSpace(out.Reply) == "" {
				emit(Event{Kind: "poll_error", Message: "Kibana says task " + taskID + " completed, with no text and no round stored yet; reading again",
					Err: &Error{Kind: KindProtocol, Op: "read task " + taskID, Message: "the task completed with no text, and the conversation has no round for it yet (a confirmation prompt?)", Processed: true}})
				return Outcome{}, false
			}
			emit(Event{Kind: "reply", Message: "the conversation has no round for task " + taskID + "; the reply is the task's own text"})
			return out, true
		}
		if SleepContext(ctx, readRetryWait(wait, err)) != nil {
			return Outcome{}, false
		}
		wait *= 2
	}
}

// rampWait is the wait after read n (from 1) of an outcome that no open
// connection will bring: 1s, 2s, 4s, 8s, 16s, then the poll interval, and
// never more than it. A run that ends soon after its connection was cut
// (or its worker was revived) is read back within seconds, not at the next
// 20 s poll; a run of minutes costs five reads more.
func rampWait(interval time.Duration, n int) time.Duration {
	if n < 1 || n > 5 {
		return interval
	}
	return min(interval, time.Second<<(n-1))
}

// maxReadRetryAfter bounds how long a read waits on a server's Retry-After:
// a reply may be ready long before a generous hint runs out.
const maxReadRetryAfter = 10 * time.Minute

// readRetryWait is the wait before the next read: d, or longer when the
// server answered err with a Retry-After (429, 503), so that a rate-limited
// server is not asked again before it said to.
func readRetryWait(d time.Duration, err error) time.Duration {
	if ra := min(RetryAfterOf(err), maxReadRetryAfter); ra > d {
		return ra
	}
	return d
}

// CancelTask asks Kibana to cancel the task of a blocking:false send
// (tasks/cancel). Kibana 9.6 answers -32002 "Task not cancelable" for a
// running task (docs/simulator.md): the SDK handler of the cancel request
// has no event bus for it, and the task store does not save.
func (k *Kibana) CancelTask(ctx context.Context, agentID, taskID string) (*SendResult, error) {
	if err := CheckID("agent id", agentID); err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: "cancel task " + taskID, Message: err.Error()}
	}
	return k.a2a(agentID).CancelTask(ctx, taskID)
}

// GetTask reads the task of a blocking:false send (tasks/get), which
// Kibana 9.6 keeps for Task Manager runs.
func (k *Kibana) GetTask(ctx context.Context, agentID, taskID string) (*SendResult, error) {
	if err := CheckID("agent id", agentID); err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: "get task " + taskID, Message: err.Error()}
	}
	res, err := k.a2a(agentID).GetTask(ctx, taskID)
	if res != nil {
		res.Text = k.RedactText(res.Text)
	}
	return res, err
}

// ReadTask reads the task of a blocking:false send once, as a delivery
// following it would (the task says the state; a completed task's reply
// comes from the conversation, else from the task's text). state is the
// task's state as Kibana names it, final whether the outcome is.
func (k *Kibana) ReadTask(ctx context.Context, o DeliverOptions, taskID string) (out Outcome, state string, final bool, err error) {
	if o.InputSHA256 == "" && o.Message.Text != "" {
		o.InputSHA256 = HashText(o.Message.Text)
	}
	res, err := k.GetTask(ctx, o.AgentID, taskID)
	if err != nil {
		return Outcome{}, "", false, err
	}
	out, final = k.settleTask(ctx, o, res, taskID, func(Event) {})
	out.Reply, out.Reason = k.RedactText(out.Reply), k.RedactText(out.Reason)
	return out, res.State, final, nil
}

// a2a returns a JSON-RPC client of one agent's A2A endpoint on the
// configured origin (never the card's url), with the Kibana credential.
func (k *Kibana) a2a(agentID string) *A2A {
	t := *k.t
	base := *k.t.base
	base.Path = strings.TrimRight(base.Path, "/") + k.apiPathRaw("/api/agent_builder/a2a/", agentID)
	base.RawPath = ""
	t.base = &base
	return &A2A{t: &t, dialect: V03}
}

// confirm settles an ambiguous reply against the stored round: the round's
// outcome when it is stored, else the reply's reading (verdict). Only an
// answer proves anything: a 404 or a conversation without the round means
// "not stored"; other failures are retried a few times, and only then is
// the verdict taken.
func (k *Kibana) confirm(ctx context.Context, o DeliverOptions, verdict Outcome) (Outcome, bool) {
	wait := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		conv, err := k.GetConversation(ctx, ConversationIDForContext(o.Message.ContextID))
		switch {
		case err == nil:
			if out, ok := findOutcome(conv, o); ok {
				return out, true
			}
			return verdict, true
		case IsKind(err, KindNotFound), errors.Is(err, ErrReplyTooLarge):
			return verdict, true
		case ctx.Err() != nil:
			return Outcome{}, false
		case attempt == 4:
			return verdict, true
		}
		if SleepContext(ctx, readRetryWait(wait, err)) != nil {
			return Outcome{}, false
		}
		wait *= 2
	}
}

// judgeReply decides what the POST's answer means. It returns final=false
// when the request may have reached the server although no answer came: the
// caller then recovers by reading.
func (k *Kibana) judgeReply(ctx context.Context, o DeliverOptions, res *SendResult, err error, emit func(Event)) (Outcome, bool) {
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, false
		}
		if errors.Is(err, ErrReplyTooLarge) {
			emit(Event{Kind: "reply_too_large", Message: "the agent answered, but the answer is larger than the size cap; reading the reply from the conversation", Err: err})
			return Outcome{}, false
		}
		if MayHaveArrived(err) {
			emit(Event{Kind: "connection_lost", Message: "the connection was lost but the run may go on; recovering by reading the conversation", Err: err})
			return Outcome{}, false
		}
		var ce *Error
		status := 0
		if errors.As(err, &ce) {
			status = ce.StatusCode
		}
		return Outcome{State: StateRejected, Reason: err.Error(), Err: err, Via: "reply", HTTPStatus: status}, true
	}
	switch {
	case res.Kind == "task":
		switch res.State {
		case "completed":
			return Outcome{State: StateCompleted, Reply: res.Text, Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
		case "failed":
			return Outcome{State: StateFailed, Reason: nonEmpty(res.Text, "the agent reported the task failed"), Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
		case "rejected":
			return Outcome{State: StateRejected, Reason: nonEmpty(res.Text, "the agent rejected the task"), Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
		case "canceled":
			return Outcome{State: StateCanceled, Reason: nonEmpty(res.Text, "the task was canceled"), Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
		case "input-required", "auth-required":
			return Outcome{State: StateInputRequired, Reply: res.Text, Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
		}
		// A task still working: its round will reach the conversation.
		emit(Event{Kind: "poll", Message: fmt.Sprintf("the server accepted the task (state %s); following it", nonEmpty(res.State, "unknown"))})
		return Outcome{}, false
	case res.Kind == "message" && strings.TrimSpace(res.Text) == "":
		// An empty reply: the round may be waiting on a prompt (HITL),
		// which only the stored round says.
		return k.confirm(ctx, o, Outcome{State: StateCompleted, Reply: res.Text, Via: "reply", HTTPStatus: 200, TaskID: res.TaskID})
	case res.LooksLikeAgentError():
		// Kibana answers a failed run with "Error: …" and stores no round;
		// an agent that really replied so has its round stored.
		return k.confirm(ctx, o, Outcome{State: StateFailed, Reason: strings.TrimPrefix(res.Text, AgentErrorPrefix), Via: "reply", HTTPStatus: 200,
			Err: &Error{Kind: KindAgentFailed, Op: "agent " + o.AgentID, Message: oneLine(strings.TrimPrefix(res.Text, AgentErrorPrefix), 300)}})
	default:
		return Outcome{State: StateCompleted, Reply: res.Text, Via: "reply", HTTPStatus: 200, TaskID: res.TaskID}, true
	}
}

// Outcome reads the outcome of one message from a conversation: the round
// whose input hashes to inputSHA256 among those after roundsBefore (or,
// for a context the client made up, the first new round). With an empty
// inputSHA256 it reads the last round. ok is false while the round is not
// stored or not finished.
func (c *Conversation) Outcome(inputSHA256 string, roundsBefore int, fresh bool) (Outcome, bool) {
	if inputSHA256 == "" {
		r, _, ok := c.PickRound(-1)
		if !ok {
			return Outcome{}, false
		}
		return roundOutcome(r)
	}
	return findOutcome(c, DeliverOptions{InputSHA256: inputSHA256, RoundsBefore: roundsBefore, FreshContext: fresh})
}

// findOutcome looks for this message's round among the rounds added since
// the send, and reports its outcome once it is final.
func findOutcome(conv *Conversation, o DeliverOptions) (Outcome, bool) {
	// Only each round's input is read on the way (roundInput stops at it,
	// before the round's steps); the whole round only once it is found.
	mine, first := -1, -1
	var mineRaw, firstRaw string
	conv.eachRoundRaw(func(i int, raw string) bool {
		if i < o.RoundsBefore {
			return true
		}
		if first < 0 {
			first, firstRaw = i, raw
		}
		if HashText(roundInput(raw)) == o.InputSHA256 {
			mine, mineRaw = i, raw
			return false
		}
		return true
	})
	if mine < 0 && o.FreshContext {
		mine, mineRaw = first, firstRaw
	}
	if mine < 0 {
		return Outcome{}, false
	}
	return roundOutcome(readRound(mine, mineRaw))
}

// maxMalformedReads is how many reads of a round no Kibana would write are
// made before the task ends on it.
const maxMalformedReads = 3

func roundOutcome(r Round) (Outcome, bool) {
	if r.Malformed != "" {
		return Outcome{malformed: r.Malformed}, false
	}
	switch r.Interruption {
	case "":
	case "aborted":
		reason := "Kibana aborted the run"
		switch r.InterruptionReason {
		case "api":
			reason += " on request"
		case "task_manager":
			reason += " (Task Manager stopped it)"
		case "caller":
			reason += " (the run that called it was aborted)"
		}
		return Outcome{State: StateCanceled, Reason: reason, Via: "conversation", HTTPStatus: 200}, true
	default:
		return Outcome{State: StateFailed, Reason: nonEmpty(r.InterruptionReason, "the agent's run failed"), Via: "conversation", HTTPStatus: 200}, true
	}
	switch r.Status {
	case "", "completed":
		return Outcome{State: StateCompleted, Reply: r.Response, Via: "conversation", HTTPStatus: 200}, true
	case "awaiting_prompt":
		return Outcome{State: StateInputRequired, Reply: nonEmpty(r.Prompt, r.Response), Via: "conversation", HTTPStatus: 200}, true
	case "failed", "error":
		// Two-phase persistence records failed rounds (unreleased Kibana).
		return Outcome{State: StateFailed, Reason: nonEmpty(strings.TrimPrefix(r.Response, AgentErrorPrefix), "the round failed"), Via: "conversation", HTTPStatus: 200}, true
	case "aborted":
		return Outcome{State: StateCanceled, Reason: "the run was aborted", Via: "conversation", HTTPStatus: 200}, true
	}
	return Outcome{}, false
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
