package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// errHandedOff means the caller stopped waiting: the record keeps its state
// and a worker carries on.
var errHandedOff = errors.New("handed off")

// errCancelRequested is the cause of a task context ended by `cancel`.
var errCancelRequested = errors.New("cancel requested")

// taskRunner works on one task whose record lock it holds. The foreground
// send and the detached worker share it, so both behave the same.
type taskRunner struct {
	// command names the runner in the audit log: "send" or "worker".
	command string
	st      *store.Store
	key     client.Secret
	clients func(store.Target) (*http.Client, error)
	now     func() time.Time
	logf    func(format string, args ...any)
	onEvent func(client.Event)
	// write replaces Handle.Update, for tests that make a write fail.
	write func(*store.Handle, func(*store.Record) error) (*store.Record, error)
	// text is the message of a record this process created in state
	// sending (send in the foreground); empty in a worker.
	text string
	// working is how long after the request reached the server the record
	// is written as working, when no outcome came first (default 100 ms).
	working time.Duration
}

func (r *taskRunner) workingDelay() time.Duration {
	if r.working > 0 {
		return r.working
	}
	return defaultWorkingDelay
}

// defaultWorkingDelay: the working state is informational (sending and
// working are recovered alike, by reading), so it may wait for an answer
// that would make it stale at once.
const defaultWorkingDelay = 100 * time.Millisecond

