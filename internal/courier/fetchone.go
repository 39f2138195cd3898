package courier

import (
	"context"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// FetchQuery is what fetch reads from a generic A2A agent: a context's
// task (chosen: chooseTask), or a task by its id.
type FetchQuery struct {
	Target store.Target
	Key    client.Secret
	// Agent names the agent in a record made without a local one.
	Agent string
	// ContextID is the context to read; TaskID, when set, the task (its
	// context is then the task's).
	ContextID, TaskID string
	// State, for a context, reads its newest task in that state, whatever
	// the local record says.
	State string
	// Local is the local record of the context or task; nil when none.
	Local *store.Record
	// OutDir is where the reply's files go ("" beside the record).
	OutDir string
}

// Fetched is what Fetch read.
type Fetched struct {
	// FromRecord: the server has nothing to read for Local (never sent,
	// its context only names the record, or a final record whose task
	// cannot be read): Local is the answer. Else Task is the read.
	FromRecord bool
	Task       *FetchedTask
	// Local is the local record the read is for; nil when there is none,
	// or the task read belongs to another context.
	Local *store.Record
	// ContextID is the context of the task read ("" when the agent's is
	// not a plain id).
	ContextID string
	// Note says how the task was chosen among several.
	Note nextstep.Text
}

// Fetch reads a task of a generic agent without a worker and settles it
// (settleFetchedTask: a final outcome is written into the local record when
// it may be). It never sends anything. The errors of a context's read are
// chooseTask's (client.ErrNoTaskList, *NoTaskError), else the agent's.
func (c *Courier) Fetch(ctx context.Context, q FetchQuery) (*Fetched, error) {
	local := q.Local
	if q.TaskID == "" && q.State != "" {
		local = nil // the newest task in that state, whatever the record says
	}
	if local != nil && local.State == store.Queued {
		// Never sent (or an answer not sent yet): what the server shows is
		// not its outcome, and fetch never writes it.
		return &Fetched{FromRecord: true, Local: local}, nil
	}
	a, err := c.A2A(q.Target, q.Key)
	if err != nil {
		return nil, err
	}
	f := &Fetched{Local: local, ContextID: q.ContextID}
	taskID := q.TaskID
	if taskID == "" {
		choice, err := chooseTask(ctx, a, q.ContextID, local, q.State)
		switch {
		case choice.FromRecord:
			f.FromRecord = true
			return f, nil
		case err != nil:
			return nil, err
		}
		taskID, f.Note = choice.TaskID, choice.Note
	}
	res, err := a.GetTask(ctx, taskID)
	if err != nil {
		if local != nil && local.State.Terminal() && local.State != store.Expired {
			f.FromRecord = true // the outcome is here
			return f, nil
		}
		return nil, err
	}
	if q.TaskID != "" {
		f.ContextID, f.Local = taskContext(res, local)
	}
	f.Task, err = c.settleFetchedTask(TaskRead{Result: res, Local: f.Local, ContextID: f.ContextID, Agent: q.Agent,
		Target: q.Target, Key: q.Key, OutDir: q.OutDir})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// taskContext is the context of a task read by its id: the local record's
// when it is that context's (or names none the server knows), else the
// task's, without the local record; "" when that is not a plain id (not
// used in file names or commands).
func taskContext(res *client.SendResult, local *store.Record) (string, *store.Record) {
	ctxID := res.ContextID
	if local != nil && (ctxID == "" || ctxID == local.ContextID || local.LocalContext) {
		ctxID = local.ContextID
	} else {
		local = nil
	}
	if store.CheckContextID(ctxID) != nil {
		ctxID = ""
	}
	return ctxID, local
}
