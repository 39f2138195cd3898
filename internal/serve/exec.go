package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client/wire"
	"github.com/a2a-courier/a2a-courier/internal/runner"
)

// apiError is an A2A error, as either binding carries it.
type apiError struct {
	code   int    // JSON-RPC code
	reason string // google.rpc.ErrorInfo reason
	http   int    // HTTP status (HTTP+JSON; JSON-RPC answers 200 but for busy)
	msg    string
	retry  int // Retry-After seconds, busy only
}

func (e *apiError) Error() string { return e.msg }

func errNotFound(id string) *apiError {
	return &apiError{-32001, "TASK_NOT_FOUND", http.StatusNotFound, "task " + id + " not found", 0}
}

func errInvalid(msg string) *apiError {
	return &apiError{-32602, "INVALID_PARAMS", http.StatusBadRequest, msg, 0}
}

func errUnsupported(msg string) *apiError {
	return &apiError{-32004, "UNSUPPORTED_OPERATION", http.StatusBadRequest, msg, 0}
}

func errInternal(msg string) *apiError {
	return &apiError{-32603, "INTERNAL_ERROR", http.StatusInternalServerError, msg, 0}
}

// errBusy is the answer past --concurrency: no task is made, nothing runs;
// the caller sends again after the hint.
func (s *Server) errBusy() *apiError {
	secs := int(s.opts.RetryAfter / time.Second)
	return &apiError{-32050, "BUSY", http.StatusServiceUnavailable,
		fmt.Sprintf("the agent is busy with %d run(s); nothing was run: send again in %d s", s.opts.Concurrency, secs), max(secs, 1)}
}

// sendRequest is a send, read from either binding.
type sendRequest struct {
	caller  string
	binding string
	msg     wire.Message
	bytes   int
	// blocking: wait (up to --response-window) for the end.
	blocking      bool
	historyLength int
}

// start makes the task of a message and starts its command, or returns
// the task the same message made before. Nothing runs past --concurrency.
func (s *Server) start(req sendRequest) (snapshot, *apiError) {
	text, files := messageInput(req.msg)
	sum := sha256.Sum256([]byte(text))
	entry := auditEntry{Caller: req.caller, Op: "send", Binding: req.binding, Bytes: req.bytes, SHA256: hex.EncodeToString(sum[:]), Files: len(files)}
	if e := s.checkFollowUp(req); e != nil {
		entry.Outcome = "refused: " + e.reason
		s.audit.write(entry)
		return snapshot{}, e
	}
	select {
	case s.slots <- struct{}{}:
	default:
		if snap, ok := s.tasks.byMessageID(req.caller, req.msg.ID); ok {
			return snap, nil
		}
		entry.Outcome, entry.Status = "busy", http.StatusServiceUnavailable
		s.audit.write(entry)
		return snapshot{}, s.errBusy()
	}
	now := s.now().UTC()
	rec := record{ID: uuid.NewString(), ContextID: nonEmpty(req.msg.ContextID, uuid.NewString()), Caller: req.caller,
		MessageID: req.msg.ID, State: wire.StateWorking, Created: now, Updated: now, Input: text, Files: len(files)}
	x, existing, err := s.tasks.create(rec)
	if err != nil || existing {
		<-s.slots
		if existing {
			return x.snapSafe(s.tasks), nil
		}
		if err == errContextTaken {
			return snapshot{}, errInvalid("the contextId belongs to another caller: leave it out or choose another")
		}
		return snapshot{}, errInternal("the task could not be recorded, so it was not run")
	}
	entry.Task, entry.Context, entry.Outcome = rec.ID, rec.ContextID, "started"
	s.audit.write(entry)
	fmt.Fprintf(s.opts.Log, "serve: task %s started for %s (%d bytes, %d file(s))\n", rec.ID, req.caller, len(text), len(files))
	ctx, cancel := context.WithCancel(s.runs)
	s.tasks.setCancel(rec.ID, cancel)
	snap := x.snapSafe(s.tasks)
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		s.execute(ctx, cancel, rec, text, files)
	}()
	return snap, nil
}

