package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/mcpinstall"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/store"
)

// lockedBuffer is a process's stderr, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpSession is the real binary (this test binary as the program, see
// TestMain) started as `a2a-courier mcp`, over a real stdio pipe, with the
// go-sdk's own client.
type mcpSession struct {
	t        *testing.T
	ctx      context.Context
	cmd      *exec.Cmd
	cs       *mcp.ClientSession
	stderr   *lockedBuffer
	mu       sync.Mutex
	progress []string
}

func startMCP(t *testing.T, ctx context.Context, p *proc, args ...string) *mcpSession {
	t.Helper()
	m := &mcpSession{t: t, ctx: ctx, cmd: p.cmd(ctx, "", append([]string{"mcp"}, args...)...), stderr: &lockedBuffer{}}
	m.cmd.Stdin = nil // the transport's pipe
	m.cmd.Stderr = m.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "a2a-courier-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			m.mu.Lock()
			m.progress = append(m.progress, r.Params.Message)
			m.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: m.cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, m.stderr.String())
	}
	m.cs = cs
	return m
}

// call calls a tool, asking for progress; a protocol error fails the test.
// It returns the result, its structuredContent and its text.
func (m *mcpSession) call(name string, args map[string]any) (*mcp.CallToolResult, map[string]any, string) {
	m.t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(name)
	res, err := m.cs.CallTool(m.ctx, params)
	if err != nil {
		m.t.Fatalf("%s: a protocol error: %v\n%s", name, err, m.stderr.String())
	}
	var doc map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &doc)
	return res, doc, res.Content[0].(*mcp.TextContent).Text
}

func (m *mcpSession) lastProgress() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.progress) == 0 {
		return ""
	}
	return m.progress[len(m.progress)-1]
}

