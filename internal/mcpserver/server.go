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
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Runner runs one a2a-courier command line in this process with stdin,
// writing the command's stdout and stderr, telling ev what the server
// follows as it goes, and returns its exit code. The CLI passes its own
// Run.
type Runner func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, ev Events) int

// Events are what a command run for a tool tells the server as it goes,
// as values: the server reads nothing of the command's stderr for its
// meaning (a change of the CLI's wording changes no tool's behaviour).
// The outcome is the command's --json document on stdout.
type Events struct {
	// Started is told the contextId of the task a send or send-async
	// recorded, before anything leaves.
	Started func(contextID string)
	// Progress is told each status update of a task the command waits
	// for ("<state>: <text>", or with several tasks "<contextId>:
	// <state>: <text>": what --progress prints after "progress: ").
	Progress func(text string)
}

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
	// Log is the server's own log (its stderr): a command that panicked
	// writes its stack there, never into a result. Nil: discarded.
	Log io.Writer
	// HasRecord reports whether this machine holds the record of a task
	// (a contextId): the text of a fetch still running says "nothing is
	// lost" only then. Nil: a task send or result reported has one, one
	// fetch reported not.
	HasRecord func(contextID string) bool
	// StopGrace bounds how long Serve, stopped by its context or by the
	// end of its input, waits for the requests read to be answered
	// (default 10 s).
	StopGrace time.Duration
	// FileDirs are the directories send and send_async may send files
	// from (FilesEnv, read by FileDirs); none: they send no file.
	FileDirs []string
	// Protected lists, when a call names files, a2a-courier's own files
	// and directories, which no tool sends, nor anything under them: the
	// config file and directory, the state directory, the key and token
	// files of the config file and of the server's flags (see files.go).
	Protected func() []string
}

// Exit codes of the command line (cmd/cli's table; never renumbered).
const (
	exitOK            = 0
	exitInputRequired = 7
	exitStillRunning  = 8
	// exitPanicked stands for a command that panicked: no exit code.
	exitPanicked = -1
)

// New returns a server with the tools.
func New(o Options) *mcp.Server {
	return newServer(o, context.Background(), context.Background())
}

// newServer is New whose calls end when stopping does (a send that has not
// recorded its task yet: once it has, or when forced ends).
func newServer(o Options, stopping, forced context.Context) *mcp.Server {
	if o.DefaultWait <= 0 {
		o.DefaultWait = 45 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Minute
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "a2a-courier", Title: "a2a-courier", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions})
	t := &tools{o: o, stopping: stopping, forced: forced}
	t.add(s)
	s.AddReceivingMiddleware(t.checkCalls)
	return s
}

// ErrServerStopping is the cause of a call's context when the server stops
// (a signal, or the assistant closed its stdin). It is not the cause the
// CLI takes for Ctrl-C: a send so stopped hands its task to a detached
// worker, as when its own --timeout ends, and never drops it as unsent.
var ErrServerStopping = errors.New("the MCP server is stopping")

// errCallCanceled is the cause of a call's context when the client cancels
// the request (or the connection drops under it).
var errCallCanceled = errors.New("the MCP client canceled the call")