// checkFollowUp refuses a message that names a task: this agent's tasks
// end when their command does, so none takes more input.
func (s *Server) checkFollowUp(req sendRequest) *apiError {
	if len(req.msg.Parts) == 0 {
		return errInvalid("the message has no parts")
	}
	if req.msg.ID == "" {
		return errInvalid("the message has no messageId")
	}
	if e := checkParts(req.msg.Parts); e != nil {
		return e
	}
	if c := req.msg.ContextID; c != "" && !validContextID(c) {
		return errInvalid(fmt.Sprintf("the contextId (%d bytes) is not 1 to %d printable characters without spaces: leave it out, or use a UUID", len(c), maxContextID))
	}
	if req.msg.TaskID == "" {
		return nil
	}
	if snap, ok := s.tasks.get(req.caller, req.msg.TaskID); ok {
		if snap.rec.MessageID == req.msg.ID {
			return nil
		}
		return errUnsupported("task " + req.msg.TaskID + " takes no further messages (it is " + snap.rec.State + "): send a new message without taskId")
	}
	return errNotFound(req.msg.TaskID)
}

// checkParts refuses a file part that could not be read whole (its
// Problem: bad base64, say), which would reach the command as an empty or
// cut file, and a file given by URL, which serve does not fetch.
func checkParts(parts []wire.Part) *apiError {
	for i, p := range parts {
		if p.Kind != wire.PartFile {
			continue
		}
		if p.Problem != "" {
			return errInvalid(fmt.Sprintf("the file part %d (%q) cannot be read: %s; send its bytes in base64", i+1, oneLine(p.Name), oneLine(p.Problem)))
		}
		if p.URL != "" {
			return errInvalid(fmt.Sprintf("the file part %d (%q) is given by URL, which this agent does not fetch: send its bytes instead", i+1, oneLine(p.Name)))
		}
	}
	return nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// maxContextID is the longest contextId serve takes.
const maxContextID = 128

// validContextID: 1 to maxContextID printable ASCII characters, no space;
// it reaches the command's environment (A2A_CONTEXT_ID) and the log.
func validContextID(c string) bool {
	if len(c) == 0 || len(c) > maxContextID {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] <= ' ' || c[i] > '~' {
			return false
		}
	}
	return true
}

// messageInput is a message's text (its text parts, a line each) and its
// files.
func messageInput(m wire.Message) (string, []runner.File) {
	var texts []string
	var files []runner.File
	for _, p := range m.Parts {
		switch p.Kind {
		case wire.PartText:
			texts = append(texts, p.Text)
		case wire.PartFile:
			// checkParts refused a file by URL or one not read whole.
			files = append(files, runner.File{Name: p.Name, Bytes: p.Bytes})
		case wire.PartData:
			texts = append(texts, string(p.Data))
		}
	}
	return strings.Join(texts, "\n"), files
}

