package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// summary is the short text beside the document: the reply, or the state
// and what to do next, or the error and its hint. tool is the tool that
// ran (what to call next depends on it). The commands' own texts (an
// error, its hint, a reason) are in tool terms as the command said them
// to the server (nextstep.Caller.Tool); a reply is the agent's, as it is.
func (t *tools) summary(doc json.RawMessage, code int, tool string) string {
	var d taskSummary
	json.Unmarshal(doc, &d)
	switch {
	case d.Source == "local":
		return ledgerText(d.Rows)
	case d.Source == "remote":
		s := remoteText(d.Remote)
		if d.More {
			s += "\nthe agent has more: call tasks again with a larger limit, or with context_id or state"
		}
		return s
	case d.Tasks != nil:
		return resultsText(d)
	case d.Error != nil && code != exitOK:
		s := d.Error.Message
		if d.Error.Hint != "" {
			s += "\nhint: " + d.Error.Hint
		}
		return s
	case code == exitStillRunning:
		return t.stillRunningText(d, tool)
	case code == exitInputRequired:
		return askText(d)
	case d.State == "queued" && d.ContextID != "":
		return fmt.Sprintf("task started in the background (context %s); call the result tool with context_id %q and wait_seconds to get the reply.", d.ContextID, d.ContextID)
	case d.Reply != "":
		return d.Reply
	case d.State != "" && d.ContextID != "":
		// A final state with no reply (canceled, say): the state and why.
		s := fmt.Sprintf("task %s: %s", d.ContextID, d.State)
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		return s
	}
	return string(doc)
}

// stillRunningText says what to do about a task with no final state yet.
// fetch (or a document whose resume command is fetch) is followed by fetch
// again: the server has no reply yet, and result would know nothing of a
// task of another machine. "Nothing is lost" only when this machine holds
// the task's record: a contextId fetch was given may simply be wrong, and
// not of a task whose document has a note to say instead (a failure of
// its run would leave no trace; its worker stopped).
func (t *tools) stillRunningText(d taskSummary, tool string) string {
	local := t.hasRecord(d.ContextID, tool)
	if tool == "fetch" || strings.HasPrefix(d.Resume, "a2a-courier fetch ") {
		s := fmt.Sprintf("no reply on the server yet (context %s, state %s)", d.ContextID, d.State)
		if d.Reason != "" {
			s += ": " + d.Reason
		}
		s += ". Call the fetch tool again with the same arguments later, a few times; if it stays so, tell the user. Do not send the message again."
		if local {
			s += fmt.Sprintf(" Nothing is lost: this machine has the task's record; the result tool with context_id %q follows it.", d.ContextID)
		}
		return s
	}
	s := fmt.Sprintf("still running (context %s, state %s): the task goes on in a background worker. ", d.ContextID, d.State)
	next := fmt.Sprintf("call the result tool with context_id %q later; do not send the message again. With wait_seconds, result waits for the reply.", d.ContextID)
	switch {
	case d.Note != "":
		// What the record says of it (a failure that would leave no
		// trace, a worker that stopped): not "nothing is lost".
		return s + sentence(d.Note) + ". " + sentence(next)
	case local:
		return s + "Nothing is lost: " + next
	}
	return s + sentence(next)
}

// sentence is s as the start of a sentence: its first letter a capital
// ("no reply yet; …" after a full stop is "No reply yet; …").
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// hasRecord reports whether this machine holds a task's record: asked of
// Options.HasRecord; without it, a task send or result reported has one.
func (t *tools) hasRecord(contextID, tool string) bool {
	if contextID == "" {
		return false
	}
	if t.o.HasRecord != nil {
		return t.o.HasRecord(contextID)
	}
	return tool != "fetch"
}

// askText is the text of a task whose agent asks a question: the question,
// and the send tool's arguments that answer it, read from the document's
// answer command. A Kibana agent is answered in its context (context_id),
// a generic A2A agent on its task (task_id, with the same url or peer):
// answering a generic agent by context_id starts a new task, which asks
// again.
func askText(d taskSummary) string {
	route := answerRoute(d.Answer)
	if route == "" {
		route = fmt.Sprintf("agent %q, context_id %q", d.Agent, d.ContextID)
	}
	return fmt.Sprintf("the agent asks (context %s): %s\nAnswer with the send tool: %s, the user's answer as message.", d.ContextID, d.Reply, route)
}

// answerRoute turns an answer command ("a2a-courier send --url U --task T
// --json -", "a2a-courier send audit-agent --context C --json -") into the
// send tool's arguments (`url "U", task_id "T"`), or "" when it is not one.
func answerRoute(answer string) string {
	words := shellWords(answer)
	if len(words) < 3 || words[0] != "a2a-courier" || words[1] != "send" {
		return ""
	}
	withValue := map[string]string{"--url": "url", "--task": "task_id", "--context": "context_id"}
	skipValue := map[string]bool{"--timeout": true, "--profile": true, "--kibana-url": true, "--space": true, "--api-key-file": true,
		"--token-file": true, "--poll-interval": true, "--max-wait": true, "--max-chars": true}
	var parts []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case withValue[w] != "" && i+1 < len(words):
			parts = append(parts, fmt.Sprintf("%s %q", withValue[w], words[i+1]))
			i++
		case skipValue[w]:
			i++
		case w == "-" || strings.HasPrefix(w, "-"):
		default:
			parts = append(parts, fmt.Sprintf("agent %q", w))
		}
	}
	if !strings.Contains(strings.Join(parts, " "), "_id ") {
		return ""
	}
	return strings.Join(parts, ", ")
}