// TestMCPServer drives `a2a-courier mcp` against the simulator: the tools
// are listed; send_async, result, show and tasks carry a task through; a
// bad agent is a tool error, not a protocol error; a send past its
// wait_seconds returns state working and the contextId with the advice to
// call result.
func TestMCPServer(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "slow-agent", Name: "Slow", Description: "Takes long.", RunTime: 20 * time.Second},
			agentbuildertest.Agent{ID: "wordy-agent", Name: "Wordy", Description: "Says much.", RunTime: time.Millisecond, ReplyBytes: 50000})
	})
	p := newProc(t, sim)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := startMCP(t, ctx, p)
	defer m.cs.Close()
	if init := m.cs.InitializeResult(); init.ServerInfo.Name != "a2a-courier" || !strings.Contains(init.Instructions, "send_async") {
		t.Errorf("initialize: %+v", init)
	}
	checkTools(t, m)
	checkTaskThroughTools(t, m)
	checkOutcomesThroughTools(t, m)

	// A bad agent: a tool result with isError, the message and the hint.
	res, doc, text := m.call("send", map[string]any{"agent": "no-such-agent", "message": "hello", "wait_seconds": 5})
	errDoc, _ := doc["error"].(map[string]any)
	if !res.IsError || errDoc["code"] != "not_found" || !strings.Contains(text, "no-such-agent") || !strings.Contains(text, "hint: ") {
		t.Errorf("bad agent: %v %v %q", res.IsError, doc, text)
	}

	// A send past its wait: working, the contextId, and what to do next;
	// meanwhile a progress notification (every 5 s) names the contextId
	// that send announced on its stderr before it sent.
	// (The agent takes 20 s: "working" says the call returned at its wait.)
	res, doc, text = m.call("send", map[string]any{"agent": "slow-agent", "message": "This takes a while", "wait_seconds": 6})
	slowID, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "working" || slowID == "" || !strings.Contains(strings.ToLower(text), "call the result tool with context_id \""+slowID+"\" later; do not send the message again") {
		t.Errorf("send past its wait: %v %v %q", res.IsError, doc, text)
	}
	// The notification handlers may run after the call returned: wait for
	// the one that names the context.
	deadline := time.Now().Add(10 * time.Second)
	for last := m.lastProgress(); !strings.Contains(last, "send: waiting") || !strings.Contains(last, "(context "+slowID+")"); last = m.lastProgress() {
		if time.Now().After(deadline) {
			t.Fatalf("progress %q", last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res, doc, _ = m.call("result", map[string]any{"context_id": slowID}); res.IsError || doc["state"] != "working" || sim.Runs(slowID) != 1 {
		t.Errorf("result of the running task: %v %v, %d runs", res.IsError, doc, sim.Runs(slowID))
	}
	// Several tasks, the first to finish: the audit run (3 s) before the
	// slow one, which the text says is still running.
	_, doc, _ = m.call("send_async", map[string]any{"agent": "audit-agent", "message": "Quick one"})
	fastID, _ := doc["context_id"].(string)
	res, doc, text = m.call("result", map[string]any{"context_ids": []string{slowID, fastID}, "any": true, "wait_seconds": 60})
	if want := "task " + fastID + ": completed (the first to finish)\nReport for Quick one: 14 escalations.\nstill running: " + slowID +
		". Nothing is lost: call the result tool with these context_ids later; do not send the messages again."; res.IsError || doc["first"] != fastID || text != want {
		t.Errorf("result --any: %v %v %q", res.IsError, doc, text)
	}
	// Cancel: the local task ends canceled, saying the run may still
	// finish (Agent Builder cannot stop one).
	res, doc, text = m.call("cancel", map[string]any{"context_id": slowID})
	if res.IsError || doc["state"] != "canceled" || doc["context_id"] != slowID ||
		!strings.HasPrefix(text, "task "+slowID+": canceled: canceled on request; Agent Builder cannot stop a run") {
		t.Errorf("cancel: %v %v %q", res.IsError, doc, text)
	}
	if r := p.run("result", slowID, "--json"); r.code != ExitTaskFailed || decodeTask(t, r.stdout).State != "canceled" {
		t.Errorf("the canceled task: %d %s", r.code, r.stdout)
	}
	if log := m.stderr.String(); strings.Contains(log, testKey) || !strings.Contains(log, "serving MCP on stdin and stdout") {
		t.Errorf("server stderr: %s", log)
	}
	if err := m.cs.Close(); err != nil || m.cmd.ProcessState == nil || m.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the server did not exit cleanly when its stdin closed: %v %v\n%s", err, m.cmd.ProcessState, m.stderr.String())
	}
}

// checkTools lists the tools: the ten commands, each described.
func checkTools(t *testing.T, m *mcpSession) {
	t.Helper()
	tools, err := m.cs.ListTools(m.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s has no description or schema", tl.Name)
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "cancel discover fetch get_card history result send send_async show tasks" {
		t.Errorf("tools: %s", got)
	}
}

// checkTaskThroughTools carries a task through send_async, result, show and
// tasks.
func checkTaskThroughTools(t *testing.T, m *mcpSession) {
	t.Helper()
	res, doc, text := m.call("send_async", map[string]any{"agent": "audit-agent", "message": "Review last week's escalations"})
	ctxID, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "queued" || ctxID == "" || !strings.Contains(text, "call the result tool with context_id") {
		t.Fatalf("send_async: %v %v %q", res.IsError, doc, text)
	}
	res, doc, text = m.call("result", map[string]any{"context_id": ctxID, "wait_seconds": 60})
	const reply = "Report for Review last week's escalations: 14 escalations."
	if res.IsError || doc["state"] != "completed" || doc["reply"] != reply || text != reply {
		t.Fatalf("result: %v %v %q", res.IsError, doc, text)
	}
	res, doc, _ = m.call("show", map[string]any{"conversation": ctxID})
	if res.IsError || doc["reply"] != reply || doc["agent_id"] != "audit-agent" || doc["conversation_id"] != "a2a-"+ctxID {
		t.Errorf("show: %v %v", res.IsError, doc)
	}
	res, doc, text = m.call("tasks", map[string]any{"agent": "audit-agent"})
	rows, _ := doc["tasks"].([]any)
	if res.IsError || len(rows) != 1 || rows[0].(map[string]any)["context_id"] != ctxID || rows[0].(map[string]any)["summary"] != reply ||
		!regexp.MustCompile(`^`+ctxID+`\taudit-agent\tcompleted\t\d+s ago\t`+regexp.QuoteMeta(reply)+`$`).MatchString(text) {
		t.Errorf("tasks: %v %v %q", res.IsError, doc, text)
	}
}

// mcp install writes each assistant's file in place: a new one, then the
// same run again changes nothing; the entry names this binary and mcp,
// the non-default directories, never a key; a key from the environment
// only is named in a warning.
func TestMCPInstallCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.env["KIBANA_URL"] = "http://kibana.example:5601"
	h.env["KIBANA_API_KEY"] = testKey
	home := h.env["HOME"]
	for _, target := range mcpinstall.Targets {
		r := h.run("mcp", "install", "--target", string(target), "--json")
		r.expect(t, ExitOK)
		var doc struct {
			Path, Action, Command string
			Args                  []string
			Env                   map[string]string
			Warnings              []string
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Action != "created" || !strings.HasPrefix(doc.Path, home) || doc.Command != os.Args[0] || strings.Join(doc.Args, " ") != "mcp" ||
			doc.Env["A2A_COURIER_STATE_DIR"] != h.env["A2A_COURIER_STATE_DIR"] || len(doc.Env) != 1 ||
			len(doc.Warnings) == 0 || !strings.Contains(doc.Warnings[0], "the settings KIBANA_URL and KIBANA_API_KEY come from this shell's environment only, which "+string(target)+"'s process will not have") {
			t.Errorf("%s: %s", target, r.stdout)
		}
		b, err := os.ReadFile(doc.Path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), testKey) || !strings.Contains(string(b), `"command": "`+os.Args[0]+`"`) {
			t.Errorf("%s: %s", target, b)
		}
		if p := ownfiletest.FileProblem(doc.Path); p != "" {
			t.Errorf("%s: %s", target, p)
		}
		again := h.run("mcp", "install", "--target", string(target))
		if again.code != ExitOK || again.stdout != "unchanged: "+doc.Path+"\n" {
			t.Errorf("%s again: %q %q", target, again.stdout, again.stderr)
		}
	}
	// VS Code's file, an existing one with comments, on Linux.
	vscode := filepath.Join(home, ".config", "Code", "User", "mcp.json")
	r := h.run("mcp", "install", "--target", "vscode", "--dry-run", "--profile", "lab")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `no profile "lab"`) {
		t.Errorf("a profile that is not there: %d %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(vscode); !strings.Contains(string(b), `"type": "stdio"`) {
		t.Errorf("vscode: %s", b)
	}
	checkOneLineError(t, h.run("mcp", "install", "--target", "emacs"), ExitUsage, `--target: unknown target "emacs"`)
	if r := h.run("mcp", "--json"); r.code != ExitUsage || !strings.Contains(r.stdout, "mcp speaks JSON-RPC on stdout") {
		t.Errorf("mcp --json: %d %q", r.code, r.stdout)
	}
}

// A server that stops (a signal, or the assistant closing its stdin) ends
// its calls at once, each handing its task to a detached worker, which
// follows the run it sent (one run) to its reply. The proof that the call
// was ended and not waited out: the server has exited while the run is
// still going (it takes 25 s; the call would wait 600).
func TestMCPServerStopEndsItsCalls(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "long-agent", Name: "Long", Description: "Takes long.", RunTime: 25 * time.Second,
			Reply: "Long answer to {{input}}"})
	})
	for _, how := range mcpStops {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, sim)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// The server on pipes of our own: closing its stdin is ours to
			// do (the SDK's session close waits for the calls in flight).
			cmd := p.cmd(ctx, "", "mcp")
			cmd.Stdin = nil
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "a2a-courier-test", Version: "1"}, nil).
				Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			called := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send",
					Arguments: map[string]any{"agent": "long-agent", "message": "the question", "wait_seconds": 600}})
				called <- outcome{res, err}
			}()
			var id string
			waitUntil(t, "the send's task to reach the agent", 30*time.Second, func() bool {
				var doc struct {
					Tasks []struct {
						ContextID string `json:"context_id"`
					}
				}
				json.Unmarshal([]byte(p.run("tasks", "--json").stdout), &doc)
				if len(doc.Tasks) == 1 {
					id = doc.Tasks[0].ContextID
				}
				return id != "" && sim.Runs(id) == 1
			})
			if how == "SIGTERM" {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				// The call's result still reaches the client: still
				// running, handed to a worker.
				o := <-called
				var doc map[string]any
				if o.err == nil {
					b, _ := json.Marshal(o.res.StructuredContent)
					json.Unmarshal(b, &doc)
				}
				if o.err != nil || o.res.IsError || doc["state"] == "completed" || doc["context_id"] != id ||
					!strings.Contains(strings.ToLower(o.res.Content[0].(*mcp.TextContent).Text), "call the result tool with context_id") {
					t.Errorf("the send ended by SIGTERM: %v %+v", o.err, doc)
				}
			} else {
				stdin.Close()
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("the server's exit: %v\n%s", err, stderr.String())
				}
			case <-ctx.Done():
				t.Fatalf("the server did not exit\n%s", stderr.String())
			}
			// The server is gone and the run still going: the call was
			// ended, not waited out.
			if r := p.run("result", id, "--json"); r.code != ExitStillRunning {
				t.Errorf("the task when the server had exited: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r := p.run("result", id, "--wait", "--timeout", "60s", "--json")
			d := decodeTask(t, r.stdout)
			if r.code != ExitOK || d.State != "completed" || *d.Reply != "Long answer to the question" || sim.Runs(id) != 1 {
				t.Errorf("the task after the server stopped: %d %+v, %d runs\n%s", r.code, d, sim.Runs(id), stderr.String())
			}
			if log := stderr.String(); strings.Contains(log, "Ctrl-C") || strings.Contains(log, testKey) {
				t.Errorf("server stderr: %s", log)
			}
			p.waitWorkersExit()
		})
	}
}