// run works on the task until its outcome is final, until the maximum wait
// passes (state expired), or until ctx ends (errHandedOff; the state stays,
// so another worker can pick the task up by reading, never by resending).
func (r *taskRunner) run(ctx context.Context, h *store.Handle) (*store.Record, error) {
	rec, err := h.Load()
	if err != nil {
		return nil, err
	}
	if rec.State.Terminal() {
		return rec, nil
	}
	if got := identityFor(rec.Target, r.key); got != rec.Identity {
		return rec, fmt.Errorf("task %s was sent with another credential; it is left for a worker holding that one", rec.ContextID)
	}
	hc, err := r.clients(rec.Target)
	if err != nil {
		return rec, err
	}
	var deliver func(ctx context.Context, x *store.Record, send bool, text string, on func(client.Event)) client.Outcome
	switch rec.Target.Kind {
	case store.TargetA2A:
		t := rec.Target
		c, err := client.NewA2A(client.A2AConfig{Endpoint: t.Endpoint, Dialect: client.Dialect(t.Dialect), Tenant: t.Tenant,
			Auth: client.Auth{Header: t.AuthHeader, Prefix: t.AuthPrefix}, Credential: r.key, HTTPClient: hc, UserAgent: userAgent()})
		if err != nil {
			return rec, err
		}
		deliver = func(ctx context.Context, x *store.Record, send bool, text string, on func(client.Event)) client.Outcome {
			contextID := x.ContextID
			if x.LocalContext {
				contextID = ""
			}
			return c.Deliver(ctx, client.A2ADeliverOptions{
				Message:      client.OutgoingMessage{Text: text, MessageID: x.MessageID, ContextID: contextID, TaskID: x.AnswersTask},
				Question:     x.Question,
				Send:         send,
				TaskID:       x.TaskID,
				Streaming:    t.Streaming,
				PollInterval: time.Duration(x.PollInterval),
				OnEvent:      on,
			})
		}
	default:
		k, err := client.NewKibana(client.KibanaConfig{URL: rec.Target.URL, Space: rec.Target.Space, APIKey: r.key, HTTPClient: hc, UserAgent: userAgent()})
		if err != nil {
			return rec, err
		}
		deliver = func(ctx context.Context, x *store.Record, send bool, text string, on func(client.Event)) client.Outcome {
			return k.Deliver(ctx, client.DeliverOptions{
				AgentID:      x.Agent,
				Message:      client.OutgoingMessage{Text: text, MessageID: x.MessageID, ContextID: x.ContextID, Blocking: true},
				Send:         send,
				InputSHA256:  x.MessageSHA256,
				RoundsBefore: x.RoundsBefore,
				FreshContext: x.FreshContext,
				PollInterval: time.Duration(x.PollInterval),
				Stream:       x.Target.Streaming,
				NonBlocking:  x.Target.NonBlocking,
				TaskID:       x.TaskID,
				OnEvent:      on,
			})
		}
	}

	id := rec.ContextID
	// Events arrive on the HTTP client's goroutines: one record write at a
	// time, and rec and written are only touched under mu.
	var mu sync.Mutex
	// written: the request reached the server, so the record is due to say
	// working. Every write carries that change; on its own it is written
	// after workingDelay, so that an answer arriving sooner (a quick agent)
	// makes one write, with its fsyncs, instead of two.
	written := false
	apply := func(x *store.Record) {
		if written && x.State == store.Sending {
			x.State = store.Working
		}
	}
	update := func(fn func(*store.Record)) error {
		mu.Lock()
		defer mu.Unlock()
		write := r.write
		if write == nil {
			write = (*store.Handle).Update
		}
		nr, err := write(h, func(x *store.Record) error { apply(x); fn(x); return nil })
		if err != nil {
			r.logf("%s: cannot write the record: %v", id, err)
			return err
		}
		rec = nr
		return nil
	}
	current := func() *store.Record {
		mu.Lock()
		defer mu.Unlock()
		return rec
	}
	// markWorking writes the working state if no other write carried it.
	markWorking := func() {
		mu.Lock()
		defer mu.Unlock()
		if !written || rec.State != store.Sending {
			return
		}
		if nr, err := h.Update(func(x *store.Record) error { apply(x); return nil }); err == nil {
			rec = nr
		} else {
			r.logf("%s: cannot write the record: %v", id, err)
		}
	}
	var workingTimer *time.Timer

	defer func() {
		if cur := current(); cur != nil && cur.State.Terminal() {
			r.st.ClearCancel(id) // a finished task's marker has nothing left to cancel
		}
	}()
	if r.st.CancelRequested(id, rec.MessageID) {
		update(func(x *store.Record) { markCanceled(x, r.now()) })
		return current(), nil
	}
	// createdSending: this process created the record already sending
	// (send in the foreground), so the creation was the sending write and
	// the text is in r.text, never on disk.
	createdSending := r.text != "" && rec.State == store.Sending && rec.Workers == 1
	send := rec.State == store.Queued || createdSending
	text := rec.Message
	if createdSending {
		text = r.text
	}
	if send && text == "" {
		update(func(x *store.Record) {
			finish(x, r.now(), store.Failed)
			x.Reason = "the record holds no message text to send"
		})
		return current(), nil
	}
	if send && !createdSending && rec.RetryAt != nil {
		// The server refused this message earlier and said when to come
		// back: not before then (and never longer than a send waits).
		if d := min(rec.RetryAt.Sub(r.now()), maxSendRetryWait); d > 0 {
			r.logf("%s: the server asked to wait; sending in %s", id, waitText(d))
			if client.SleepContext(ctx, d) != nil {
				if errors.Is(context.Cause(ctx), errCancelRequested) {
					update(func(x *store.Record) { markCanceled(x, r.now()) })
					r.st.ClearCancel(id)
					r.logf("%s: canceled on request", id)
					r.audit(current())
					return current(), nil
				}
				return current(), errHandedOff
			}
		}
	}
	if send && !createdSending && (errors.Is(context.Cause(ctx), errCancelRequested) || r.st.CancelRequested(id, rec.MessageID)) {
		// Canceled while it waited its turn: it is still queued, nothing
		// left.
		update(func(x *store.Record) { markCanceled(x, r.now()) })
		r.st.ClearCancel(id)
		r.logf("%s: canceled on request before it was sent", id)
		r.audit(current())
		return current(), nil
	}
	switch {
	case createdSending:
		r.logf("%s: sending to agent %s (%d bytes)", id, rec.Agent, rec.MessageSize)
	case send:
		// Past this write the task is never sent again by anyone: the
		// text leaves the record and only its hash and size stay. If the
		// write fails, nothing is sent: a record still queued would be
		// sent again by the next worker.
		if err := update(func(x *store.Record) {
			now := r.now().UTC()
			x.State = store.Sending
			x.Message = ""
			x.SentAt = &now
			x.RetryAt = nil
			x.Workers++
		}); err != nil {
			return current(), fmt.Errorf("task %s not sent: cannot record that it is being sent: %w", id, err)
		}
		r.logf("%s: sending to agent %s (%d bytes)", id, rec.Agent, rec.MessageSize)
	default:
		update(func(x *store.Record) {
			x.Workers++
			// Whatever held a blocking send's connection is gone.
			x.ConnectionLost = x.ConnectionLost || x.Target.Kind == store.TargetKibana && !x.Target.NonBlocking
		})
		r.logf("%s: recovering (state %s): reading the conversation, never sending again", id, rec.State)
	}

	start := current()
	deadline := start.Deadline()
	// A task revived after its deadline still gets one look.
	if minEnd := r.now().Add(min(time.Duration(rec.PollInterval), 30*time.Second) + 5*time.Second); !send && deadline.Before(minEnd) {
		deadline = minEnd
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	onEvent := func(e client.Event) {
		switch e.Kind {
		case client.EventTask:
			update(func(x *store.Record) {
				x.TaskID = e.TaskID
				if x.Target.Kind == store.TargetKibana && !x.Target.Streaming {
					x.Path = pathTask // the server answered blocking:false with its task
				}
			})
		case client.EventWritten:
			mu.Lock()
			if !written {
				written = true
				workingTimer = time.AfterFunc(r.workingDelay(), markWorking)
			}
			mu.Unlock()
		case client.EventStreamUnsupported:
			// The cached card said streaming; the next send reads it anew.
			if cur := current(); cur.Target.Kind == store.TargetKibana {
				r.st.ForgetCard(kibanaCardKey(cur.Target.URL, r.key, cur.Target.Space, cur.Agent))
			}
			update(func(x *store.Record) { x.Target.Streaming = false })
		case client.EventConnectionLost, client.EventPollError, client.EventReplyTooLarge:
			info := errorInfo(e.Err)
			cur := current()
			lost := e.Kind == client.EventConnectionLost && cur.Target.Kind == store.TargetKibana && !cur.Target.NonBlocking
			if cur.LastError != nil && info != nil && *cur.LastError == *info && (!lost || cur.ConnectionLost) {
				break // the same problem again: no need to rewrite the record
			}
			update(func(x *store.Record) {
				x.LastError = info
				x.ConnectionLost = x.ConnectionLost || lost
			})
		}
		if e.Err != nil {
			r.logf("%s: %s: %s: %v", id, e.Kind, e.Message, e.Err)
		} else {
			r.logf("%s: %s: %s", id, e.Kind, e.Message)
		}
		if r.onEvent != nil {
			r.onEvent(e)
		}
	}
	// refusals counts the sends the server refused before taking anything
	// in (429, 503 with Retry-After), across the processes that sent it.
	refusals := start.Refusals
	// unsent: the last send was refused and the wait before the next one
	// was cut short, so nothing is on the server.
	unsent := false
	refusedNote := ""
	var out client.Outcome
	for {
		out = deliver(dctx, current(), send, text, onEvent)
		mu.Lock()
		if workingTimer != nil {
			workingTimer.Stop()
		}
		mu.Unlock()
		if !send || out.State != client.StateRejected || !client.RetryLater(out.Err) {
			break
		}
		// The server refused the message before taking it in: sending it
		// again is safe, after the wait it asked for, a bounded number of
		// times and only within the time left.
		refusals++
		dl, hasDL := dctx.Deadline()
		wait, why := sendRetryWait(out.Err, refusals, r.now(), dl, hasDL)
		if why != "" {
			refusedNote = why
			break
		}
		// Until it is sent again, the record says what is true: queued,
		// its text back in it, not before RetryAt. A process that dies
		// meanwhile leaves it for a worker, which sends it once, then.
		mu.Lock()
		written = false
		mu.Unlock()
		retryAt := r.now().Add(wait).UTC()
		update(func(x *store.Record) {
			x.State, x.Message, x.SentAt, x.RetryAt = store.Queued, text, nil, &retryAt
			x.Refusals = refusals
			x.LastError = errorInfo(out.Err)
		})
		r.logf("%s: refused (%v); sending again in %s (retry %d of %d)", id, out.Err, waitText(wait), refusals, maxSendRetries)
		if r.onEvent != nil {
			r.onEvent(client.Event{Kind: client.EventBusy, Err: out.Err,
				Message: fmt.Sprintf("the server is busy or rate limiting; sending again in %s (retry %d of %d)", waitText(wait), refusals, maxSendRetries)})
		}
		if client.SleepContext(dctx, wait) != nil {
			if ctx.Err() != nil {
				unsent = true
				out = client.Outcome{Err: out.Err}
			}
			// Else the maximum wait ran out: the refusal stands.
			break
		}
		// Past this write the message is never sent again by anyone but
		// this process, and only after another refusal.
		if err := update(func(x *store.Record) {
			now := r.now().UTC()
			x.State, x.Message, x.SentAt, x.RetryAt = store.Sending, "", &now, nil
		}); err != nil {
			return current(), fmt.Errorf("task %s not sent again: cannot record that it is being sent: %w", id, err)
		}
		r.logf("%s: sending to agent %s again (%d bytes)", id, rec.Agent, rec.MessageSize)
	}
	if !out.Final() && !unsent {
		markWorking()
	}
	switch {
	case out.Final():
		if refusedNote != "" {
			out.Reason += "; " + refusedNote
		}
		err := update(func(x *store.Record) {
			finish(x, r.now(), store.State(out.State))
			if kerr := keepReply(r.st, x, out.Reply); kerr != nil {
				// The run finished and said something, but it cannot be
				// kept: that is the outcome, not a completed empty reply.
				x.State = store.Failed
				x.Reason = "the run finished, but its reply could not be kept: " + oneLineErr(kerr)
				return
			}
			x.Reason = out.Reason
			x.Refusals = refusals
			x.Error = errorInfo(out.Err)
			x.HTTPStatus = out.HTTPStatus
			x.Via = out.Via
			if out.TaskID != "" {
				x.TaskID = out.TaskID
			}
			if x.Target.Kind == store.TargetKibana && x.Path == "" {
				// blocking:false answered without a task: a release
				// that ignores it (9.2 to 9.5), the blocking path.
				x.Path = pathBlocking
			}
		})
		r.logf("%s: %s (via %s)", id, out.State, out.Via)
		if err != nil {
			// The outcome is known but not recorded: hand it back so the
			// caller can still show it, and say the record lags.
			res := *current()
			finish(&res, r.now(), store.State(out.State))
			res.Reply, res.Reason, res.Error, res.Via = out.Reply, out.Reason, errorInfo(out.Err), out.Via
			return &res, &recordWriteError{err}
		}
		r.audit(current())
		return current(), nil
	case errors.Is(context.Cause(ctx), errCancelRequested):
		// Canceled before a connection was made (or while a refusal was
		// waited out): nothing reached the server, and the record says so.
		notSent := send && (out.NotSent() || unsent)
		update(func(x *store.Record) {
			if notSent {
				x.State, x.SentAt = store.Queued, nil
			}
			markCanceled(x, r.now())
		})
		r.st.ClearCancel(id)
		r.logf("%s: canceled on request", id)
		r.audit(current())
		return current(), nil
	case ctx.Err() != nil && (out.NotSent() || unsent):
		// The wait ended before a connection was even made, or while the
		// server's refusal was being waited out: nothing left, so the task
		// goes back to queued, text included, and the next worker sends it
		// (once).
		update(func(x *store.Record) {
			x.State, x.Message, x.SentAt = store.Queued, text, nil
		})
		r.logf("%s: handed off before sending; back to queued", id)
		return current(), errHandedOff
	case ctx.Err() != nil:
		if cur := current(); cur.Target.Kind == store.TargetKibana && !cur.Target.NonBlocking && !cur.ConnectionLost {
			// This process's connection carried the blocking send: it
			// ends with the hand-off.
			update(func(x *store.Record) { x.ConnectionLost = true })
		}
		cur := current()
		r.logf("%s: handed off in state %s", id, cur.State)
		return cur, errHandedOff
	case errors.Is(out.Err, client.ErrTaskGone) || errors.Is(out.Err, client.ErrNoTask):
		// Nothing left to follow: say so now rather than after the maximum
		// wait.
		update(func(x *store.Record) {
			finish(x, r.now(), store.Expired)
			x.Reason = oneLineErr(out.Err)
			x.LastError = errorInfo(out.Err)
			x.Lost = true
		})
		r.logf("%s: expired: %v", id, out.Err)
		r.audit(current())
		return current(), nil
	case dctx.Err() != nil:
		update(func(x *store.Record) {
			finish(x, r.now(), store.Expired)
			x.Reason = expiredReason(x)
			if out.Err != nil {
				x.LastError = errorInfo(out.Err)
			}
		})
		r.logf("%s: expired", id)
		r.audit(current())
		return current(), nil
	case client.IsKind(out.Err, client.KindAuth, client.KindForbidden):
		// Reading was refused and no answer is coming on the POST: the task
		// stays open (a fixed key may read it with fetch), reported as such.
		update(func(x *store.Record) { x.LastError = errorInfo(out.Err) })
		r.logf("%s: stopped: %v", id, out.Err)
		return current(), out.Err
	case errors.Is(out.Err, client.ErrReplyTooLarge):
		// The conversation is larger than a2a-courier reads, and it only
		// grows: no reply can ever be read back, here or by fetch.
		update(func(x *store.Record) {
			finish(x, r.now(), store.Expired)
			x.Reason = "the conversation is larger than a2a-courier reads (256 MiB): its reply cannot be read back: " + oneLineErr(out.Err)
			x.LastError = errorInfo(out.Err)
			x.Lost = true
		})
		r.logf("%s: lost: %v", id, out.Err)
		r.audit(current())
		return current(), nil
	default:
		// Nothing more can be read (a page that is not the server's, a
		// request it refuses): end it rather than leave it open for ever.
		update(func(x *store.Record) {
			finish(x, r.now(), store.Expired)
			x.Reason = "following the task stopped: " + oneLineErr(out.Err)
			x.LastError = errorInfo(out.Err)
		})
		r.logf("%s: expired: %v", id, out.Err)
		r.audit(current())
		return current(), nil
	}
}

// recordWriteError means the outcome is known but could not be written.
type recordWriteError struct{ err error }

func (e *recordWriteError) Error() string {
	return "the outcome could not be written to the task record: " + e.err.Error()
}
func (e *recordWriteError) Unwrap() error { return e.err }

// audit logs a task's final state: metadata only.
func (r *taskRunner) audit(rec *store.Record) {
	if rec == nil || !rec.State.Terminal() {
		return
	}
	e := store.AuditEntry{Command: r.command, Agent: rec.Agent, ContextID: rec.ContextID, MessageSize: rec.MessageSize,
		MessageSHA256: rec.MessageSHA256, State: string(rec.State), HTTPStatus: rec.HTTPStatus}
	if rec.SentAt != nil && rec.FinishedAt != nil {
		e.DurationMS = rec.FinishedAt.Sub(*rec.SentAt).Milliseconds()
	}
	if rec.Error != nil {
		e.Error = rec.Error.Kind
	}
	r.st.Audit(e)
}

// maxRecordReply is the largest reply kept in the record itself; a larger
// one goes to a file of its own in $STATE/replies/ (0600), named by the
// record, so that a record stays small to read, write and list.
const maxRecordReply = 4 << 20

// spilledReplyCut is how much of a reply kept in a file the output shows,
// unless --max-chars asks for less: the rest is in the file the marker
// names.
const spilledReplyCut = 1 << 20

// keepReply puts a reply in the record, or in its own file when it is over
// maxRecordReply.
func keepReply(st *store.Store, x *store.Record, reply string) error {
	x.ReplyFile, x.ReplyBytes = "", 0
	if len(reply) <= maxRecordReply {
		x.Reply = reply
		return nil
	}
	if st == nil {
		x.Reply = reply // shown once, kept nowhere
		return nil
	}
	file, err := st.WriteReply(x.ContextID, reply)
	if err != nil {
		return err
	}
	x.Reply, x.ReplyFile, x.ReplyBytes = "", file, len(reply)
	return nil
}

// markCanceled ends a task canceled with the cancel command.
func markCanceled(x *store.Record, now time.Time) {
	sent := x.State != store.Queued
	finish(x, now, store.Canceled)
	x.CanceledBy = "cancel"
	switch {
	case !sent:
		x.Reason = "canceled on request, before it was sent: nothing ran"
	case x.Target.Kind == store.TargetA2A:
		x.Reason = "canceled on request"
	case x.Path == pathTask:
		x.Reason = "canceled on request; Kibana cannot stop a Task Manager run over A2A (its tasks/cancel answers not cancelable), so it may still finish and `fetch` can read its reply"
	case !x.Target.NonBlocking && releaseAborts(x.Target):
		x.Reason = "canceled on request; its connection was closed, and this Kibana release stops a blocking run when its connection ends: no reply will be stored"
	default:
		x.Reason = "canceled on request; Agent Builder cannot stop a run, so it may still finish and `fetch` can read its reply"
	}
}

// releaseAborts reports whether a Kibana task was sent to a release that
// aborts a blocking send or stream when its connection ends (9.6,
// Serverless), as far as its status said.
func releaseAborts(t store.Target) bool {
	aborts, known := client.ServerInfo{Number: t.KibanaVersion, Flavor: t.KibanaFlavor}.AbortsOnDisconnect()
	return t.Kind == store.TargetKibana && known && aborts
}

// runLikelyAborted reports a Kibana task sent blocking to a release that
// aborts such a run with its connection, whose connection ended: its reply
// will most likely never come.
func runLikelyAborted(x *store.Record) bool {
	return x.Target.Kind == store.TargetKibana && !x.Target.NonBlocking && x.ConnectionLost && releaseAborts(x.Target)
}

// expiredReason says what a task that had no outcome within its maximum
// wait may still come to, as the release it was sent to behaves.
func expiredReason(x *store.Record) string {
	base := fmt.Sprintf("no reply within the maximum wait (%s)", time.Duration(x.MaxWait))
	switch {
	case x.Target.Kind == store.TargetA2A || x.Path == pathTask:
		return base + "; the server may still finish: look again with fetch"
	case x.Target.NonBlocking:
		// Sent blocking:false, but its task was never named here (the
		// answer was lost): a Task Manager run may go on.
		return base + "; the run may still be going on Kibana's Task Manager, but its task id was never recorded, so only the conversation can show its end (a failure cannot be seen there): look again with fetch"
	case runLikelyAborted(x):
		return base + "; its connection ended, and this Kibana release stops a blocking run when that happens (non_blocking is false), so the run most likely ended without a reply: send again to ask again"
	case releaseAborts(x.Target):
		return base + "; the server may still finish: look again with fetch"
	}
	return base + "; the server may still finish (look again with fetch), or the run failed: Kibana 9.2 to 9.5 store no failed run"
}

func finish(x *store.Record, now time.Time, st store.State) {
	t := now.UTC()
	x.State = st
	x.FinishedAt = &t
	x.Message = ""
	x.RetryAt = nil
}

// Sends the server refused (HTTP 429, or 503 with Retry-After) are sent again
// at most maxSendRetries times, each after the server's Retry-After, else
// after a backoff of about 1s, 2s, 4s (±20%, at most 30s); never after a wait
// longer than maxSendRetryWait, nor one that leaves less than
// sendRetryReserve of the time the command or the task may take.
const (
	maxSendRetries   = 3
	maxSendRetryWait = 60 * time.Second
	sendRetryReserve = time.Second
)

// sendRetryWait says how long to wait before sending again a message the
// server refused for the n-th time (n from 1), or why it is not sent again.
func sendRetryWait(err error, n int, now, deadline time.Time, hasDeadline bool) (time.Duration, string) {
	if n > maxSendRetries {
		return 0, fmt.Sprintf("refused %d times in a row", n)
	}
	ra := client.RetryAfterOf(err)
	wait := ra
	if wait <= 0 {
		wait = min(time.Second<<(n-1), 30*time.Second)
		wait = max(time.Duration(float64(wait)*(0.8+0.4*rand.Float64())), time.Second)
	}
	if wait > maxSendRetryWait {
		return 0, fmt.Sprintf("the server asked to retry after %s, longer than the %s a send waits", waitText(wait), waitText(maxSendRetryWait))
	}
	if left := deadline.Sub(now); hasDeadline && wait+sendRetryReserve > left {
		if ra > 0 {
			return 0, fmt.Sprintf("the server asked to retry after %s, more than the time left to wait (%s)", waitText(ra), waitText(max(left, 0)))
		}
		return 0, fmt.Sprintf("no time left to wait for another try (%s)", waitText(max(left, 0)))
	}
	return wait, ""
}

func errorInfo(err error) *store.ErrorInfo {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		info := &store.ErrorInfo{Kind: ce.Kind.String(), Message: ce.Error(), HTTPStatus: ce.StatusCode, RPCCode: ce.RPCCode}
		if ce.Kind == client.KindBusy {
			info.RetryAfterSeconds = wholeSeconds(ce.RetryAfter)
		}
		return info
	}
	return &store.ErrorInfo{Kind: "unexpected", Message: oneLineErr(err)}
}