// Serve runs a server on in and out (the process's stdin and stdout) until
// the client goes away (its stdin ends) or ctx ends (a signal). A line of
// in that is not a JSON-RPC message is answered with a JSON-RPC error and
// the server goes on (readLines). Either
// way every request read is answered before the connection closes, for at
// most StopGrace: the client still learns the contextIds of the tasks its
// calls started. The calls still running end at once, each handing its
// task to a worker and answering state working; a send or send_async
// that has not recorded its task yet is let to record it first when stdin
// ended (the client asked for it; nothing was sent yet), for at most half
// of StopGrace.
func Serve(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	stopping, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	forced, force := context.WithCancelCause(context.WithoutCancel(ctx))
	defer force(nil)
	open := &openRequests{ids: map[jsonrpc.ID]bool{}}
	if o.Log == nil {
		o.Log = io.Discard
	}
	// The SDK reads the messages readLines lets through; one it could not
	// read would end the connection (see readLines).
	lout := &lockedOutput{w: out}
	tr := &trackingTransport{Transport: &mcp.IOTransport{Reader: readLines(in, lout, o.Log), Writer: lout}, open: open,
		// The client's stdin ended: the requests read before still get
		// their answers.
		ended: func(closing <-chan struct{}) {
			stop(ErrServerStopping)
			if !open.drain(o.StopGrace/2, closing) {
				force(ErrServerStopping)
				open.drain(o.StopGrace-o.StopGrace/2, closing)
			}
		}}
	// The connection outlives ctx: its end must not stop the reading and
	// writing the calls' results still need.
	ss, err := newServer(o, stopping, forced).Connect(context.WithoutCancel(ctx), tr, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
	}
	stop(ErrServerStopping)
	force(ErrServerStopping)
	open.drain(o.StopGrace, nil)
	ss.Close()
	<-ended
	return ctx.Err()
}

// openRequests are the requests read (any method, with an id) and not yet
// answered.
type openRequests struct {
	mu    sync.Mutex
	ids   map[jsonrpc.ID]bool
	empty chan struct{} // closed when ids empties, while drain waits
}

func (c *openRequests) add(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids[id] = true
}

func (c *openRequests) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.ids, id)
	if len(c.ids) == 0 && c.empty != nil {
		close(c.empty)
		c.empty = nil
	}
}

// drain waits until every open request is answered, at most max, or until
// stop closes; it reports whether they all were.
func (c *openRequests) drain(max time.Duration, stop <-chan struct{}) bool {
	c.mu.Lock()
	if len(c.ids) == 0 {
		c.mu.Unlock()
		return true
	}
	if c.empty == nil {
		c.empty = make(chan struct{})
	}
	empty := c.empty
	c.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-empty:
		return true
	case <-t.C:
	case <-stop:
	}
	return false
}

// trackingTransport notes the requests its connection reads and the
// answers it writes (openRequests), and holds back the end of its input
// (EOF) from the SDK until ended returns: once the SDK sees it, it cancels
// the requests in flight and writes no answer any more.
type trackingTransport struct {
	mcp.Transport
	open *openRequests
	// ended is called when the input ends, with a channel closed when
	// the connection is closed (then nothing can be written any more).
	ended func(closing <-chan struct{})
}

func (t *trackingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &trackingConn{Connection: c, t: t, closing: make(chan struct{})}, nil
}

type trackingConn struct {
	mcp.Connection
	t         *trackingTransport
	closing   chan struct{}
	closeOnce sync.Once
}

func (c *trackingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		if ctx.Err() == nil && c.t.ended != nil {
			c.t.ended(c.closing)
		}
		return m, err
	}
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.t.open.add(r.ID)
	}
	return m, nil
}

func (c *trackingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.t.open.answered(r.ID)
	}
	return err
}

func (c *trackingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closing) })
	return c.Connection.Close()
}

type tools struct {
	o Options
	// stopping ends when the server stops: every call's context ends
	// with it, but that of a send or send-async that has not recorded
	// its task yet, which ends once it has, or with forced.
	stopping, forced context.Context
	// schemas are the tools' input schemas, by name (checkCalls).
	schemas map[string]*jsonschema.Schema
}

// callContext is the context a command runs with: the request's values,
// ended when the request is canceled or the server stops, with a cause of
// its own (never the signal's: see ErrServerStopping). recorded, when not
// nil, closes once the command has recorded its task (a send): ended
// before, it would drop a message the client asked to send, so the
// server's stop waits for it, until forced.
func (t *tools) callContext(req context.Context, recorded <-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(req))
	stopReq := context.AfterFunc(req, func() { cancel(errCallCanceled) })
	stopSrv := context.AfterFunc(t.stopping, func() {
		if recorded != nil {
			select {
			case <-recorded:
			case <-t.forced.Done():
			case <-ctx.Done():
			}
		}
		cancel(ErrServerStopping)
	})
	return ctx, func() {
		stopReq()
		stopSrv()
		cancel(nil)
	}
}