// The stop by a signal, on every system, through the cause the signal
// gives the command's context (watchSignals): SIGTERM on Unix, and on
// Windows a closed console window, a logoff or a shutdown, which Go
// delivers as syscall.SIGTERM (runtime.ctrlHandler); Wine cannot send
// those. The server, run in this process, ends its call at once, handing
// the task to a detached worker, which finishes it with one run.
func TestMCPServerStoppedBySignalCause(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "long-agent", Name: "Long", Description: "Takes long.", RunTime: 6 * time.Second,
			Reply: "Long answer to {{input}}"})
	})
	h := newHarness(t, sim)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := h.env
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		code := Run(ctx, &Process{Args: []string{"mcp"}, Stdin: inR, Stdout: outW, Stderr: stderr,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Environ: func() []string {
				kv := []string{"PATH=" + os.Getenv("PATH")}
				for k, v := range env {
					kv = append(kv, k+"="+v)
				}
				return kv
			},
			Executable: func() (string, error) { return os.Args[0], nil }})
		outW.Close()
		exited <- code
	}()
	callCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "a2a-courier-test", Version: "1"}, nil).
		Connect(callCtx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	called := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "send",
			Arguments: map[string]any{"agent": "long-agent", "message": "the question", "wait_seconds": 600}})
		if err != nil {
			t.Errorf("send: %v", err)
		}
		called <- res
	}()
	st, err := store.Open(env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	var id string
	waitUntil(t, "the send's task to reach the agent", 30*time.Second, func() bool {
		if recs, _ := st.List(); len(recs) == 1 {
			id = recs[0].ContextID
		}
		return id != "" && sim.Runs(id) == 1
	})
	cancel(&signalError{syscall.SIGTERM})
	res := <-called
	var doc map[string]any
	if res != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &doc)
	}
	if res == nil || res.IsError || doc["state"] == "completed" || doc["context_id"] != id ||
		!strings.Contains(strings.ToLower(res.Content[0].(*mcp.TextContent).Text), "call the result tool with context_id") {
		t.Errorf("the send ended by the signal's cause: %+v", doc)
	}
	inW.Close()
	if code := <-exited; code != ExitOK {
		t.Errorf("the server's exit %d\n%s", code, stderr.String())
	}
	r := h.run("result", id, "--wait", "--timeout", "60s", "--json")
	d := decodeTask(t, r.stdout)
	if r.code != ExitOK || d.State != "completed" || *d.Reply != "Long answer to the question" || sim.Runs(id) != 1 {
		t.Errorf("the task after the server stopped: %d %+v, %d runs\n%s", r.code, d, sim.Runs(id), stderr.String())
	}
}

