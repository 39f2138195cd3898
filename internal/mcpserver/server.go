// Package mcpserver serves a2a-courier's commands as MCP tools over stdio,
// for the assistants that speak MCP (Claude Desktop, Cursor, VS Code,
// Gemini CLI). Each tool runs the command it is named after, in this
// process, exactly as `a2a-courier <command> --json` would: the same store,
// the same detached workers, the same configuration and secrets, the same
// checks. The tool's structuredContent is the command's --json document,
// and a short text says what happened. A command's error is a tool result
// with isError, its message and its hint: never a protocol failure.
//
// The credential comes from the environment or the config file, as for the
// command line: no tool takes it as an argument.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Runner runs one a2a-courier command line in this process with stdin,
// writing the command's stdout and stderr, and returns its exit code. The
// CLI passes its own Run.
type Runner func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Options configure a server.
type Options struct {
	Run     Runner
	Version string
	// DefaultWait and MaxWait bound how long send and result wait for a
	// reply (wait_seconds): an assistant's tool call has a deadline of its
	// own (often a minute), and past it the reply would be lost to it.
	// Defaults 45 s and 10 min.
	DefaultWait, MaxWait time.Duration
	// ProgressEvery is how often a waiting tool sends a progress
	// notification (default 5 s).
	ProgressEvery time.Duration
}

// Exit codes of the command line (cmd/cli's table; never renumbered).
const (
	exitOK            = 0
	exitInputRequired = 7
	exitStillRunning  = 8
)

// New returns a server with the tools.
func New(o Options) *mcp.Server {
	if o.DefaultWait <= 0 {
		o.DefaultWait = 45 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Minute
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "a2a-courier", Title: "a2a-courier", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions})
	t := &tools{o: o}
	t.add(s)
	return s
}

// Serve runs a server on in and out (the process's stdin and stdout) until
// the client goes away or ctx ends.
func Serve(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	return New(o).Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type tools struct{ o Options }

// call runs a command line and turns what it printed into a tool result.
// A command that exits 7 (the agent asks) or 8 (still running) succeeded
// as a tool: its document says what to do next.
func (t *tools) call(ctx context.Context, req *mcp.CallToolRequest, args []string, stdin string, progress string) (*mcp.CallToolResult, any, error) {
	var stdout, stderr bytes.Buffer
	errw := &lockedWriter{w: &stderr}
	done := make(chan int, 1)
	go func() {
		done <- t.o.Run(ctx, args, strings.NewReader(stdin), &stdout, errw)
	}()
	code := t.waitReporting(ctx, req, done, progress, errw)
	doc := json.RawMessage(bytes.TrimSpace(stdout.Bytes()))
	if !json.Valid(doc) {
		// Not a document (a command without --json output): say what it
		// printed.
		text := strings.TrimSpace(stdout.String() + "\n" + errw.String())
		return &mcp.CallToolResult{IsError: code != exitOK, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary(doc, code)}}}
	if code != exitOK && code != exitInputRequired && code != exitStillRunning {
		res.IsError = true
	}
	return res, doc, nil
}

// waitReporting waits for a command, sending a progress notification every
// ProgressEvery when the client asked for progress (a progress token).
func (t *tools) waitReporting(ctx context.Context, req *mcp.CallToolRequest, done <-chan int, what string, stderr *lockedWriter) int {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return <-done
	}
	tick := time.NewTicker(t.o.ProgressEvery)
	defer tick.Stop()
	start := time.Now()
	n := 0.0
	for {
		select {
		case code := <-done:
			return code
		case <-tick.C:
			n++
			msg := fmt.Sprintf("%s: waiting, %s", what, time.Since(start).Round(time.Second))
			if ctxID := StartedContext(stderr.String()); ctxID != "" {
				msg += " (context " + ctxID + ")"
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
	}
}

// StartedContext finds the contextId send and send-async announce on
// stderr before anything leaves: a line "task <contextId> started", which
// may go on ("; its reply: …").
func StartedContext(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "task "); ok {
			if id, _, ok := strings.Cut(rest, " started"); ok && !strings.ContainsAny(id, " \t") {
				return id
			}
		}
	}
	return ""
}

