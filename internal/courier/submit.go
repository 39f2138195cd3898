package courier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// readTimeout bounds the reads a submission makes before its record exists
// (the conversation's rounds, the task a message answers).
const readTimeout = 60 * time.Second

// Message is a new task as the caller resolved it (the configuration, the
// agent and its card are the caller's business): where it goes, with which
// credential, and what it says.
type Message struct {
	Agent  string
	Target store.Target
	Key    client.Secret
	// Path is how a send reaches a Kibana agent (nil for other agents).
	Path *Path
	// Text is the message, trimmed, valid UTF-8.
	Text         string
	PollInterval time.Duration
	MaxWait      time.Duration
	// ContextID continues a conversation (send --context); TaskID answers
	// a generic agent's task that asked for input (send --task).
	ContextID, TaskID string
	// Parts are files and data sent beside the text (Attach, CheckParts);
	// OutDir is where the reply's files go ("": beside the record).
	Parts  []client.Part
	OutDir string
	// Verbose: the caller asked for its requests to be shown (-v); a
	// worker that works on the task logs them (Record.Verbose).
	Verbose bool
}

// InFlightError refuses a message in a context whose previous message is
// not final yet: State is its state, empty when its lock is held.
type InFlightError struct {
	ContextID string
	State     store.State
}

func (e *InFlightError) Error() string {
	if e.State == "" {
		return "a message is already in flight in context " + e.ContextID
	}
	return fmt.Sprintf("a message is already in flight in context %s (state %s)", e.ContextID, e.State)
}

// NoConversationError refuses a follow-up (send --context) to a Kibana
// conversation that does not exist: a mistyped contextId would otherwise
// start a new, empty conversation, and the agent would never see the
// exchange the caller meant to continue. Nothing was sent.
type NoConversationError struct {
	ContextID, ConversationID string
}

func (e *NoConversationError) Error() string {
	return "Kibana has no conversation " + e.ConversationID + " to continue (contextId " + e.ContextID + "); nothing was sent"
}

// OtherAgentError refuses a follow-up to a Kibana conversation held by
// another agent: it would add a round to that agent's conversation.
// Nothing was sent.
type OtherAgentError struct {
	ContextID, Agent, ConversationAgent string
	// ConversationTarget is where the context's agent is, when this
	// machine has a record of it.
	ConversationTarget store.Target
}

func (e *OtherAgentError) Error() string {
	if strings.EqualFold(e.Agent, e.ConversationAgent) {
		where := e.ConversationTarget.URL
		if e.ConversationTarget.Kind == store.TargetA2A {
			where = e.ConversationTarget.Endpoint
		}
		if e.ConversationTarget.Space != "" {
			where += " (space " + e.ConversationTarget.Space + ")"
		}
		return "context " + e.ContextID + " is this machine's task with agent " + e.ConversationAgent + " at " + where + ", another server; nothing was sent"
	}
	return "the conversation of context " + e.ContextID + " is with agent " + e.ConversationAgent + ", not " + e.Agent + "; nothing was sent"
}

// FinishedTaskError refuses an answer to a task this machine knows has
// finished (completed, failed, or canceled after it was sent): the agent
// would refuse it, and the refused answer's record would stand in for the
// outcome the context has. Record is that task's record.
type FinishedTaskError struct {
	TaskID string
	Record *store.Record
}

func (e *FinishedTaskError) Error() string {
	return fmt.Sprintf("task %s is %s: it no longer asks a question, so there is nothing to answer; nothing was sent", e.TaskID, e.Record.State)
}