// httpClients returns a function that gives one shared HTTP client per TLS
// setting, the same for the whole process: send's card read and its POST
// share a connection (one TLS handshake, not two), and a worker serving
// many tasks reuses connections.
func (a *App) httpClients() func(store.Target) (*http.Client, error) {
	a.clientsOnce.Do(func() { a.clients = a.newHTTPClients() })
	return a.clients
}

func (a *App) newHTTPClients() func(store.Target) (*http.Client, error) {
	var mu sync.Mutex
	cache := map[string]*http.Client{}
	return func(t store.Target) (*http.Client, error) {
		if a.p.HTTPClient != nil {
			return a.p.HTTPClient, nil
		}
		key := fmt.Sprintf("%s\x00%v", t.CAFile, t.Insecure)
		mu.Lock()
		defer mu.Unlock()
		if c := cache[key]; c != nil {
			return c, nil
		}
		tlsCfg, err := client.TLSConfig(t.CAFile, t.Insecure)
		if err != nil {
			return nil, err
		}
		c := client.NewHTTPClient(tlsCfg)
		cache[key] = c
		return c, nil
	}
}

// taskDoc is the --json document of send, send-async, result and fetch.
// Fields are only ever added.
type taskDoc struct {
	ContextID      string    `json:"context_id"`
	Agent          string    `json:"agent,omitempty"`
	State          string    `json:"state"`
	Reply          *string   `json:"reply,omitempty"`
	ReplyTruncated bool      `json:"reply_truncated,omitempty"`
	ReplyChars     int       `json:"reply_chars,omitempty"`
	ReplyFile      string    `json:"reply_file,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	Resume         string    `json:"resume,omitempty"`
	Answer         string    `json:"answer,omitempty"`
	LastError      *errorDoc `json:"last_error,omitempty"`
	TaskID         string    `json:"task_id,omitempty"`
	// Path is how a Kibana send went (task, blocking, stream), and
	// KibanaVersion and KibanaFlavor the release that decided it.
	Path          string `json:"path,omitempty"`
	KibanaVersion string `json:"kibana_version,omitempty"`
	KibanaFlavor  string `json:"kibana_build_flavor,omitempty"`
	// Note says how fetch chose the task when it had to choose.
	Note           string     `json:"note,omitempty"`
	ConversationID string     `json:"conversation_id,omitempty"`
	MessageID      string     `json:"message_id,omitempty"`
	CreatedAt      *time.Time `json:"created_at,omitempty"`
	FinishedAt     *time.Time `json:"finished_at,omitempty"`
	Error          *errorDoc  `json:"error,omitempty"`
}

// readingRefused reports a task left unfinished because reading its reply
// was refused (401, 403).
func readingRefused(rec *store.Record) bool {
	return !rec.State.Terminal() && rec.LastError != nil && (rec.LastError.Kind == "auth" || rec.LastError.Kind == "forbidden")
}

// answerPlaceholder stands for the answer in commands shown to people; a
// message that is this text was pasted without being filled in.
const answerPlaceholder = "<your answer>"

// answerCommand is the command that answers an agent's question, reading
// the answer from stdin ("-"): a document's command runs as it is, with no
// placeholder to fill in. asJSON adds --json (the command of a JSON
// document, read by programs).
func answerCommand(rec *store.Record, asJSON bool) string {
	var cmd string
	if rec.Target.Kind == store.TargetA2A {
		agent := shellQuote(rec.Target.Peer)
		if rec.Target.Peer == "" {
			agent = "--url " + shellQuote(rec.Target.URL)
		}
		cmd = fmt.Sprintf("a2a-courier send %s --task %s", agent, shellQuote(rec.TaskID))
	} else {
		cmd = fmt.Sprintf("a2a-courier send %s --context %s", shellQuote(rec.Agent), shellQuote(rec.ContextID))
	}
	if asJSON {
		cmd += " --json"
	}
	return cmd + " -"
}

// shellQuote makes a value safe to paste into a POSIX shell: commands in
// documents are run by assistants as they are.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+=,~", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resumeCommand is the exact command that continues a task.
func resumeCommand(rec *store.Record) string {
	if rec.Lost {
		return "" // nothing reads it back
	}
	if rec.State == store.Expired {
		return "a2a-courier fetch " + shellQuote(rec.ContextID)
	}
	if !rec.State.Terminal() {
		return "a2a-courier result " + shellQuote(rec.ContextID) + " --wait"
	}
	return ""
}

// exitCodeFor maps a record's state (and, for rejected tasks, the reason
// they were rejected) to the exit code table.
func exitCodeFor(rec *store.Record) int {
	switch rec.State {
	case store.Completed:
		return ExitOK
	case store.InputRequired:
		return ExitInputRequired
	case store.Failed, store.Canceled:
		return ExitTaskFailed
	case store.Expired:
		if rec.Lost {
			// Not "still running" as far as anyone can tell: waiting
			// longer cannot help.
			return ExitTaskFailed
		}
	case store.Rejected:
		// Refused before anything ran: the code of the refusal, from the
		// one table errors share (a rejection an agent reported as its
		// task's state has no error: 6).
		if rec.Error != nil {
			return exitFor(kindFromName(rec.Error.Kind), rec.Error.HTTPStatus, rec.Error.RPCCode)
		}
		return ExitTaskFailed
	}
	return ExitStillRunning
}

// recordDoc turns a record into the output document.
func recordDoc(rec *store.Record) taskDoc {
	d := taskDoc{
		ContextID: rec.ContextID, Agent: rec.Agent, State: string(rec.State), Reason: rec.Reason,
		Resume: resumeCommand(rec), MessageID: rec.MessageID, FinishedAt: rec.FinishedAt,
	}
	if rec.ContextID != "" && rec.Target.Kind != store.TargetA2A {
		// Only Agent Builder keeps a conversation under this id.
		d.ConversationID = client.ConversationIDForContext(rec.ContextID)
	}
	if created := rec.CreatedAt; !created.IsZero() {
		d.CreatedAt = &created
	}
	if rec.State == store.Completed || rec.State == store.InputRequired {
		reply := rec.Reply
		d.Reply = &reply
	}
	if rec.State == store.InputRequired {
		d.Answer = answerCommand(rec, true)
	}
	d.TaskID = rec.TaskID
	d.Path, d.KibanaVersion, d.KibanaFlavor = rec.Path, rec.Target.KibanaVersion, rec.Target.KibanaFlavor
	if rec.LastError != nil && !rec.State.Terminal() {
		d.LastError = &errorDoc{Code: rec.LastError.Kind, Message: rec.LastError.Message, RetryAfterSeconds: rec.LastError.RetryAfterSeconds}
	}
	if code := exitCodeFor(rec); code != ExitOK && code != ExitStillRunning && code != ExitInputRequired {
		ce := recordError(rec)
		d.Error = &errorDoc{Code: ce.code, Message: ce.message, Hint: ce.hint, RetryAfterSeconds: wholeSeconds(ce.retryAfter)}
	}
	return d
}

// recordError describes a failed, rejected or canceled task.
func recordError(rec *store.Record) *cliError {
	ce := &cliError{exit: exitCodeFor(rec)}
	what := map[store.State]string{store.Failed: "failed", store.Rejected: "was not accepted", store.Canceled: "was canceled", store.Expired: "is lost"}[rec.State]
	ce.message = fmt.Sprintf("task %s %s: %s", rec.ContextID, what, nonEmptyStr(rec.Reason, "no reason given"))
	ce.code = "task_" + string(rec.State)
	switch rec.State {
	case store.Failed:
		ce.hint = "the agent's run failed and nothing was stored; sending again starts a new run"
		if rec.Target.Kind == store.TargetA2A {
			ce.hint = "the agent's task failed; sending again starts a new run"
		}
	case store.Rejected:
		if rec.Error != nil {
			ce.code = rec.Error.Kind
			ce.message = fmt.Sprintf("task %s was not accepted: %s", rec.ContextID, rec.Error.Message)
			from := fromClientError(&client.Error{Kind: kindFromName(rec.Error.Kind), StatusCode: rec.Error.HTTPStatus, RPCCode: rec.Error.RPCCode, Message: rec.Error.Message})
			if rec.Target.Kind == store.TargetA2A {
				from = remoteHint(from)
			}
			ce.hint, ce.code = from.hint, from.code
		}
		if rec.Error != nil && rec.Error.Kind == "busy" {
			ce.retryAfter = time.Duration(rec.Error.RetryAfterSeconds) * time.Second
			ce.hint = busyHint(rec)
		}
		if ce.hint == "" {
			ce.hint = "nothing ran on the server; it is safe to send again"
		}
	case store.Expired:
		ce.code = "task_lost"
		ce.hint = "the agent can no longer show this task, so its reply cannot be read back; sending again runs the whole task again: ask before doing so"
	case store.Canceled:
		canceledBy := rec.CanceledBy
		if canceledBy == "" && strings.HasPrefix(rec.Reason, "canceled on request") {
			canceledBy = "cancel" // a record of a build before canceled_by
		}
		switch {
		case canceledBy == "":
			ce.hint = "the agent stopped the run on its side; sending again starts a new run"
		case rec.SentAt == nil && rec.MessageID != "":
			// (A task canceled by its id alone has no record of its send.)
			ce.hint = "nothing was sent, so nothing ran; sending again is safe"
		case rec.Target.Kind != store.TargetA2A && !rec.Target.NonBlocking && releaseAborts(rec.Target):
			ce.hint = "the run stopped with its connection; sending again starts a new run"
		case rec.Target.Kind != store.TargetA2A:
			ce.hint = "a2a-courier stopped following it; Agent Builder may still finish the run: `a2a-courier fetch " + rec.ContextID + "` reads its reply"
		default:
			ce.hint = "the task was canceled on request; sending again starts a new run"
		}
	}
	return ce
}

// busyHint says how long the server asked to wait, why the message was not
// sent again, and that it did not run (429, 503).
func busyHint(rec *store.Record) string {
	var b strings.Builder
	refused := "it refused the message for now (rate limit or overload)"
	if rec.Refusals > 1 {
		refused = fmt.Sprintf("it refused the message %d times in a row (rate limit or overload)", rec.Refusals)
	}
	secs := rec.Error.RetryAfterSeconds
	if secs <= 0 {
		b.WriteString("the server is busy or rate limiting: " + refused + " and nothing ran, so sending it again later is safe")
		return b.String()
	}
	wait := time.Duration(secs) * time.Second
	fmt.Fprintf(&b, "the server asked to retry after %s", waitText(wait))
	switch {
	case rec.Refusals == 0 || rec.Refusals > maxSendRetries:
		// Not sent again (an older record), or sent again as often as a
		// send is.
	case wait > maxSendRetryWait:
		fmt.Fprintf(&b, ", longer than the %s a send waits", waitText(maxSendRetryWait))
	default:
		b.WriteString(", more than the time left to wait")
	}
	b.WriteString("; " + refused + " and nothing ran, so sending it again after that is safe")
	return b.String()
}

func kindFromName(name string) client.Kind {
	k, _ := client.ParseKind(name)
	return k
}

func nonEmptyStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// reportRecord prints a record as the result of a command and returns the
// exit status as an error (nil for success).
func (a *App) reportRecord(rec *store.Record, maxChars int, st *store.Store) error {
	return a.reportRecordWith(rec, maxChars, st, docExtra{})
}

// docExtra is what fetch adds to a task's report.
type docExtra struct {
	// resume replaces the command that continues a task still running
	// (without a local record, result cannot).
	resume string
	// note says how the task was chosen.
	note string
}

func (a *App) reportRecordWith(rec *store.Record, maxChars int, st *store.Store, extra docExtra) error {
	pr := a.printer()
	doc := recordDoc(rec)
	doc.Note = extra.note
	if extra.resume != "" && doc.Resume != "" {
		doc.Resume = extra.resume
	}
	if extra.note != "" && !pr.json {
		pr.info("%s", extra.note)
	}
	if rec.ReplyFile != "" && doc.Reply != nil {
		// A reply too large for the record: the output shows its start,
		// and the file its whole.
		limit := spilledReplyCut
		if maxChars > 0 && maxChars < limit {
			limit = maxChars
		}
		prefix, total, err := readPrefix(rec.ReplyFile, limit)
		if err != nil {
			return fmt.Errorf("read the reply of task %s: %w", rec.ContextID, err)
		}
		doc.Reply = &prefix
		if total > limit {
			cut := prefix + fmt.Sprintf("\n[… reply cut at %d of %d characters; the whole reply is in %s]", limit, total, rec.ReplyFile)
			doc.Reply = &cut
			doc.ReplyTruncated = true
		}
		doc.ReplyChars, doc.ReplyFile = total, rec.ReplyFile
	} else if doc.Reply != nil && maxChars > 0 {
		if cut, file, total, err := cutText("reply", *doc.Reply, maxChars, rec.ContextID, st); err == nil && file != "" {
			doc.Reply = &cut
			doc.ReplyTruncated = true
			doc.ReplyChars = total
			doc.ReplyFile = file
		} else if err != nil {
			return err
		}
	}
	code := exitCodeFor(rec)
	if readingRefused(rec) && (st == nil || !st.Locked(rec.ContextID)) {
		// Nobody can read the reply with this credential: "still running"
		// would have a caller wait for ever.
		ce := fromClientError(&client.Error{Kind: kindFromName(rec.LastError.Kind), StatusCode: rec.LastError.HTTPStatus})
		ce.message = "reading the reply of task " + rec.ContextID + " was refused: " + rec.LastError.Message
		ce.hint += "; once fixed, `a2a-courier fetch " + rec.ContextID + "` reads the reply"
		if pr.json {
			doc.Error = &errorDoc{Code: ce.code, Message: ce.message, Hint: ce.hint}
			if err := pr.writeJSON(doc); err != nil {
				return err
			}
			return exitWith(ce.exit)
		}
		a.printError(ce)
		return exitWith(ce.exit)
	}
	if pr.json {
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(code)
	}
	switch {
	case rec.State == store.Completed:
		if *doc.Reply == "" {
			pr.warn("the agent's reply is empty")
		} else {
			pr.payload(*doc.Reply)
		}
		if pr.errTTY && rec.Agent != "" {
			// People see the handle on the conversation; programs have
			// --json, and a pipe stays clean.
			pr.info("context %s (continue with: a2a-courier send %s --context %s)", rec.ContextID, rec.Agent, rec.ContextID)
		}
	case rec.State == store.InputRequired:
		if *doc.Reply != "" {
			pr.payload(*doc.Reply)
		}
		pr.info("the agent needs input before it can finish (context %s).", rec.ContextID)
		pr.info("answer with (the answer on stdin): %s", answerCommand(rec, false))
	case code == ExitStillRunning && rec.State == store.Expired:
		pr.info("%s (context %s).", nonEmptyStr(rec.Reason, "no reply within the maximum wait; the server may still finish"), rec.ContextID)
		pr.info("look again later: %s", resumeCommand(rec))
	case code == ExitStillRunning && runLikelyAborted(rec):
		// non_blocking false on a release that aborts: the connection that
		// held the run is gone.
		pr.warn("%s has not answered, and its connection ended: this Kibana release stops a blocking run when that happens (non_blocking is false), so the reply will most likely never come (context %s).", rec.Agent, rec.ContextID)
		pr.info("a background worker still reads the conversation: %s", doc.Resume)
	case code == ExitStillRunning:
		pr.info("still running: %s has not answered yet (context %s, state %s). Nothing is lost.", rec.Agent, rec.ContextID, rec.State)
		if rec.LastError != nil {
			if secs := rec.LastError.RetryAfterSeconds; secs > 0 {
				pr.info("last problem: %s (the server asked to retry after %s)", rec.LastError.Message, waitText(time.Duration(secs)*time.Second))
			} else {
				pr.info("last problem: %s", rec.LastError.Message)
			}
		}
		pr.info("resume with: %s", doc.Resume)
	default:
		a.printError(recordError(rec))
	}
	return exitWith(code)
}

func exitWith(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}
