package client

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
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
	emit := func(e Event) {
		if o.OnEvent != nil {
			o.OnEvent(e)
		}
	}
	taskID := o.TaskID
	var acc artifacts
	var lastErr error
	noteTask := func(id string) {
		// A server's id goes into records, file names and commands shown to
		// callers: one that is not a plain id is not kept.
		if id != "" && id != taskID && ValidID(id) {
			taskID = id
			emit(Event{Kind: "task", TaskID: id, Message: "the server named the task " + id})
		}
	}
	// progress passes on a status message of a task still going, once:
	// a stream's update, then the same status read by a poll, is one.
	lastProgress := ""
	progress := func(state, text, ts string) {
		if strings.TrimSpace(text) == "" || finalState(state) {
			return
		}
		if key := state + "\x00" + ts + "\x00" + text; key != lastProgress {
			lastProgress = key
			emit(Event{Kind: "progress", Message: c.t.redactText(text), TaskID: taskID, State: state})
		}
	}
	onStatus := func(ev StreamEvent) { progress(ev.State, ev.Text, ev.Timestamp) }
	var gotConn atomic.Bool
	traced := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				emit(Event{Kind: "written", Message: "the request reached the server"})
			}
		},
	})

	// An answer to a task that asked for input may be met first by the
	// task as it was (a2a-js restates it, still input-required): that
	// state is stale until the task has moved on.
	guard := &staleGuard{active: o.Message.TaskID != "", text: o.Question}
	if o.Send {
		emit(Event{Kind: "sent", Message: "message sent; waiting for the agent"})
		if o.Streaming {
			// Any event means the server took the message in: an error
			// after it (an error event, a broken read) is never a refusal.
			accepted := false
			out, final, err := c.follow(traced, guard, func(fn func(StreamEvent) bool) error { return c.Stream(traced, o.Message, fn) }, &acc,
				func(id string) { accepted = true; noteTask(id) }, onStatus)
			if final {
				return out
			}
			if err != nil && !accepted && (!gotConn.Load() || !MayHaveArrived(err) && !errors.Is(err, errStreamCut)) && ctx.Err() == nil {
				return rejectedOutcome(err)
			}
			lastErr = err
			emit(Event{Kind: "connection_lost", Message: "the stream ended before the task finished; following the task", Err: err})
		} else {
			res, err := c.Send(traced, o.Message, true)
			switch {
			case err != nil && (!MayHaveArrived(err) || !gotConn.Load()) && ctx.Err() == nil:
				return rejectedOutcome(err)
			case errors.Is(err, ErrReplyTooLarge):
				lastErr = err
				emit(Event{Kind: "reply_too_large", Message: "the agent answered, but the answer is larger than the size cap; following the task", Err: err})
			case err != nil:
				lastErr = err
				emit(Event{Kind: "connection_lost", Message: "the answer was lost; following the task", Err: err})
			case res.Kind == "message":
				out, _ := res.outcome("reply")
				return out
			default:
				noteTask(res.TaskID)
				if guard.stale(res.State, res.Text, res.Timestamp) {
					break
				}
				if out, ok := res.outcome("reply"); ok {
					return out
				}
				progress(res.State, res.StatusText, res.Timestamp)
			}
		}
	}

	if o.Send && ctx.Err() != nil && !gotConn.Load() {
		return Outcome{Err: lastErr, notSent: true}
	}
	// Lost before the server named the task: look for it when the protocol
	// can list tasks, while reading fails for as long as the caller waits,
	// and while the task is not listed findTaskLooks times (within the
	// caller's wait).
	looks := 0
	lost := func(why error) Outcome {
		if errors.Is(lastErr, ErrReplyTooLarge) {
			// The agent answered: what it ran is known to have run, and
			// its answer is gone with no task to read it from.
			return Outcome{State: StateFailed, Err: errors.Join(lastErr, why), Via: "reply", HTTPStatus: 200,
				Reason: fmt.Sprintf("the agent answered, but its answer could not be kept (larger than the %s cap) and no task to read it from can be found", byteSize(c.t.maxBody))}
		}
		return Outcome{Err: errors.Join(why, lastErr)}
	}
	for taskID == "" {
		id, err := c.FindTask(ctx, o.Message.ContextID, o.Message.MessageID)
		switch {
		case err == nil && id != "":
			noteTask(id)
			continue
		case errors.Is(err, ErrNoTaskList):
			return lost(fmt.Errorf("%w: the agent cannot list tasks by context", ErrNoTask))
		case err == nil:
			if looks++; looks >= findTaskLooks {
				return lost(fmt.Errorf("%w: the agent listed no task holding the message (%d looks)", ErrNoTask, looks))
			}
			emit(Event{Kind: "poll", Message: "the agent lists no task holding the message yet; looking again"})
		case IsKind(err, KindAuth, KindForbidden):
			return Outcome{Err: err}
		default:
			lastErr = err
		}
		if SleepContext(ctx, readRetryWait(o.PollInterval, err)) != nil {
			return Outcome{Err: lastErr}
		}
	}

	subscribeTries := 0
	reads := 0 // of the task, which no open connection brings any more
	for {
		if ctx.Err() != nil {
			return Outcome{Err: lastErr}
		}
		if o.Streaming && subscribeTries < 3 {
			subscribeTries++
			out, final, err := c.follow(ctx, guard, func(fn func(StreamEvent) bool) error { return c.Subscribe(ctx, taskID, fn) }, &acc, noteTask, onStatus)
			if final {
				if out.State == StateCompleted {
					// Chunks sent while no stream was open are not sent
					// again: the task itself holds the whole reply.
					if res, err := c.GetTask(ctx, taskID); err == nil && res.State == "completed" && hasArtifacts(res) {
						out.Reply, out.Parts = res.Text, res.Parts
					}
				}
				return out
			}
			switch {
			case taskNotFound(err):
				return Outcome{Err: errors.Join(ErrTaskGone, err)}
			case IsKind(err, KindRPC), IsKind(err, KindAuth, KindForbidden, KindBadRequest):
				// Subscribing is refused (a finished task, a server that
				// does not resubscribe): poll instead.
				subscribeTries = 3
			}
			if err != nil {
				lastErr = err
			}
			if IsKind(err, KindBusy) && SleepContext(ctx, readRetryWait(0, err)) != nil {
				// Rate limited: the task is read when the server said,
				// not at once.
				return Outcome{Err: lastErr}
			}
		}
		res, err := c.GetTask(ctx, taskID)
		switch {
		case err == nil:
			if res.State == "completed" && !hasArtifacts(res) && !acc.empty() {
				// A server that keeps no artifacts in the task: the
				// chunks a stream brought are the reply.
				res = res.withArtifacts(&acc)
			}
			if guard.stale(res.State, res.Text, res.Timestamp) {
				emit(Event{Kind: "poll", Message: "task " + taskID + " has not taken the answer in yet"})
			} else if out, ok := res.outcome("task"); ok {
				out.TaskID = taskID
				return out
			} else {
				progress(res.State, res.StatusText, res.Timestamp)
			}
			emit(Event{Kind: "poll", Message: "task " + taskID + " is " + res.State})
		case taskNotFound(err):
			// Only TaskNotFoundError on an id the server gave says the
			// task is gone.
			return Outcome{Err: errors.Join(ErrTaskGone, err)}
		case IsKind(err, KindAuth, KindForbidden):
			return Outcome{Err: err}
		default:
			// Any other error (a JSON-RPC error such as -32603, an HTTP 400
			// or 404, a broken connection) may pass: read again after the
			// usual wait, until the task ends or the caller stops waiting.
			if ctx.Err() != nil {
				return Outcome{Err: lastErr}
			}
			lastErr = err
			emit(Event{Kind: "poll_error", Message: "reading the task failed; will try again", Err: err})
		}
		// The first reads come sooner (rampWait); a rate-limited read (429,
		// 503) waits as long as the server asked.
		wait := o.PollInterval
		if err == nil {
			reads++
			wait = rampWait(o.PollInterval, reads)
		}
		if SleepContext(ctx, readRetryWait(wait, err)) != nil {
			return Outcome{Err: lastErr}
		}
	}
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
// status update, or a task snapshot, not final).
func (c *A2A) follow(ctx context.Context, guard *staleGuard, open func(func(StreamEvent) bool) error, acc *artifacts, noteTask func(string), onStatus func(StreamEvent)) (Outcome, bool, error) {
	var out Outcome
	final := false
	err := open(func(ev StreamEvent) bool {
		if guard.stale(ev.State, ev.Text, ev.Timestamp) {
			noteTask(ev.TaskID)
			return true
		}
		noteTask(ev.TaskID)
		switch ev.Kind {
		case "message":
			out, final = Outcome{State: StateCompleted, Reply: ev.Text, Via: "stream", HTTPStatus: 200, TaskID: ev.TaskID,
				Parts: replyParts(SourceMessage, ev.Parts)}, true
			return false
		case "task":
			acc.reset(ev.Artifacts)
		case "artifact":
			acc.apply(ev.Artifact, ev.Append)
			return true
		}
		if finalState(ev.State) {
			text := ev.Text
			if ev.State == "completed" {
				text = composeAnswer(acc.String(), ev.Text)
			}
			if out, final = taskOutcome(ev.State, text, "stream", ev.TaskID); final {
				out.Parts = append(acc.replyParts(), replyParts(SourceStatus, ev.Parts)...)
			}
			return false
		}
		if onStatus != nil {
			onStatus(ev)
		}
		return true
	})
	if final {
		return out, true, nil
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
