package courier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// writeFetched writes an outcome read from the server without a worker
// (fetch: its state, reply and reason, its task id into a record that has
// none) into the local record it was read for, when that may be written
// (fetchMayWrite) and, under its lock, the record is still the one that
// was read: the same message, still writable. A send may have put a new
// message in it meanwhile (queued, its text in it), or a worker finished
// it; a worker holding it is left to write it. It reports whether the
// record was written; an error is a write that failed.
func (c *Courier) writeFetched(local, fetched *store.Record) (bool, error) {
	if c.Store == nil || !fetchMayWrite(local) {
		return false, nil
	}
	h, err := c.Store.Lock(local.ContextID)
	if errors.Is(err, store.ErrLocked) {
		return false, nil // a worker holds it, and writes it
	}
	if err != nil {
		return false, err
	}
	defer h.Release()
	_, err = h.Update(func(x *store.Record) error {
		if x.MessageID != local.MessageID || !fetchMayWrite(x) {
			return errRecordMoved
		}
		x.Finish(fetched.State, c.now())
		x.Reply, x.ReplyFile, x.ReplyBytes, x.ReplyParts = fetched.Reply, fetched.ReplyFile, fetched.ReplyBytes, fetched.ReplyParts
		x.Reason, x.Via, x.HTTPStatus = fetched.Reason, "fetch", 200
		if x.TaskID == "" {
			x.TaskID = fetched.TaskID
		}
		return nil
	})
	if errors.Is(err, errRecordMoved) {
		return false, nil
	}
	err = c.inPlace(err) // in place, not synced: written all the same
	return err == nil, err
}

// fetchMayWrite reports whether an outcome read from the server may be
// written into a local record: one that is sent and not final, or
// expired. A queued record holds a message not sent yet (its text is in
// it): what the server shows is not its outcome.
func fetchMayWrite(local *store.Record) bool {
	return local != nil && local.State != store.Queued && (!local.State.Terminal() || local.State == store.Expired)
}

// errRecordMoved means a record changed between the read and the write.
var errRecordMoved = errors.New("the record changed while the server was read")

// TaskChoice is the task of a generic agent that fetch reads for a
// context.
type TaskChoice struct {
	TaskID string
	// Note says how the task was chosen among several (the commands that
	// list the others and read another as steps).
	Note nextstep.Text
	// FromRecord: there is no task to read, and the local record is the
	// answer (it is final, or its context only names the record).
	FromRecord bool
}

// NoTaskError means the agent lists no task for the context (in the state
// asked for), or none holding the local record's message (WithMessage).
type NoTaskError struct {
	ContextID, State string
	WithMessage      bool
	// Cut: the listing stopped at its bound (the agent ignored the
	// filter, and has more tasks than were read).
	Cut bool
}

func (e *NoTaskError) Error() string {
	msg := "the agent lists no task in context " + e.ContextID
	switch {
	case e.WithMessage:
		msg = "the agent lists no task holding the message of context " + e.ContextID
	case e.State != "":
		msg = "the agent lists no task in state " + e.State + " in context " + e.ContextID
	}
	if e.Cut {
		msg += " among the tasks read, where the listing stops (the agent has more, and ignores the listing's filter)"
	}
	return msg
}

// Hint says what to do, result the step that shows the local record.
func (e *NoTaskError) Hint(result nextstep.Step) nextstep.Text {
	if e.WithMessage {
		return nextstep.Say("it may have answered with a message, which agents do not keep, or never received the request; %s shows what this machine recorded", result.Quoted())
	}
	return nextstep.Say("check the contextId (those a2a-courier makes are UUIDs); an agent that answered with a message rather than a task keeps nothing to fetch: %s shows it where it was sent", result.Quoted())
}