// shellWords splits a command as the CLI's documents write it (shellQuote:
// words apart by spaces, single quotes around the others, '\” for a
// quote inside).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == '\\':
			escaped, inWord = true, true // the \ of '\'': the next rune as is
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// taskSummary is what the short text needs of a document: a task's, the
// results of several (result with context_ids), or the ledger's (tasks).
type taskSummary struct {
	State     string `json:"state"`
	ContextID string `json:"context_id"`
	Agent     string `json:"agent"`
	Reply     string `json:"reply"`
	Reason    string `json:"reason"`
	Resume    string `json:"resume"`
	Answer    string `json:"answer"`
	// Note is what the command adds about the task (fetch's choice, a
	// failure that would leave no trace, a stopped worker).
	Note  string `json:"note"`
	Error *struct {
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
	Tasks   []taskSummary `json:"-"`
	First   string        `json:"first"`
	Pending []string      `json:"pending"`
	Source  string        `json:"source"`
	Rows    []ledgerRow   `json:"-"`
	Remote  []remoteRow   `json:"-"`
	More    bool          `json:"more"`
}

// remoteRow is what the short text shows of a row of tasks with url (an
// agent's own listing).
type remoteRow struct {
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
	State     string `json:"state"`
	UpdatedAt string `json:"updated_at"`
	Summary   string `json:"summary"`
}

// ledgerRow is what the short text shows of a row of tasks.
type ledgerRow struct {
	ContextID  string `json:"context_id"`
	Agent      string `json:"agent"`
	State      string `json:"state"`
	AgeSeconds int64  `json:"age_seconds"`
	Summary    string `json:"summary"`
}

func (d *taskSummary) UnmarshalJSON(b []byte) error {
	type plain taskSummary
	var raw struct {
		plain
		Tasks json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*d = taskSummary(raw.plain)
	if len(raw.Tasks) == 0 {
		return nil
	}
	switch d.Source {
	case "local":
		return json.Unmarshal(raw.Tasks, &d.Rows)
	case "remote":
		return json.Unmarshal(raw.Tasks, &d.Remote)
	}
	return json.Unmarshal(raw.Tasks, &d.Tasks)
}

// resultsText says what became of several tasks: the first to finish, and
// those still running.
func resultsText(d taskSummary) string {
	var b strings.Builder
	for _, t := range d.Tasks {
		if d.First != "" && t.ContextID != d.First {
			continue
		}
		if t.Error != nil && t.State != stateNotFound && (t.Reason == "" || !ended[t.State]) {
			// Its error's message names the task and what became of
			// it ("reading the reply of task X was refused: …"): it is
			// the task's line.
			b.WriteString(t.Error.Message + "\n")
			continue
		}
		fmt.Fprintf(&b, "task %s: %s", t.ContextID, t.State)
		if d.First != "" {
			b.WriteString(" (the first to finish)")
		}
		switch {
		case t.Reply != "":
			b.WriteString("\n" + t.Reply)
		case t.State == stateNotFound:
			// The CLI's line (cmd/cli printResults), and the hint it
			// gives on stderr on a line of its own.
			b.WriteString(": no local record on this machine")
			if t.Error != nil && t.Error.Hint != "" {
				b.WriteString("\nhint: " + t.Error.Hint)
			}
		case t.Error != nil:
			// A task that ended so: the reason its record gives, which
			// the error's message says after the task.
			b.WriteString(": " + t.Reason)
		}
		b.WriteString("\n")
	}
	if len(d.Pending) > 0 {
		fmt.Fprintf(&b, "still running: %s. Nothing is lost: call the result tool with these context_ids later; do not send the messages again.",
			strings.Join(d.Pending, ", "))
	}
	return strings.TrimSpace(b.String())
}

// stateNotFound is the state, in result's document of several tasks, of a
// contextId the machine has no record of (cmd/cli's).
const stateNotFound = "not_found"

// ended are the states of a task that ended other than completed: its
// document's reason says why.
var ended = map[string]bool{"failed": true, "rejected": true, "canceled": true, "expired": true}

// remoteText is the tasks tool's list of an agent's own tasks, a line a
// task: contextId, task id (what fetch's task_id takes), state, when its
// status was set, and its status text.
func remoteText(rows []remoteRow) string {
	if len(rows) == 0 {
		return "the agent lists no tasks that match"
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\ttask %s\t%s\t%s\t%s\n", r.ContextID, r.TaskID, r.State, r.UpdatedAt, r.Summary)
	}
	return strings.TrimSpace(b.String())
}

// ledgerText is the tasks tool's list, a line a task: contextId, agent,
// state, age, and the first line of the reply or reason.
func ledgerText(rows []ledgerRow) string {
	if len(rows) == 0 {
		return "no tasks"
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s ago\t%s\n", r.ContextID, r.Agent, r.State, termui.Age(time.Duration(r.AgeSeconds)*time.Second), r.Summary)
	}
	return strings.TrimSpace(b.String())
}