// Submit is the contextId-first flow up to the moment the message may
// leave: it names the message (messageId, and a new contextId or the one
// it continues), takes the record's lock and writes the record before
// anything is sent: queued, its text in it, for whoever sends it (send in
// the foreground, or a worker for send-async and for a send that stopped
// or died before its message left). The record goes to sending only once
// a connection to the server is made (Run's leaving), so a process that
// dies before then leaves a record the next worker sends, once. The
// caller holds the task's lock: it works on the task (Task.Run, or
// Task.Foreground with the hand-off rules) or hands it over (HandOff). While the worker timing is not sound (TimingErr) nothing
// is submitted.
func (c *Courier) Submit(ctx context.Context, m Message, command string) (*Task, error) {
	if c.TimingErr != nil {
		// No worker could take the task over: its record would wait for
		// one that never starts. Refused before anything is recorded.
		return nil, c.TimingErr
	}
	rec := &store.Record{
		MessageID: uuid.NewString(), Agent: m.Agent, Target: m.Target, Identity: identity(m.Target, m.Key), State: store.Queued,
		Message: m.Text, MessageSHA256: client.HashText(m.Text), MessageSize: len(m.Text),
		PollInterval: store.Duration(m.PollInterval), MaxWait: store.Duration(m.MaxWait),
		Parts: describeParts(m.Parts), OutDir: m.OutDir, Verbose: m.Verbose,
	}
	if m.Path != nil && !m.Path.NonBlocking {
		// A blocking:false send's path is what the server makes of it: a
		// task (9.6, Serverless), or the reply at the end (9.2 to 9.5
		// ignore it); the runner records which.
		rec.Path = m.Path.Name
	}
	if err := c.place(ctx, m, rec); err != nil {
		return nil, err
	}
	// Created on the clock that later says when it was sent.
	rec.CreatedAt = c.now().UTC()
	// The lock is taken before the record exists, so no worker can start
	// on it before this process decides who works on it.
	h, err := c.lockContext(ctx, rec.ContextID)
	if err != nil {
		return nil, err
	}
	// The parts' content waits in the spool for whoever sends the record;
	// the record keeps only what they are.
	if err := c.spoolParts(rec, m.Parts); err != nil {
		h.Release()
		return nil, err
	}
	if err := c.create(h, rec); err != nil {
		c.Store.RemoveSpool(rec.ContextID, rec.MessageID)
		h.Release()
		return nil, err
	}
	c.Store.Audit(store.AuditEntry{Command: command, Agent: rec.Agent, ContextID: rec.ContextID, MessageSize: rec.MessageSize,
		MessageSHA256: rec.MessageSHA256, State: string(rec.State)})
	return &Task{c: c, h: h, rec: rec, key: m.Key}, nil
}

// finalLockWait is how long a message to a context whose last exchange
// is final waits for the context's lock (lockContext).
const finalLockWait = 5 * time.Second

