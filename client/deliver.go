package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
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
	// pastDeadline: the delivery reached its Deadline without an outcome.
	pastDeadline bool
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

// PastDeadline reports whether the delivery ended at its Deadline, without
// an outcome: the task's maximum wait passed.
func (o Outcome) PastDeadline() bool { return o.pastDeadline }

// waitUntil is the wait before the next read: d, or until deadline when
// that comes first (0 once it has passed); d when no deadline is set.
func waitUntil(d time.Duration, deadline time.Time) time.Duration {
	if deadline.IsZero() {
		return d
	}
	return max(min(d, time.Until(deadline)), 0)
}

// pastDeadline reports whether deadline is set and has come.
func pastDeadline(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}

// NotSent reports whether a send ended before its request was written:
// nothing reached the server, so the task may be sent later.
func (o Outcome) NotSent() bool { return o.notSent }

// Event is progress worth telling a person or a log about.
type Event struct {
	Kind    EventKind
	Message string
	Err     error
	// TaskID is the server's task id, on events of Kind "task" (and
	// "progress", once known).
	TaskID string
	// State is the task's state on "progress" events ("working").
	State string
}

// EventKind names an Event. The names are stable: logs and callers rely on
// them.
type EventKind string

// The events, one table: every kind Deliver emits, and EventBusy, which
// Deliver never emits (it sends once): a caller that sends a refused
// message again reports its wait with it.
const (
	// EventSent: a connection is made and the send let through
	// (BeforeSend, when set, said yes): the request is being written, and
	// goes out whole even if the caller stops now. Emitted once per
	// delivery, on the goroutine that makes the request, before a byte of
	// it is written; never when nothing left (a connection never made, a
	// BeforeSend that refused).
	EventSent EventKind = "sent"
	// EventWritten: net/http wrote the whole request (WroteRequest): all of
	// it is in the connection, but for its last buffer (up to 4 KiB), which
	// net/http flushes right after. The server has it unless the connection
	// ends in that instant; it says nothing of whether the server took it
	// in or answered. A lost answer is recovered by reading, never by
	// sending, from the connection on already (Outcome.NotSent): this event
	// only moves the record to working.
	EventWritten EventKind = "written"
	// EventTask: the server named the task (TaskID).
	EventTask EventKind = "task"
	// EventConnectionLost: the connection ended before the outcome; the run
	// may go on and is followed by reading (Err says how it ended).
	EventConnectionLost EventKind = "connection_lost"
	// EventPoll: a read found no outcome yet.
	EventPoll EventKind = "poll"
	// EventPollError: a read failed (Err); it is tried again, or reading
	// stops when it cannot succeed.
	EventPollError EventKind = "poll_error"
	// EventReply: the outcome was read back.
	EventReply EventKind = "reply"
	// EventStreamUnsupported: the card said streaming but the server does
	// not stream; the message goes once by message/send instead.
	EventStreamUnsupported EventKind = "stream_unsupported"
	// EventReplyTooLarge: the server answered the send, but its answer was
	// over the size cap (Err wraps ErrReplyTooLarge); the outcome is read
	// another way.
	EventReplyTooLarge EventKind = "reply_too_large"
	// EventProgress: a status message the task sent while still going
	// ("Calling tool X..."), in Message with the credential redacted, once
	// per status (a stream's update, or a read that shows a new one); State
	// is the task's state ("working"), TaskID the task once known.
	EventProgress EventKind = "progress"
	// EventBusy: the server refused the message for now (429, 503 with
	// Retry-After) and it is sent again after a wait (Message says how
	// long). Emitted by callers that send again, never by Deliver.
	EventBusy EventKind = "busy"
)

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
	// Deadline, when set, is the task's maximum wait: no read begins at
	// or after it but the delivery's first (a task revived after its
	// deadline gets one look, which ctx must leave time for); each wait
	// before a read ends at it at the latest, and there Deliver returns,
	// its outcome PastDeadline. (A ctx that ends at Deadline ends the
	// delivery there anyway.) It is on the machine's clock (time.Now).
	Deadline time.Time
	// BeforeSend, if set, is called once, for the goroutine that sends (on
	// a short-lived one it waits for: offStack), when
	// a connection to the server is made and before anything of the
	// request is written to it: the last moment before the message may
	// leave (a caller records there that it is leaving). An error stops
	// the send: the connection is closed with nothing of the request on
	// it, and Deliver returns at once an outcome that is NotSent, with
	// that error. It is not called when no connection is made (an
	// unreachable server, a caller that stopped first). A caller whose ctx
	// ends while it runs stops the send the same way (the outcome is
	// NotSent, without an error of BeforeSend's): what BeforeSend recorded
	// is for the caller to take back. Once BeforeSend returned and the
	// caller had not stopped, the request goes out whole, whatever the
	// caller does next (see sendGate).
	BeforeSend func() error
	// Feed, when set, is the agent's conversation list, shared by the
	// deliveries of one process (the worker): a look at the conversation
	// first asks it, and reads the conversation only when it changed or
	// the list cannot tell; looks fall on a grid of the poll interval, so
	// that one read of the list serves every delivery (feed.go).
	Feed *Feed
	// Hurry, when set, says when a caller waits on the task: the delivery
	// then looks every FastPoll instead of every poll interval.
	Hurry *Hurry
}