// chooseTask finds the task of a context that fetch reads from a generic
// agent: the local record's task, or the one holding its message (A2A 1.0
// ListTasks), or without a record (or with state, a task state to list)
// the context's newest task (in that state). Errors wrap
// client.ErrNoTaskList when the agent cannot list tasks (A2A 0.3), or are
// a *NoTaskError.
func chooseTask(ctx context.Context, a *client.A2A, contextID string, local *store.Record, state string) (TaskChoice, error) {
	settled := local != nil && local.State.Terminal() && local.State != store.Expired
	switch {
	case local != nil && state != "":
		local = nil // the newest task in that state, whatever the record says
	case local != nil && local.TaskID != "":
		return TaskChoice{TaskID: local.TaskID}, nil
	case local != nil && local.LocalContext:
		// The contextId only names the record: the server's is unknown.
		return TaskChoice{FromRecord: true}, nil
	case local != nil:
		l, err := a.TaskList(ctx, client.TaskFilter{ContextID: contextID, HistoryLength: client.TaskHistoryLength}, 0)
		tasks := l.Tasks
		switch {
		case errors.Is(err, client.ErrNoTaskList) && settled:
			return TaskChoice{FromRecord: true}, nil
		case err != nil:
			return TaskChoice{}, err
		}
		for _, t := range tasks {
			if slices.Contains(t.MessageIDs, local.MessageID) {
				return TaskChoice{TaskID: t.ID}, nil
			}
		}
		if settled {
			return TaskChoice{FromRecord: true}, nil
		}
		return TaskChoice{}, &NoTaskError{ContextID: contextID, WithMessage: true, Cut: l.More}
	}
	l, err := a.TaskList(ctx, client.TaskFilter{ContextID: contextID, State: state}, 0)
	tasks := l.Tasks
	switch {
	case err != nil:
		return TaskChoice{}, err
	case len(tasks) == 0:
		return TaskChoice{}, &NoTaskError{ContextID: contextID, State: state, Cut: l.More}
	}
	choice := TaskChoice{TaskID: tasks[0].ID}
	if len(tasks) > 1 || l.More {
		of := "tasks"
		if state != "" {
			of = state + " tasks"
		}
		listed := fmt.Sprintf("the %d %s of context %s", len(tasks), of, contextID)
		if l.More {
			// The listing stopped at its bound: the agent has more.
			listed = fmt.Sprintf("the %d %s of context %s read, where the listing stops (the agent has more)", len(tasks), of, contextID)
		}
		list := nextstep.New("tasks").Hole("--url", "agent URL").Flag("--context", contextID)
		another := nextstep.New("fetch").Hole("--task", "taskId").Hole("--url", "agent URL")
		choice.Note = nextstep.Say("no local record of this task: took the newest of %s (task %s); %s lists them, and %s reads another", listed, choice.TaskID, list.Quoted(), another.Quoted())
	}
	return choice, nil
}

// UnknownContextError means Kibana has no conversation for a contextId
// that no local record names and that cannot be one a2a-courier (or
// Kibana, or the SDK clients) made: those are UUIDs, so an unknown id of
// another form is far likelier a wrong handle than a run still going, and
// waiting for it would be endless.
type UnknownContextError struct {
	ContextID string
	// ConversationOf is set when the id is a conversation id
	// (a2a-<contextId>): the contextId it names.
	ConversationOf string
	Err            error
}

func (e *UnknownContextError) Error() string {
	return "Kibana has no conversation for context " + e.ContextID
}

func (e *UnknownContextError) Unwrap() error { return e.Err }

// UnreadableRoundError means the run of a context ended (its round is
// stored) and what it answered cannot be read: lost, as a worker that read
// it so would say.
type UnreadableRoundError struct{ ContextID, Why string }

func (e *UnreadableRoundError) Error() string {
	return "the round Kibana stored for context " + e.ContextID + " cannot be read: " + e.Why
}

// KibanaRead is what fetch read of a context from Kibana.
type KibanaRead struct {
	// Conv is the context's conversation; nil when Kibana has none.
	Conv *client.Conversation
	// Found: an outcome was read, and Record holds it (its reply kept as a
	// worker keeps one, its times the server's). Else Record is the local
	// record, or without one a working record of the context whose start
	// is unknown.
	Found  bool
	Record *store.Record
	// TaskNote says what Kibana's task said, when it was asked and had no
	// outcome.
	TaskNote string
	// WriteErr: the outcome was read, but the local record could not be
	// updated with it.
	WriteErr error
}

