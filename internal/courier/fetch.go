package courier

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// WriteFetched writes an outcome read from the server without a worker
// (fetch: its state, reply and reason, its task id into a record that has
// none) into the local record it was read for, when that may be written
// (FetchMayWrite) and, under its lock, the record is still the one that
// was read: the same message, still writable. A send may have put a new
// message in it meanwhile (queued, its text in it), or a worker finished
// it; a worker holding it is left to write it. It reports whether the
// record was written; an error is a write that failed.
func (c *Courier) WriteFetched(local, fetched *store.Record) (bool, error) {
	if c.Store == nil || !FetchMayWrite(local) {
		return false, nil
	}
	h, err := c.Store.Lock(local.ContextID)
	if err != nil {
		return false, nil
	}
	defer h.Release()
	_, err = h.Update(func(x *store.Record) error {
		if x.MessageID != local.MessageID || !FetchMayWrite(x) {
			return errRecordMoved
		}
		finish(x, c.now(), fetched.State)
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
	return err == nil, err
}

// FetchMayWrite reports whether an outcome read from the server may be
// written into a local record: one that is sent and not final, or
// expired. A queued record holds a message not sent yet (its text is in
// it): what the server shows is not its outcome.
func FetchMayWrite(local *store.Record) bool {
	return local != nil && local.State != store.Queued && (!local.State.Terminal() || local.State == store.Expired)
}

// errRecordMoved means a record changed between the read and the write.
var errRecordMoved = errors.New("the record changed while the server was read")

// TaskChoice is the task of a generic agent that fetch reads for a
// context.
type TaskChoice struct {
	TaskID string
	// Note says how the task was chosen among several.
	Note string
	// FromRecord: there is no task to read, and the local record is the
	// answer (it is final, or its context only names the record).
	FromRecord bool
}

// NoTaskError means the agent lists no task for the context (in the state
// asked for), or none holding the local record's message (WithMessage).
type NoTaskError struct {
	ContextID, State string
	WithMessage      bool
}

func (e *NoTaskError) Error() string {
	switch {
	case e.WithMessage:
		return "the agent lists no task holding the message of context " + e.ContextID
	case e.State != "":
		return "the agent lists no task in state " + e.State + " in context " + e.ContextID
	}
	return "the agent lists no task in context " + e.ContextID
}

// Hint says what to do, result naming the command that shows the local
// record.
func (e *NoTaskError) Hint(result string) string {
	if e.WithMessage {
		return "it may have answered with a message, which agents do not keep, or never received the request; " + result + " shows what this machine recorded"
	}
	return "check the contextId (those a2a-courier makes are UUIDs); an agent that answered with a message rather than a task keeps nothing to fetch: " + result + " shows it where it was sent"
}

// ChooseTask finds the task of a context that fetch reads from a generic
// agent: the local record's task, or the one holding its message (A2A 1.0
// ListTasks), or without a record (or with state, a task state to list)
// the context's newest task (in that state). Errors wrap
// client.ErrNoTaskList when the agent cannot list tasks (A2A 0.3), or are
// a *NoTaskError.
func ChooseTask(ctx context.Context, a *client.A2A, contextID string, local *store.Record, state string) (TaskChoice, error) {
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
		tasks, err := a.ContextTasks(ctx, contextID, true)
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
		return TaskChoice{}, &NoTaskError{ContextID: contextID, WithMessage: true}
	}
	tasks, err := a.Tasks(ctx, client.TaskFilter{ContextID: contextID, State: state})
	switch {
	case err != nil:
		return TaskChoice{}, err
	case len(tasks) == 0:
		return TaskChoice{}, &NoTaskError{ContextID: contextID, State: state}
	}
	choice := TaskChoice{TaskID: tasks[0].ID}
	if len(tasks) > 1 {
		of := "tasks"
		if state != "" {
			of = state + " tasks"
		}
		choice.Note = fmt.Sprintf("no local record of this task: took the newest of the %d %s of context %s (task %s); pass --task <taskId> for another", len(tasks), of, contextID, choice.TaskID)
	}
	return choice, nil
}