// The events of the gate (gate.go), the same in every delivery.
var (
	sentEvent    = Event{Kind: EventSent, Message: "connected; the message is going out"}
	writtenEvent = Event{Kind: EventWritten, Message: "the request is written to the connection; waiting for the agent"}
)

// HashText returns the hex SHA-256 that identifies a message's text.
func HashText(text string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return hex.EncodeToString(sum[:])
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
		unreadable := ""
		if err == nil {
			cout, ok := findOutcome(conv, o)
			if ok {
				cout.TaskID = taskID
				emit(Event{Kind: EventReply, Message: "the reply was read from conversation " + convID})
				return cout, true
			}
			unreadable = cout.Malformed()
		}
		if errors.Is(err, ErrReplyTooLarge) {
			unreadable = "the conversation is larger than the " + byteSize(k.maxCV) + " cap"
		}
		switch {
		case ctx.Err() != nil:
			return Outcome{}, false
		case unreadable != "" && strings.TrimSpace(out.Reply) != "":
			// The round cannot be read, but the task holds the answer.
			emit(Event{Kind: EventReply, Message: "the conversation of task " + taskID + " cannot be read (" + unreadable + "); the reply is the task's own text"})
			return out, true
		case unreadable != "" && (attempt == 3 || err != nil):
			// Kibana says the run completed, and there is no way to read
			// what it answered: lost, never an empty completed reply.
			return Outcome{Err: errors.Join(ErrRoundUnreadable, &Error{Kind: KindProtocol, Op: "read conversation " + convID,
				StatusCode: 200, Processed: true, Message: "task " + taskID + " completed, but its reply cannot be read: " + unreadable})}, true
		case attempt == 3 || err != nil && IsKind(err, KindAuth, KindForbidden):
			// The round may be projected a moment after the execution
			// ends; past that, the task's own text is the reply. A task
			// "completed" with no text and no round to show is not an
			// answer: a run stopped on a confirmation prompt looks so
			// until its round is read, so it is looked at again.
			if strings.TrimSpace(out.Reply) == "" {
				emit(Event{Kind: EventPollError, Message: "Kibana says task " + taskID + " completed, with no text and no round stored yet; reading again",
					Err: &Error{Kind: KindProtocol, Op: "read task " + taskID, Message: "the task completed with no text, and the conversation has no round for it yet (a confirmation prompt?)", Processed: true}})
				return Outcome{}, false
			}
			emit(Event{Kind: EventReply, Message: "the conversation has no round for task " + taskID + "; the reply is the task's own text"})
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
	if final && !out.Final() {
		// The task ended, but its reply cannot be read.
		return Outcome{}, res.State, false, out.Err
	}
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
			emit(Event{Kind: EventReplyTooLarge, Message: "the agent answered, but the answer is larger than the size cap; reading the reply from the conversation", Err: err})
			return Outcome{}, false
		}
		if MayHaveArrived(err) {
			emit(Event{Kind: EventConnectionLost, Message: "the connection was lost but the run may go on; recovering by reading the conversation", Err: err})
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
		emit(Event{Kind: EventPoll, Message: fmt.Sprintf("the server accepted the task (state %s); following it", nonEmpty(res.State, "unknown"))})
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
// made, once no connection may bring the answer, before the task ends on
// it.
const maxMalformedReads = 3

// ErrRoundUnreadable means the conversation holds a round for the message
// in a shape no Kibana writes, read again and again: its outcome cannot be
// read, so the task is lost (Outcome.Err, with no state).
var ErrRoundUnreadable = errors.New("the round stored for the message cannot be read")

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