// execute runs the task's command and records its end, once.
func (s *Server) execute(ctx context.Context, cancel context.CancelFunc, rec record, text string, files []runner.File) {
	defer cancel()
	res := s.run.Run(ctx, runner.Job{
		Argv: s.argv, Stdin: []byte(text), Files: files, Timeout: s.opts.Timeout,
		Env:      map[string]string{"A2A_CONTEXT_ID": rec.ContextID, "A2A_TASK_ID": rec.ID, "A2A_CALLER": rec.Caller},
		OnStatus: func(line string) { s.tasks.setStatus(rec.ID, line) },
		OnStart: func(st runner.Started) {
			if err := s.tasks.started(rec.ID, st); err != nil {
				fmt.Fprintf(s.opts.Log, "serve: task %s: its process group could not be recorded: %v\n", rec.ID, err)
			}
		},
	})
	stopped := res.State == runner.Canceled && s.runs.Err() != nil
	// The slot is free before the end is told: a caller told of the end
	// may send again at once.
	<-s.slots
	err := s.tasks.finish(rec.ID, func(r *record) {
		r.State, r.Reason, r.Updated = res.State, res.Reason, s.now().UTC()
		if stopped {
			r.State, r.Reason = wire.StateFailed, StoppedReason
		}
		r.Reply = res.Reply
		if res.Output != nil {
			if err := s.tasks.writeOutput(r.ID, res.Output); err != nil {
				r.State, r.Reason = wire.StateFailed, "the reply could not be kept: "+err.Error()
			} else {
				r.OutputBytes = len(res.Output)
			}
		}
		code := res.ExitCode
		r.ExitCode = &code
		r.Pid, r.Pgid, r.RunDir = 0, 0, ""
	})
	if err != nil {
		fmt.Fprintf(s.opts.Log, "serve: task %s ended %s but its record could not be written: %v\n", rec.ID, res.State, err)
	}
	code := res.ExitCode
	s.audit.write(auditEntry{Caller: rec.Caller, Op: "run", Task: rec.ID, Context: rec.ContextID, Outcome: res.State, Exit: &code, Bytes: int(res.StdoutBytes)})
	fmt.Fprintf(s.opts.Log, "serve: task %s %s (exit %d, %d bytes out, %d status lines)\n", rec.ID, res.State, res.ExitCode, res.StdoutBytes, res.StderrLines)
}

// wait waits until the task ends, the window passes or ctx ends, and
// returns the task as it then is.
func (s *Server) wait(ctx context.Context, caller string, snap snapshot, window time.Duration) snapshot {
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-snap.done:
	case <-t.C:
	case <-ctx.Done():
	}
	if now, ok := s.tasks.get(caller, snap.rec.ID); ok {
		return now
	}
	return snap
}

// wireTask is the task as the protocol shows it; a large output is read
// from its file.
func (s *Server) wireTask(snap snapshot) wire.Task {
	var out []byte
	if snap.rec.OutputBytes > 0 {
		var err error
		if out, err = s.tasks.output(snap.rec.ID); err != nil {
			snap.rec.Reason = "the reply's file cannot be read: " + err.Error()
			snap.rec.State = wire.StateFailed
		}
	}
	return wireTask(snap, out)
}

func wireTask(snap snapshot, output []byte) wire.Task {
	r := snap.rec
	t := wire.Task{ID: r.ID, ContextID: r.ContextID, State: r.State, Timestamp: r.Updated.UTC().Format("2006-01-02T15:04:05.000Z")}
	if r.Input != "" || r.Files > 0 {
		t.History = []wire.Message{{ID: r.MessageID, Role: "user", ContextID: r.ContextID, TaskID: r.ID, Parts: []wire.Part{wire.TextPart(r.Input)}}}
	}
	status := ""
	switch {
	case r.State == wire.StateWorking:
		status = snap.status
	case r.State != wire.StateCompleted:
		status = r.Reason
	}
	if status != "" {
		t.Status = &wire.Message{ID: r.ID + "-status", Role: "agent", ContextID: r.ContextID, TaskID: r.ID, Parts: []wire.Part{wire.TextPart(status)}}
	}
	switch {
	case output != nil && r.State == wire.StateCompleted:
		t.Artifacts = []wire.Artifact{{ID: "output", Name: "output", Parts: []wire.Part{
			wire.TextPart(fmt.Sprintf("The reply is %d bytes long: it is in the file stdout.txt.", len(output))),
			wire.FilePart("stdout.txt", "text/plain", output)}}}
	case r.State == wire.StateCompleted:
		t.Artifacts = []wire.Artifact{{ID: "reply", Name: "reply", Parts: []wire.Part{wire.TextPart(trimNewline(r.Reply))}}}
	}
	return t
}

// trimNewline drops the one line end a command's output ends with, as a
// shell's $(…) does.
func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// end gives a served task's record its final state and reason, at. (A
// served task's record is serve's own, not the store's: the store's
// records change state only through their transitions, which
// TestStateChangesOnlyThroughTransitions holds for every file importing
// the store, tasks.go among them.)
func (r *record) end(state, reason string, at time.Time) {
	r.State, r.Reason, r.Updated = state, reason, at
}