// summary is the short text beside the document: the reply, or the state
// and what to do next, or the error and its hint.
func summary(doc json.RawMessage, code int) string {
	var d taskSummary
	json.Unmarshal(doc, &d)
	switch {
	case d.Source == "local":
		return ledgerText(d.Rows)
	case d.Tasks != nil:
		return resultsText(d)
	case d.Error != nil && code != exitOK:
		s := d.Error.Message
		if d.Error.Hint != "" {
			s += "\nhint: " + d.Error.Hint
		}
		return s
	case code == exitStillRunning:
		return fmt.Sprintf("still running (context %s, state %s). Nothing is lost: call the result tool with context_id %q later; do not send the message again.",
			d.ContextID, d.State, d.ContextID)
	case code == exitInputRequired:
		return fmt.Sprintf("the agent asks (context %s): %s\nAnswer with the send tool: the same agent, context_id %q, the user's answer as message.", d.ContextID, d.Reply, d.ContextID)
	case d.State == "queued" && d.ContextID != "":
		return fmt.Sprintf("task started in the background (context %s); call the result tool with context_id %q and wait_seconds to get the reply.", d.ContextID, d.ContextID)
	case d.Reply != "":
		return d.Reply
	}
	return string(doc)
}

// taskSummary is what the short text needs of a document: a task's, the
// results of several (result with context_ids), or the ledger's (tasks).
type taskSummary struct {
	State     string `json:"state"`
	ContextID string `json:"context_id"`
	Reply     string `json:"reply"`
	Resume    string `json:"resume"`
	Answer    string `json:"answer"`
	Error     *struct {
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
	Tasks   []taskSummary `json:"-"`
	First   string        `json:"first"`
	Pending []string      `json:"pending"`
	Source  string        `json:"source"`
	Rows    []ledgerRow   `json:"-"`
}

// ledgerRow is what the short text shows of a row of tasks.
type ledgerRow struct {
	ContextID string `json:"context_id"`
	Agent     string `json:"agent"`
	State     string `json:"state"`
	Summary   string `json:"summary"`
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
	if d.Source == "local" {
		return json.Unmarshal(raw.Tasks, &d.Rows)
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
		fmt.Fprintf(&b, "task %s: %s", t.ContextID, t.State)
		if d.First != "" {
			b.WriteString(" (the first to finish)")
		}
		switch {
		case t.Reply != "":
			b.WriteString("\n" + t.Reply)
		case t.Error != nil:
			b.WriteString(": " + t.Error.Message)
		}
		b.WriteString("\n")
	}
	if len(d.Pending) > 0 {
		fmt.Fprintf(&b, "still running: %s. Nothing is lost: call the result tool with these context_ids later; do not send the messages again.",
			strings.Join(d.Pending, ", "))
	}
	return strings.TrimSpace(b.String())
}

// ledgerText is the tasks tool's list, a line a task.
func ledgerText(rows []ledgerRow) string {
	if len(rows) == 0 {
		return "no tasks"
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", r.ContextID, r.Agent, r.State, r.Summary)
	}
	return strings.TrimSpace(b.String())
}

// waitFlag turns wait_seconds into a --timeout, bounded.
func (t *tools) waitFlag(seconds float64) string {
	d := t.o.DefaultWait
	if seconds > 0 {
		d = time.Duration(seconds * float64(time.Second))
	}
	d = min(d, t.o.MaxWait)
	d = max(d, time.Second)
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// agentArgs names the agent as the command line does: an agent id or a
// peer's name, or --url.
func agentArgs(agent, url string) []string {
	if url != "" {
		return []string{"--url", url}
	}
	return []string{agent}
}

// lockedWriter is a buffer written by the command while the server reads
// it for progress.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