// FetchKibana reads the outcome of a context's round from Kibana's
// conversation store (k, in the local record's space when sameKibana): the
// local record's round, by its hash and round count, else the first. A
// Task Manager run of a record sent to this Kibana is asked too (tasks/get):
// on 9.6 it is the authority on the run, and alone sees a failure, which
// the conversation never shows. An outcome found is written into the local
// record when it may be (writeFetched). It never sends anything.
//
// Errors: an *UnknownContextError for an id Kibana does not know that
// cannot be a2a-courier's, an *UnreadableRoundError for a stored round that
// cannot be read, or the read's.
func (c *Courier) FetchKibana(ctx context.Context, k *client.Kibana, contextID string, local *store.Record, sameKibana bool) (*KibanaRead, error) {
	conv, out, found, err := readConversation(ctx, k, contextID, local)
	if err != nil {
		return nil, err
	}
	if !found && out.Malformed() != "" {
		return nil, &UnreadableRoundError{ContextID: contextID, Why: out.Malformed()}
	}
	read := &KibanaRead{Conv: conv}
	if !found && sameKibana && local.TaskID != "" && local.State != store.Queued && (local.Path == PathTask || local.Target.NonBlocking) {
		out, found, read.TaskNote = readKibanaTask(ctx, k, local)
	}
	rec := local
	if rec == nil {
		// Its start is unknown until the conversation says: created_at is
		// left out, never the time of this fetch.
		rec = &store.Record{ContextID: contextID, State: store.Working}
		if conv != nil {
			rec.Agent = conv.AgentID()
		}
	}
	if read.Record, read.Found = rec, found; !found {
		return read, nil
	}
	result := rec.As(store.State(out.State))
	result.Reason = out.Reason
	if err := keepReply(c.Store, &result, out.Reply); err != nil {
		return nil, fmt.Errorf("keep the reply of context %s: %w", contextID, err)
	}
	// Times come from the server's document, not from this fetch (none
	// when the outcome came from the task alone).
	result.FinishedAt = nil
	if conv != nil {
		if t, ok := serverTime(conv.UpdatedAt()); ok {
			result.FinishedAt = t
		}
		if t, ok := serverTime(conv.CreatedAt()); ok && local == nil {
			result.CreatedAt = *t
		}
	}
	store.BoundFreeText(&result) // as a record keeps it
	read.Record = &result
	_, read.WriteErr = c.writeFetched(local, &result)
	return read, nil
}

// serverTime parses a time a server wrote, in UTC.
func serverTime(s string) (*time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, false
	}
	t = t.UTC()
	return &t, true
}

// readConversation reads the conversation of a context and the outcome of
// its round. A conversation Kibana does not have is no error (conv nil),
// but for an id that cannot be a2a-courier's.
func readConversation(ctx context.Context, k *client.Kibana, contextID string, local *store.Record) (*client.Conversation, client.Outcome, bool, error) {
	conv, err := k.GetConversation(ctx, client.ConversationIDForContext(contextID))
	switch {
	case err == nil:
		var out client.Outcome
		found := false
		if local != nil && local.MessageSHA256 != "" {
			out, found = conv.Outcome(local.MessageSHA256, local.RoundsBefore, local.FreshContext)
		} else {
			out, found = conv.Outcome("", 0, true)
		}
		out.Reply, out.Reason = k.RedactText(out.Reply), k.RedactText(out.Reason)
		return conv, out, found, nil
	case !client.IsKind(err, client.KindNotFound):
		return nil, client.Outcome{}, false, err
	case local == nil && !IsUUID(contextID):
		ue := &UnknownContextError{ContextID: contextID, Err: err}
		ue.ConversationOf, _ = ContextOfConversationID(contextID)
		return nil, client.Outcome{}, false, ue
	}
	return nil, client.Outcome{}, false, nil
}

// readKibanaTask asks Kibana's task of a local record (tasks/get). note
// says what the task said when it has no outcome.
func readKibanaTask(ctx context.Context, k *client.Kibana, local *store.Record) (out client.Outcome, found bool, note string) {
	o := client.DeliverOptions{AgentID: local.Agent, Message: client.OutgoingMessage{ContextID: local.ContextID},
		InputSHA256: local.MessageSHA256, RoundsBefore: local.RoundsBefore, FreshContext: local.FreshContext}
	tout, state, final, err := k.ReadTask(ctx, o, local.TaskID)
	switch {
	case err != nil:
		return out, false, "reading its task " + local.TaskID + " failed: " + OneLine(err)
	case final:
		return tout, true, ""
	}
	if state == "" {
		state = "in an unknown state"
	}
	note = "Kibana's task " + local.TaskID + " is " + state
	if state == "completed" {
		note += ", with no text and no round stored yet (a confirmation prompt?)"
	}
	return out, false, note
}