// lockContext takes the lock of the context a message goes to. Whoever
// ends an exchange (its worker, or the reader that wrote its outcome)
// writes the final state first and lets the lock go after, so a follow-up
// sent the moment result --wait has returned the reply may find the lock
// still held: while the context's record says its exchange is final, the
// lock is tried again for up to finalLockWait, instead of refusing a
// message that is not in flight. A record that is not final is refused
// at once: its message is in flight.
func (c *Courier) lockContext(ctx context.Context, id string) (*store.Handle, error) {
	deadline := time.Now().Add(finalLockWait)
	for {
		h, err := c.Store.Lock(id)
		if !errors.Is(err, store.ErrLocked) {
			return h, err
		}
		old, lerr := c.Store.Load(id)
		if lerr != nil || !old.State.Terminal() || !time.Now().Before(deadline) {
			return nil, &InFlightError{ContextID: id}
		}
		select {
		case <-ctx.Done():
			return nil, &InFlightError{ContextID: id}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// place chooses the record's contextId: a new one, or that of the
// conversation it continues (a Kibana conversation goes on after its last
// round), or of the task it answers (the task a generic agent asked a
// question in).
func (c *Courier) place(ctx context.Context, m Message, rec *store.Record) error {
	switch {
	case m.TaskID != "":
		if done := c.finishedTask(m); done != nil {
			return &FinishedTaskError{TaskID: m.TaskID, Record: done}
		}
		if _, err := c.checkContextAgent(m); err != nil {
			return err
		}
		rec.AnswersTask, rec.TaskID = m.TaskID, m.TaskID
		ctxID, question := c.contextOfTask(ctx, m)
		rec.ContextID, rec.Question = m.ContextID, question
		if rec.ContextID == "" {
			rec.ContextID = ctxID
		}
		if rec.ContextID == "" {
			// Unknown: the server infers it from the task; the record
			// still needs a name.
			rec.ContextID, rec.LocalContext = uuid.NewString(), true
		}
		return nil
	case m.ContextID == "":
		rec.ContextID, rec.FreshContext = uuid.NewString(), true
		return nil
	}
	rec.ContextID = m.ContextID
	local, err := c.checkContextAgent(m)
	if err != nil {
		return err
	}
	if m.Target.Kind != store.TargetKibana {
		return nil
	}
	// The reply is the first new round whose input matches the text sent.
	k, err := c.Kibana(m.Target, m.Key)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	convID := client.ConversationIDForContext(rec.ContextID)
	conv, err := k.GetConversation(rctx, convID)
	switch {
	case client.IsKind(err, client.KindNotFound):
		if local != nil {
			// This machine sent in the context: its message may not have
			// been stored yet (in flight, refused next) or never left.
			return nil
		}
		return &NoConversationError{ContextID: rec.ContextID, ConversationID: convID}
	case err != nil:
		return err
	case conv.AgentID() != "" && m.Agent != "" && !strings.EqualFold(conv.AgentID(), m.Agent):
		return &OtherAgentError{ContextID: rec.ContextID, Agent: m.Agent, ConversationAgent: conv.AgentID(), ConversationTarget: m.Target}
	}
	rec.RoundsBefore = conv.RoundCount()
	return nil
}

// finishedTask returns this machine's record of a task that has ended in
// a state that asks nothing, or nil: completed, failed or canceled (an
// earlier answer may have finished it). The task is the one of this
// endpoint (two agents may name their tasks alike), looked for in the live
// records and in the archived exchanges of their contexts and of the
// context the answer names.
func (c *Courier) finishedTask(m Message) *store.Record {
	recs, _ := c.Store.List()
	contexts := map[string]bool{}
	if m.ContextID != "" {
		contexts[m.ContextID] = true
	}
	for _, r := range recs {
		if r.TaskID != m.TaskID || !sameEndpoint(r.Target, m.Target) {
			continue
		}
		if taskFinished(r) {
			return r
		}
		contexts[r.ContextID] = true
	}
	for id := range contexts {
		for _, r := range c.Store.Archived(id) {
			if r.TaskID == m.TaskID && sameEndpoint(r.Target, m.Target) && taskFinished(r) {
				return r
			}
		}
	}
	return nil
}

// sameEndpoint: the two targets are one agent's endpoint.
func sameEndpoint(a, b store.Target) bool {
	if a.Kind != b.Kind || a.Space != b.Space {
		return false
	}
	if a.Kind == store.TargetA2A {
		// The card's endpoint: a peer's base URL and the card's own URL
		// name the same agent.
		return strings.TrimRight(a.Endpoint, "/") == strings.TrimRight(b.Endpoint, "/")
	}
	// A Kibana, however its URL is spelled (case, a trailing slash).
	return client.KibanaOrigin(strings.TrimRight(a.URL, "/")) == client.KibanaOrigin(strings.TrimRight(b.URL, "/")) &&
		strings.TrimRight(a.Endpoint, "/") == strings.TrimRight(b.Endpoint, "/")
}

// checkContextAgent refuses a message in a context this machine holds for
// another agent (another Kibana agent, the same agent of another Kibana or
// space, a generic agent): it would take that task's record over (records
// are named by contextId), and that agent's conversation would not be the
// one continued. It returns this machine's record of the context, if any.
func (c *Courier) checkContextAgent(m Message) (local *store.Record, _ error) {
	if m.ContextID == "" {
		return nil, nil
	}
	local, err := c.Store.Load(m.ContextID)
	if err != nil {
		return nil, nil
	}
	if !sameEndpoint(local.Target, m.Target) || m.Target.Kind == store.TargetKibana && !strings.EqualFold(local.Agent, m.Agent) {
		return nil, &OtherAgentError{ContextID: m.ContextID, Agent: m.Agent, ConversationAgent: local.Agent, ConversationTarget: local.Target}
	}
	return local, nil
}

// taskFinished: the record's task asks nothing any more. (An answer
// canceled before it was sent left the task asking.)
func taskFinished(r *store.Record) bool {
	return r.State == store.Completed || r.State == store.Failed || r.State == store.Canceled && r.SentAt != nil
}

// contextOfTask finds the contextId of the task a message answers and the
// question it asked: from a local record, else from the server. It returns
// "" for a context it cannot find.
func (c *Courier) contextOfTask(ctx context.Context, m Message) (string, string) {
	// Another agent's task or context of the same name is not it; of the
	// task's record and the context's, the newer.
	here := func(r *store.Record) bool { return sameEndpoint(r.Target, m.Target) }
	r, _ := store.FindTask(c.Store, m.TaskID, here)
	if m.ContextID != "" {
		if l, err := c.Store.Load(m.ContextID); err == nil && here(l) && (r == nil || l.CreatedAt.After(r.CreatedAt)) {
			r = l
		}
	}
	if r != nil {
		question := ""
		if r.State == store.InputRequired {
			question = r.Reply
		}
		return r.ContextID, question
	}
	if a, err := c.A2A(m.Target, m.Key); err == nil {
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		defer cancel()
		if res, err := a.GetTask(rctx, m.TaskID); err == nil && store.CheckContextID(res.ContextID) == nil {
			return res.ContextID, res.Text
		}
	}
	return "", ""
}

// create writes a new record; when continuing a conversation whose last
// exchange is final, that exchange's record is archived first.
func (c *Courier) create(h *store.Handle, rec *store.Record) error {
	c.Store.ClearCancel(rec.ContextID) // a marker of an earlier message never applies
	// A record in place whose directory could not be synced is created:
	// every reader sees it, a worker would send it (inPlace).
	err := c.inPlace(c.Store.Create(rec))
	if !errors.Is(err, store.ErrExists) {
		return err
	}
	old, lerr := h.Load()
	if lerr != nil {
		return lerr
	}
	if !old.State.Terminal() {
		return &InFlightError{ContextID: rec.ContextID, State: old.State}
	}
	if err := c.inPlace(h.Archive()); err != nil {
		return err
	}
	return c.inPlace(c.Store.Create(rec))
}