// checkOutcomesThroughTools: a failed task (exit 6) is a tool error with
// its message and hint; fetch of a context the server has no reply for
// (exit 8) says to fetch again, and, with no record here, not that nothing
// is lost.
func checkOutcomesThroughTools(t *testing.T, m *mcpSession) {
	t.Helper()
	res, doc, text := m.call("send", map[string]any{"agent": "flaky-agent", "message": "try", "wait_seconds": 30})
	errDoc, _ := doc["error"].(map[string]any)
	if !res.IsError || doc["state"] != "failed" || errDoc["code"] != "task_failed" || !strings.Contains(text, "No complete response received from chat service") ||
		!strings.Contains(text, "\nhint: ") {
		t.Errorf("a failed task: %v %v %q", res.IsError, doc, text)
	}
	// A long reply is cut at 20,000 characters by default; its whole is in
	// the file the document names.
	res, doc, text = m.call("send", map[string]any{"agent": "wordy-agent", "message": "tell all", "wait_seconds": 30})
	file, _ := doc["reply_file"].(string)
	whole, _ := os.ReadFile(file)
	if reply, _ := doc["reply"].(string); res.IsError || doc["reply_truncated"] != true || len([]rune(reply)) > 20500 || len(whole) < 50000 ||
		!strings.Contains(text, file) {
		t.Errorf("a long reply: %v %d characters shown, file %q of %d bytes", res.IsError, len([]rune(reply)), file, len(whole))
	}
	// An id that would read as a flag is refused, with a hint, never run.
	res, _, text = m.call("send", map[string]any{"agent": "--kibana-url=http://elsewhere.example", "message": "q"})
	if !res.IsError || !strings.Contains(text, `agent "--kibana-url=http://elsewhere.example" starts with '-'`) || !strings.Contains(text, "\nhint: ") {
		t.Errorf("a flag-like agent: %v %q", res.IsError, text)
	}
	const unknown = "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"
	res, doc, text = m.call("fetch", map[string]any{"context_id": unknown})
	if res.IsError || doc["state"] != "working" || !strings.Contains(text, "Call the fetch tool again with the same arguments later") ||
		strings.Contains(text, "result tool") || strings.Contains(text, "Nothing is lost") {
		t.Errorf("fetch of a context with no reply: %v %v %q", res.IsError, doc, text)
	}
}