// ContextOfConversationID is the contextId a Kibana conversation id of an
// A2A run names (a2a-<contextId>, the contextId a UUID): a caller who gave
// the conversation's id where its contextId belongs is told which.
func ContextOfConversationID(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "a2a-")
	if !ok || !IsUUID(rest) {
		return "", false
	}
	return rest, true
}

// IsUUID reports whether id is a UUID in its usual 36-character form.
func IsUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	_, err := uuid.Parse(id)
	return err == nil
}

// TaskRead is a task fetch read from a generic agent, and what it is read
// for.
type TaskRead struct {
	Result *client.SendResult
	// Local is the local record of the task, nil when there is none.
	Local *store.Record
	// ContextID, Agent and Target name the task in a record made without a
	// local one; Key is redacted from what the agent said.
	ContextID, Agent string
	Target           store.Target
	Key              client.Secret
	// OutDir is where the reply's files go ("" beside the record).
	OutDir string
}

// FetchedTask is the record of a task read from a generic agent.
type FetchedTask struct {
	Record *store.Record
	// Final: the task's outcome is final (and kept); else Record says it
	// is working, and why.
	Final bool
	// WriteErr: the outcome was read, but the local record could not be
	// updated with it.
	WriteErr error
}

// settleFetchedTask makes the record of a task read from a generic agent:
// a final outcome, its reply and files kept as a worker keeps them, its
// time the server's, is written into the local record when it may be
// (writeFetched). A task still asking the question that the local record's
// message answers has not taken the answer in yet: it is not final.
func (c *Courier) settleFetchedTask(t TaskRead) (*FetchedTask, error) {
	res, local := t.Result, t.Local
	if local == nil || !local.LocalContext {
		// A task that names another context is not this one's (a record
		// of a local context names none the server knows).
		if err := client.CheckContext("read the task", t.ContextID, res); err != nil {
			return nil, err
		}
	}
	out, final := res.Outcome()
	out.Reply, out.Reason = client.RedactCredential(out.Reply, t.Key), client.RedactCredential(out.Reason, t.Key)
	if final && local != nil && local.AnswersTask != "" && local.AnswersTask == res.TaskID && !local.State.Terminal() &&
		out.State == client.StateInputRequired && out.Reply == local.Question {
		final = false
	}
	// Without a local record the task's start is unknown (A2A tasks carry
	// no creation time): created_at is left out.
	rec := &store.Record{ContextID: t.ContextID, Agent: t.Agent, Target: t.Target, State: store.Working}
	if local != nil {
		cp := *local
		rec = &cp
	}
	if client.ValidID(res.TaskID) {
		rec.TaskID = res.TaskID
	}
	if !final {
		state := res.State
		if state == "" {
			state = "in an unknown state"
		}
		*rec = rec.As(store.Working)
		rec.Reason = "the task is " + state + " on the agent"
		store.BoundFreeText(rec)
		return &FetchedTask{Record: rec}, nil
	}
	*rec = rec.As(store.State(out.State))
	rec.Reason, rec.Error = out.Reason, nil
	dir, err := OutDir(t.OutDir)
	if err == nil && dir != "" {
		rec.OutDir = dir
	}
	if err == nil {
		err = errors.Join(keepReply(c.Store, rec, out.Reply), keepReplyParts(c.Store, rec, out.Parts))
	}
	if err != nil {
		return nil, fmt.Errorf("keep the reply of task %s: %w", rec.TaskID, err)
	}
	now := c.now().UTC()
	rec.FinishedAt = &now
	if ts, ok := serverTime(res.Timestamp); ok {
		rec.FinishedAt = ts // the server's time, not this fetch's
	}
	store.BoundFreeText(rec) // as a record keeps it
	f := &FetchedTask{Record: rec, Final: true}
	_, f.WriteErr = c.writeFetched(local, rec)
	return f, nil
}