// call runs a command line and turns what it printed into a tool result.
// A command that exits 7 (the agent asks) or 8 (still running) succeeded
// as a tool: its document says what to do next.
func (t *tools) call(reqCtx context.Context, req *mcp.CallToolRequest, args []string, stdin string, progress string) (*mcp.CallToolResult, any, error) {
	var stdout bytes.Buffer
	errw := &lockedWriter{}
	st := &callState{}
	if len(args) > 0 && (args[0] == "send" || args[0] == "send-async") {
		st.started = make(chan struct{})
	}
	ctx, release := t.callContext(reqCtx, st.started)
	defer release()
	done := make(chan int, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				// A bug in a command must not take the server, and every
				// other call, with it: the stack goes to the server's log.
				fmt.Fprintf(t.o.Log, "a2a-courier mcp: internal error in %s: %v\n%s", progress, r, debug.Stack())
				done <- exitPanicked
			}
		}()
		done <- t.o.Run(ctx, args, strings.NewReader(stdin), &stdout, errw, st.events())
	}()
	code := t.waitReporting(ctx, req, done, progress, st)
	if code == exitPanicked {
		return toolError("unexpected", progress+" stopped on an internal error of a2a-courier (a bug)",
			"the server's log (the assistant's MCP log) has the details: please report them; a task it started is listed by the tasks tool")
	}
	doc := json.RawMessage(bytes.TrimSpace(stdout.Bytes()))
	if !json.Valid(doc) {
		// Not a document (a command without --json output): say what it
		// printed, as it printed it.
		text := strings.TrimSpace(stdout.String() + "\n" + errw.String())
		return &mcp.CallToolResult{IsError: code != exitOK, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.summary(doc, code, req.Params.Name)}}}
	if code != exitOK && code != exitInputRequired && code != exitStillRunning {
		res.IsError = true
	}
	return res, t.structured(doc), nil
}

// toolError is a tool result with isError: the message and the hint on
// a line each, and, as structuredContent, the error as a command's --json
// document has it.
func toolError(code, message, hint string) (*mcp.CallToolResult, any, error) {
	doc := map[string]any{"error": map[string]string{"code": code, "message": message, "hint": hint}}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: message + "\nhint: " + hint}}}, doc, nil
}

// waitReporting waits for a command, sending a progress notification every
// ProgressEvery when the client asked for progress (a progress token),
// with the latest status update the command printed (--progress).
func (t *tools) waitReporting(ctx context.Context, req *mcp.CallToolRequest, done <-chan int, what string, st *callState) int {
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
			ctxID, p := st.now()
			if ctxID != "" {
				msg += " (context " + ctxID + ")"
			}
			if p != "" {
				msg += "; latest status: " + p
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
	}
}

// maxProgressRunes bounds the status text in a progress notification.
const maxProgressRunes = 200

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

// callState is what a command run for a tool told the server (Events):
// the contextId of the task it started, and its newest status update.
// started, when not nil, is closed once the task is recorded.
type callState struct {
	mu        sync.Mutex
	contextID string
	// progress is the newest status update, cut to maxProgressRunes: only
	// the newest is kept, however chatty the agent.
	progress string
	started  chan struct{}
}

// events are the hooks the command is run with.
func (c *callState) events() Events {
	return Events{
		Started: func(contextID string) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.contextID != "" {
				return
			}
			c.contextID = contextID
			if c.started != nil {
				close(c.started)
			}
		},
		Progress: func(text string) {
			line := []rune(text)
			if len(line) > maxProgressRunes {
				line = append(line[:maxProgressRunes-1], '…')
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			c.progress = string(line)
		},
	}
}

// now is the contextId told and the newest status update ("" for none).
func (c *callState) now() (contextID, progress string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.contextID, c.progress
}

// lockedWriter is the command's stderr, which its goroutines may write
// while it runs: kept as written, for the text of a command that printed
// no document.
type lockedWriter struct {
	mu sync.Mutex
	w  bytes.Buffer
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