// TestMCPServerGenericAgentAsks: a generic A2A agent (a2a-js's ask agent)
// asks a question (exit 7, a result, not an error); following the route
// the text names (url and task_id, not context_id: that would start a new
// task, which asks again) completes the task.
func TestMCPServerGenericAgentAsks(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	p := newProc(t, startSim(t, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := startMCP(t, ctx, p)
	defer m.cs.Close()
	url := js.URL(interoptest.MountV1, interoptest.AgentAsk)
	res, doc, text := m.call("send", map[string]any{"url": url, "message": "start", "wait_seconds": 30})
	taskID, _ := doc["task_id"].(string)
	want := fmt.Sprintf("Answer with the send tool: url %q, task_id %q, the user's answer as message.", url, taskID)
	if res.IsError || doc["state"] != "input_required" || taskID == "" || !strings.Contains(text, interoptest.AskQuestion) || !strings.Contains(text, want) {
		t.Fatalf("the question: %v %v %q", res.IsError, doc, text)
	}
	args := routeOf(t, text)
	args["message"] = "Ada"
	args["wait_seconds"] = 30
	res, doc, text = m.call("send", args)
	if reply, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.Contains(reply, "Hello, Ada!") || text != reply {
		t.Errorf("the answer, as the text says (%v): %v %v %q", args, res.IsError, doc, text)
	}
}

// routeOf reads the send tool's arguments a question's text names: the
// line "Answer with the send tool: url "…", task_id "…", …".
func routeOf(t *testing.T, text string) map[string]any {
	t.Helper()
	_, line, ok := strings.Cut(text, "Answer with the send tool: ")
	if !ok {
		t.Fatalf("no route in %q", text)
	}
	args := map[string]any{}
	for _, m := range regexp.MustCompile(`(\w+) ("(?:[^"\\]|\\.)*")`).FindAllStringSubmatch(line, -1) {
		v, err := strconv.Unquote(m[2])
		if err != nil {
			t.Fatal(err)
		}
		args[m[1]] = v
	}
	return args
}

// mcp install writes the profile the environment chose (the assistant's
// process has no A2A_COURIER_PROFILE) and the --api-key-file in use (its
// absolute path, never the key) into the entry, and warns, a line each,
// of what this shell's environment alone gives: the CA settings, the
// ambient token, a peer's token_env.
func TestMCPInstallTakesTheShellsChoices(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	cfgDir := filepath.Join(h.env["HOME"], ".config", "a2a-courier")
	ownfile.MkdirAll(cfgDir)
	cfg := "profiles:\n  prod:\n    kibana_url: https://prod.example:9243\npeers:\n  lab:\n    url: https://lab.example/a2a\n    token_env: LAB_TOKEN\n"
	if err := writePrivate(filepath.Join(cfgDir, "config.yaml"), []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(h.env["HOME"], "prod.key")
	if err := writePrivate(keyFile, []byte(testKey+"\n")); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"A2A_COURIER_PROFILE": "prod", "A2A_COURIER_INSECURE": "true", "A2A_COURIER_TOKEN": "ambient-secret",
		"A2A_COURIER_TOKEN_ORIGIN": "https://lab.example", "LAB_TOKEN": "lab-secret"} {
		h.env[k] = v
	}
	r := h.run("mcp", "install", "--target", "cursor", "--api-key-file", keyFile, "--json")
	r.expect(t, ExitOK)
	var doc struct {
		Path     string
		Args     []string
		Warnings []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(doc.Args, " "); got != "mcp --profile prod --api-key-file "+keyFile {
		t.Errorf("args %q", got)
	}
	want := []string{
		"the setting A2A_COURIER_INSECURE comes from this shell's environment only, which cursor's process will not have: keep it in the config file (a2a-courier config set ca-cert",
		"the token of A2A_COURIER_TOKEN (and A2A_COURIER_TOKEN_ORIGIN) comes from this shell's environment only, which cursor's process will not have",
		"peer lab takes its token from LAB_TOKEN, which comes from this shell's environment only, which cursor's process will not have",
	}
	// (and that this test binary is a temporary build of go test)
	if len(doc.Warnings) != len(want)+1 || !strings.Contains(doc.Warnings[len(want)], "is a temporary build of go run") {
		t.Fatalf("warnings %q", doc.Warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(doc.Warnings[i], w) || strings.Contains(doc.Warnings[i], "\n") {
			t.Errorf("warning %d: %q, want %q…", i, doc.Warnings[i], w)
		}
	}
	b, _ := os.ReadFile(doc.Path)
	for _, secret := range []string{testKey, "ambient-secret", "lab-secret"} {
		if strings.Contains(string(b)+r.stdout+r.stderr, secret) {
			t.Errorf("%q written or shown:\n%s", secret, b)
		}
	}
	// Without the environment's choice, the entry names no profile.
	delete(h.env, "A2A_COURIER_PROFILE")
	r = h.run("mcp", "install", "--target", "gemini", "--json")
	r.expect(t, ExitOK)
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || strings.Join(doc.Args, " ") != "mcp" {
		t.Errorf("no profile chosen: %v %s", err, r.stdout)
	}
}

// runMCPLines runs the real binary as `a2a-courier mcp` with lines on its
// stdin, which ends right after them (as `printf '%s\n' … | a2a-courier
// mcp`), and returns the lines it wrote on stdout, each a JSON-RPC answer.
func runMCPLines(t *testing.T, p *proc, lines ...string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := p.cmd(ctx, strings.Join(lines, "\n")+"\n", "mcp")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("mcp: %v\n%s", err, errb.String())
	}
	var answers []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON-RPC on stdout: %q\n%s", l, errb.String())
		}
		answers = append(answers, m)
	}
	return answers
}

const (
	mcpInitLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcpInitializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// A client that writes its requests and closes the server's stdin at once
// gets every answer: initialize and tools/list (initialized is a
// notification, with none).
func TestMCPServerAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	p := newProc(t, startSim(t, nil))
	answers := runMCPLines(t, p, mcpInitLine, mcpInitializedLine, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if len(answers) != 2 || fmt.Sprint(answers[0]["id"]) != "1" || fmt.Sprint(answers[1]["id"]) != "2" ||
		answers[0]["result"] == nil || answers[1]["result"] == nil {
		t.Fatalf("answers %v", answers)
	}
	if tools, _ := answers[1]["result"].(map[string]any)["tools"].([]any); len(tools) != 10 {
		t.Errorf("tools/list: %v", answers[1])
	}
}

// A send_async whose stdin ends right after it is answered with its
// contextId, and its task completes through a worker: one run.
func TestMCPServerSendAsyncBeforeEOF(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_async","arguments":{"agent":"audit-agent","message":"Closed at once"}}}`
	answers := runMCPLines(t, p, mcpInitLine, mcpInitializedLine, call)
	if len(answers) != 2 || fmt.Sprint(answers[1]["id"]) != "3" {
		t.Fatalf("answers %v", answers)
	}
	res, _ := answers[1]["result"].(map[string]any)
	doc, _ := res["structuredContent"].(map[string]any)
	id, _ := doc["context_id"].(string)
	if res["isError"] == true || doc["state"] != "queued" || id == "" {
		t.Fatalf("send_async: %v", answers[1])
	}
	r := p.run("result", id, "--wait", "--timeout", "60s", "--json")
	d := decodeTask(t, r.stdout)
	if r.code != ExitOK || d.State != "completed" || d.Reply == nil || *d.Reply != "Report for Closed at once: 14 escalations." || sim.Runs(id) != 1 {
		t.Errorf("the task: %d %+v, %d runs", r.code, d, sim.Runs(id))
	}
	p.waitWorkersExit()
}

// mcpInstallDoc runs mcp install with --json and decodes its document.
func mcpInstallDoc(t *testing.T, h *harness, args ...string) (result, []string, []string) {
	t.Helper()
	r := h.run(append([]string{"mcp", "install", "--json"}, args...)...)
	r.expect(t, ExitOK)
	var doc struct {
		Args     []string
		Warnings []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	// (this test binary is a temporary build of go test: warned of last)
	if n := len(doc.Warnings); n == 0 || !strings.Contains(doc.Warnings[n-1], "is a temporary build of go run") {
		t.Fatalf("warnings %q", doc.Warnings)
	}
	return r, doc.Args, doc.Warnings[:len(doc.Warnings)-1]
}

// mcp install checks the settings the entry's process will have (HOME and
// the entry's env and flags alone): nothing configured is a one-line
// warning that says where to configure; a profile that holds the URL and
// key is not warned of, whatever this shell's environment adds; an entry
// installed with a profile keeps it on a reinstall that chooses none,
// saying so, and --profile default drops it.
func TestMCPInstallChecksTheEntrysSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	_, _, warnings := mcpInstallDoc(t, h, "--target", "cursor", "--dry-run")
	if len(warnings) != 1 || strings.Contains(warnings[0], "\n") ||
		!strings.HasPrefix(warnings[0], `cursor's a2a-courier server is not configured: no Kibana URL and no API key (there is no config file): every tool would answer "not configured"; `+
			"configure it: a2a-courier config set kibana-url <url> --profile default; a2a-courier config set api-key --profile default < key-file") {
		t.Errorf("nothing configured: %q", warnings)
	}
	if r := h.run("mcp", "install", "--target", "cursor", "--dry-run"); !strings.Contains(r.stderr, "warning: cursor's a2a-courier server is not configured") {
		t.Errorf("nothing configured, as text: %q", r.stderr)
	}

	writeConfig(t, h, "profiles:\n  sim:\n    kibana_url: http://127.0.0.1:5601\n    api_key: "+testKey+"\n", 0o600)
	h.env["A2A_COURIER_PROFILE"] = "sim"
	h.env["KIBANA_URL"] = "http://127.0.0.1:5601"
	h.env["KIBANA_API_KEY"] = testKey
	r, args, warnings := mcpInstallDoc(t, h, "--target", "cursor")
	if strings.Join(args, " ") != "mcp --profile sim" || len(warnings) != 0 {
		t.Errorf("a profile with both: %q %q", args, warnings)
	}
	for k := range map[string]bool{"A2A_COURIER_PROFILE": true, "KIBANA_URL": true, "KIBANA_API_KEY": true} {
		delete(h.env, k)
	}
	r, args, warnings = mcpInstallDoc(t, h, "--target", "cursor")
	if strings.Join(args, " ") != "mcp --profile sim" || len(warnings) != 0 ||
		!strings.Contains(r.stderr, "kept --profile sim of the existing entry (--profile <name> chooses another, --profile default drops it)") {
		t.Errorf("a reinstall with no profile: %q %q %q", args, warnings, r.stderr)
	}
	// The restart line, with the command as written, only when the file
	// changed.
	if r := h.run("mcp", "install", "--target", "cursor"); r.code != ExitOK || !strings.HasPrefix(r.stdout, "unchanged: ") || strings.Contains(r.stderr, "restart") {
		t.Errorf("unchanged: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := h.run("mcp", "install", "--target", "gemini", "--profile", "sim"); r.code != ExitOK || !strings.HasPrefix(r.stdout, "created: ") ||
		!strings.Contains(r.stderr, "restart gemini to load the a2a-courier server ("+os.Args[0]+" mcp --profile sim)") {
		t.Errorf("the command as written: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// --profile default drops it, even beside A2A_COURIER_PROFILE; its
	// process has no default profile configured, and is told so.
	h.env["A2A_COURIER_PROFILE"] = "sim"
	r, args, warnings = mcpInstallDoc(t, h, "--target", "cursor", "--profile", "default")
	if strings.Join(args, " ") != "mcp" || !strings.Contains(r.stderr, "dropped --profile sim of the existing entry") ||
		len(warnings) != 1 || !strings.Contains(warnings[0], "no Kibana URL and no API key (in profile default of ") {
		t.Errorf("--profile default: %q %q %q", args, warnings, r.stderr)
	}
	// A profile that holds the URL only: the key is missing, and named.
	writeConfig(t, h, "profiles:\n  lab:\n    kibana_url: http://127.0.0.1:5601\n", 0o600)
	h.env["A2A_COURIER_PROFILE"] = "lab"
	_, _, warnings = mcpInstallDoc(t, h, "--target", "gemini", "--dry-run")
	if len(warnings) != 1 || !strings.Contains(warnings[0], "is not configured: no API key (in profile lab of ") ||
		!strings.Contains(warnings[0], "configure it: a2a-courier config set api-key --profile lab < key-file, then check with a2a-courier doctor") {
		t.Errorf("no key: %q", warnings)
	}
	checkOneLineError(t, h.run("mcp", "install"), ExitUsage, "--target is required: claude-desktop, cursor, vscode or gemini")
}

// The hints of the tools' texts are in tool terms (an MCP client runs no
// shell), and so are those of structuredContent, which keeps the --json
// document's fields.
func TestMCPServerHintsInToolTerms(t *testing.T) {
	t.Parallel()
	p := newProc(t, startSim(t, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := startMCP(t, ctx, p)
	defer m.cs.Close()
	const id = "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"
	res, doc, text := m.call("result", map[string]any{"context_id": "a2a-" + id})
	errDoc, _ := doc["error"].(map[string]any)
	if want := "no local record of task a2a-" + id + "\nhint: that is a conversation id: its contextId is " + id + ` (the result tool with context_id "` + id + `")`; !res.IsError || text != want ||
		errDoc["hint"] != "that is a conversation id: its contextId is "+id+` (the result tool with context_id "`+id+`")` {
		t.Errorf("result of a conversation id: %v %v %q", res.IsError, doc, text)
	}
	res, doc, text = m.call("send", map[string]any{"agent": "audit-agent", "message": "go on", "context_id": "bogus", "wait_seconds": 5})
	errDoc, _ = doc["error"].(map[string]any)
	if hint, _ := errDoc["hint"].(string); !res.IsError || !strings.Contains(text, "\nhint: contextIds made by a2a-courier (and by Kibana) are UUIDs; the history tool lists the conversations") ||
		!strings.HasSuffix(text, "to start a new conversation, leave out context_id") || strings.Contains(text, "a2a-courier history") || strings.Contains(text, "--") ||
		!strings.HasPrefix(text, errDoc["message"].(string)+"\nhint: "+hint) || strings.Contains(hint, "a2a-courier history") {
		t.Errorf("send to an unknown context: %v %v %q", res.IsError, doc, text)
	}
}

// mcp install, as a process, on the files the trials found: an empty
// servers object (the most common starting file) gets the entry, and so
// do an empty file ("added", not "created") and one that starts with a
// byte order mark (kept); a file
// nested four million levels deep (8 MB) and one with two "mcpServers"
// are refused with one line and a hint, exit 2, --dry-run or not, the
// file left as it was.
func TestMCPInstallRefusesWhatItCannotEdit(t *testing.T) {
	t.Parallel()
	p := newProc(t, startSim(t, nil))
	path := filepath.Join(p.env["HOME"], ".cursor", "mcp.json")
	ownfile.MkdirAll(filepath.Dir(path))
	write := func(s string) {
		if err := writePrivate(path, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers": {}}`)
	if r := p.run("mcp", "install", "--target", "cursor"); r.code != ExitOK || r.stdout != "added: "+path+"\n" {
		t.Errorf("an empty mcpServers: %d %q %q", r.code, r.stdout, r.stderr)
	}
	var doc struct {
		MCPServers map[string]struct{ Command string } `json:"mcpServers"`
	}
	if b, _ := os.ReadFile(path); json.Unmarshal(b, &doc) != nil || doc.MCPServers["a2a-courier"].Command != os.Args[0] {
		t.Errorf("the file: %s", b)
	}
	// An empty file is added to, not created; a byte order mark is kept.
	for _, file := range []string{"", " \n", "\ufeff{\"mcpServers\": {}}\n"} {
		write(file)
		r := p.run("mcp", "install", "--target", "cursor")
		b, _ := os.ReadFile(path)
		if r.code != ExitOK || r.stdout != "added: "+path+"\n" || !strings.HasPrefix(string(b), "\ufeff") == strings.HasPrefix(file, "\ufeff") ||
			json.Unmarshal([]byte(strings.TrimPrefix(string(b), "\ufeff")), &doc) != nil || doc.MCPServers["a2a-courier"].Command != os.Args[0] {
			t.Errorf("%q: %d %q %q\n%q", file, r.code, r.stdout, r.stderr, b)
		}
	}
	for file, want := range map[string]string{
		strings.Repeat("[", 4_000_000) + strings.Repeat("]", 4_000_000): path + ": the file nests deeper than 1000 levels: not an MCP configuration",
		`{"mcpServers": {}, "mcpServers": {"x": {}}}`:                   path + `: the file has "mcpServers" twice at its top level: the assistant reads only the last`,
	} {
		write(file)
		for _, dry := range []string{"--dry-run", "--target=cursor"} {
			r := p.run("mcp", "install", "--target", "cursor", dry)
			checkOneLineError(t, r, ExitUsage, want)
			if !strings.HasSuffix(r.stderr, "hint: fix or move the file, then run mcp install again\n") {
				t.Errorf("the hint: %q", r.stderr)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != file {
			t.Errorf("the file changed")
		}
	}
}

// `a2a-courier mcp` as a process, its stdin held open as an assistant
// holds it: the messages the trial sent (a line that is not JSON, [],
// {"jsonrpc":"2.0"}, version 1.0, an object id) each get a JSON-RPC
// error while a send is in flight; the send then gets its reply, a later
// request its answer, and the server exits 0 once its stdin closes.
func TestMCPServerSurvivesBadMessages(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := p.cmd(ctx, "", "mcp")
	c.Stdin = nil
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	answers := make(chan map[string]any, 20)
	go func() {
		dec := json.NewDecoder(stdout)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(answers)
				return
			}
			answers <- m
		}
	}()
	next := func(what string) map[string]any {
		t.Helper()
		m, ok := <-answers
		if !ok {
			t.Fatalf("the server's stdout ended, waiting for %s\n%s", what, stderr.String())
		}
		return m
	}
	io.WriteString(stdin, mcpInitLine+"\n"+mcpInitializedLine+"\n")
	next("initialize")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"send","method":"tools/call","params":{"name":"send","arguments":{"agent":"audit-agent","message":"Still here?","wait_seconds":60}}}`+"\n")
	for _, l := range []string{"hello?", "[]", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"1.0","id":"old","method":"ping"}`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`} {
		io.WriteString(stdin, l+"\n")
	}
	got := map[string]int{}
	var sent map[string]any
	for len(got) < 3 || sent == nil {
		m := next("the error answers and the send's")
		if fmt.Sprint(m["id"]) == "send" {
			sent = m
			continue
		}
		e, _ := m["error"].(map[string]any)
		got[fmt.Sprint(m["id"], " ", e["code"])]++
	}
	if want := map[string]int{"<nil> -32700": 1, "<nil> -32600": 3, "old -32600": 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("error answers %v, want %v", got, want)
	}
	res, _ := sent["result"].(map[string]any)
	doc, _ := res["structuredContent"].(map[string]any)
	if res["isError"] == true || doc["state"] != "completed" || doc["reply"] != "Report for Still here?: 14 escalations." {
		t.Errorf("the send in flight: %v", sent)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`+"\n")
	if m := next("tools/list"); fmt.Sprint(m["id"]) != "list" || m["result"] == nil {
		t.Errorf("tools/list: %v", m)
	}
	stdin.Close()
	if err := c.Wait(); err != nil {
		t.Errorf("the server's exit: %v\n%s", err, stderr.String())
	}
	if ctxID, _ := doc["context_id"].(string); sim.Runs(ctxID) != 1 {
		t.Errorf("%d runs of the send", sim.Runs(ctxID))
	}
}

// `a2a-courier mcp` sends files only from the directories
// A2A_COURIER_MCP_FILES names, and never its own, as its configuration
// names them: the config file and directory, the state directory, the key
// file of a profile, the token file of a peer and of --token-file, even
// when they are inside an allowed directory. Without the variable no file
// is sent. A refused file never reaches the agent (a2a-js's parts agent,
// which names each file it gets, sees only the allowed one).
func TestMCPServerSendsOnlyAllowedFiles(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	sim := startSim(t, nil)
	p := newProc(t, sim)
	url := js.URL(interoptest.MountV1, interoptest.AgentParts)
	allowed := t.TempDir()
	write := func(rel, content string) string {
		path := filepath.Join(allowed, rel)
		ownfile.MkdirAll(filepath.Dir(path))
		if err := writePrivate(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := write("keys/kibana.key", testKey)
	token := write("tokens/peer.token", "peer-token")
	flagToken := write("tokens/flag.token", "flag-token")
	p.env["A2A_COURIER_CONFIG_DIR"] = filepath.Join(allowed, "conf")
	conf := write("conf/config.yaml", "profiles:\n  default:\n    kibana_url: "+sim.URL+"\n    api_key_file: "+key+"\npeers:\n  lab:\n    url: "+url+"\n    token_file: "+token+"\n")
	other := write("conf/notes.txt", "in the config directory")
	p.env["A2A_COURIER_STATE_DIR"] = filepath.Join(allowed, "state")
	record := write("state/some-record.json", "{}")
	ok := write("report.csv", "a,b\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	m := startMCP(t, ctx, p)
	res, _, text := m.call("send", map[string]any{"url": url, "message": "look", "files": []string{ok}})
	if !res.IsError || !strings.HasPrefix(text, "files: the MCP server sends no file: A2A_COURIER_MCP_FILES names no directory files may be sent from\nhint: ") {
		t.Errorf("without A2A_COURIER_MCP_FILES: %v %q", res.IsError, text)
	}
	m.cs.Close()

	p.env["A2A_COURIER_MCP_FILES"] = allowed + string(os.PathListSeparator) + "not/absolute"
	m = startMCP(t, ctx, p, "--token-file", flagToken)
	defer m.cs.Close()
	for _, f := range []string{conf, other, key, token, flagToken, record} {
		for _, tool := range []string{"send", "send_async"} {
			res, doc, text := m.call(tool, map[string]any{"url": url, "message": "look", "files": []string{f}})
			if errDoc, _ := doc["error"].(map[string]any); !res.IsError || !strings.HasPrefix(text, fmt.Sprintf("files: %q is a2a-courier's own (", f)) || errDoc["code"] != "usage" {
				t.Errorf("%s %s: %v %q", tool, f, res.IsError, text)
			}
		}
	}
	res, doc, text := m.call("send", map[string]any{"url": url, "message": "look", "files": []string{ok}})
	if r, _ := doc["reply"].(string); res.IsError || doc["state"] != "completed" || !strings.Contains(r, "report.csv") {
		t.Errorf("an allowed file: %v %v %q", res.IsError, doc, text)
	}
	if r := p.run("tasks", "--json"); strings.Count(r.stdout, `"context_id"`) != 1 {
		t.Errorf("the tasks: one, of the allowed file: %s", r.stdout)
	}
	if e := m.stderr.String(); !strings.Contains(e, "A2A_COURIER_MCP_FILES: ignored not/absolute: not absolute paths") {
		t.Errorf("the server's stderr: %q", e)
	}
}
