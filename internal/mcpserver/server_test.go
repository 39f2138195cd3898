package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests check the adapter's own rules (which command line a tool
// runs, how exit codes become tool results, progress while waiting) with a
// command runner that answers as the CLI's documents do. The real CLI
// behind a real stdio pipe is tested in cmd/cli (TestMCPServer).

type scripted struct {
	mu    sync.Mutex
	calls [][]string
	stdin []string
	// answer returns stdout, stderr (written before the wait), a wait and
	// the exit code for a command line.
	answer func(args []string) (string, string, time.Duration, int)
}

func (s *scripted) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	b, _ := io.ReadAll(stdin)
	s.mu.Lock()
	s.calls = append(s.calls, args)
	s.stdin = append(s.stdin, string(b))
	s.mu.Unlock()
	out, errText, wait, code := s.answer(args)
	io.WriteString(stderr, errText)
	select {
	case <-time.After(wait):
	case <-ctx.Done():
	}
	io.WriteString(stdout, out)
	return code
}

func connect(t *testing.T, o Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	srv := New(o)
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestToolsRunTheirCommands(t *testing.T) {
	sc := &scripted{answer: func(args []string) (string, string, time.Duration, int) {
		return `{"context_id":"c-1","state":"completed","reply":"hello"}`, "", 0, 0
	}}
	cs := connect(t, Options{Run: sc.run, DefaultWait: 30 * time.Second, MaxWait: time.Minute})
	ctx := context.Background()
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		want  string
		stdin string
	}{
		{"discover", nil, "discover --json", ""},
		{"get_card", map[string]any{"agent": "audit-agent"}, "get-card audit-agent --json", ""},
		{"send", map[string]any{"agent": "audit-agent", "message": "q", "wait_seconds": 600}, "send audit-agent - --json --timeout 60s --max-chars 20000", "q"},
		{"send", map[string]any{"url": "https://a.example/x", "message": "q", "context_id": "c-0", "max_chars": 10}, "send --url https://a.example/x - --json --context c-0 --timeout 30s --max-chars 10", "q"},
		{"send_async", map[string]any{"agent": "audit-agent", "message": "long"}, "send-async audit-agent - --json", "long"},
		{"result", map[string]any{"context_ids": []string{"a", "b"}, "any": true, "wait_seconds": 5}, "result a b --json --wait --timeout 5s --any --max-chars 20000", ""},
		{"fetch", map[string]any{"context_id": "c-1"}, "fetch c-1 --json --max-chars 20000", ""},
		{"history", map[string]any{"limit": 5}, "history --json --limit 5", ""},
		{"show", map[string]any{"conversation": "a2a-c-1", "all_rounds": true}, "show a2a-c-1 --json --all-rounds --max-chars 20000", ""},
		{"cancel", map[string]any{"context_id": "c-1"}, "cancel c-1 --json", ""},
		{"tasks", map[string]any{"state": "running"}, "tasks --json --state running", ""},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tc.tool, err, res)
		}
		sc.mu.Lock()
		got, stdin := strings.Join(sc.calls[len(sc.calls)-1], " "), sc.stdin[len(sc.stdin)-1]
		sc.mu.Unlock()
		if got != tc.want || stdin != tc.stdin {
			t.Errorf("%s: ran %q (stdin %q), want %q (%q)", tc.tool, got, stdin, tc.want, tc.stdin)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(b), `"reply":"hello"`) {
			t.Errorf("%s: structured %s", tc.tool, b)
		}
	}
	// A bad call is a tool error, not a protocol failure; an argument that
	// would read as a flag of the command line is never run.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"message": "q"}})
	if err != nil || !res.IsError {
		t.Fatalf("no agent: %v %+v", err, res)
	}
	sc.mu.Lock()
	before := len(sc.calls)
	sc.mu.Unlock()
	for _, bad := range []struct {
		tool string
		args map[string]any
	}{
		{"send", map[string]any{"agent": "--kibana-url=http://elsewhere.example", "message": "q"}},
		{"result", map[string]any{"context_ids": []string{"c-1", "--api-key-file=/etc/shadow"}}},
		{"fetch", map[string]any{"context_id": "--url=http://x"}},
		{"show", map[string]any{"conversation": "-v"}},
		{"cancel", map[string]any{"context_id": "--profile=x"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bad.tool, Arguments: bad.args})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "starts with '-'") ||
			!strings.Contains(res.Content[0].(*mcp.TextContent).Text, "\nhint: ") {
			t.Errorf("%s %v: %v %+v", bad.tool, bad.args, err, res)
		}
	}
	// Every refused argument: a one-line message, a hint, nothing run.
	for _, bad := range []struct {
		tool, want string
		args       map[string]any
	}{
		{"send", "the message is empty", map[string]any{"agent": "a", "message": "  "}},
		{"send_async", "give agent or url, not both", map[string]any{"agent": "a", "url": "http://x", "message": "q"}},
		{"send", "max_chars must be 1 or more, not -5", map[string]any{"agent": "a", "message": "q", "max_chars": -5}},
		{"tasks", "limit must be 1 or more, not -1", map[string]any{"limit": -1}},
		{"history", "limit must be 1 or more, not -3", map[string]any{"limit": -3}},
		{"fetch", "give context_id or task_id, not both", map[string]any{"context_id": "c-1", "task_id": "t-1", "url": "http://x"}},
		{"result", "give context_id (or context_ids)", nil},
		{"show", "give conversation", map[string]any{"conversation": ""}},
		{"cancel", "give context_id", map[string]any{"context_id": ""}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bad.tool, Arguments: bad.args})
		if err != nil {
			t.Fatalf("%s: a protocol error: %v", bad.tool, err)
		}
		lines := strings.Split(res.Content[0].(*mcp.TextContent).Text, "\n")
		b, _ := json.Marshal(res.StructuredContent)
		if !res.IsError || len(lines) != 2 || !strings.HasPrefix(lines[0], bad.want) || !strings.HasPrefix(lines[1], "hint: ") ||
			!strings.Contains(string(b), `"code":"usage"`) {
			t.Errorf("%s %v: %q %s", bad.tool, bad.args, lines, b)
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.calls) != before {
		t.Errorf("a flag-like argument ran: %q", sc.calls[before:])
	}
}

func TestExitCodesBecomeResults(t *testing.T) {
	for _, tc := range []struct {
		code    int
		doc     string
		isError bool
		text    string
	}{
		{0, `{"state":"completed","reply":"the answer"}`, false, "the answer"},
		{7, `{"context_id":"c","state":"input_required","reply":"Delete?"}`, false, "the agent asks"},
		{8, `{"context_id":"c","state":"working","resume":"a2a-courier result c --wait"}`, false, "do not send the message again"},
		{6, `{"context_id":"c","state":"failed","error":{"code":"task_failed","message":"task c failed: boom","hint":"sending again starts a new run"}}`, true, "hint: sending again"},
		{5, `{"error":{"code":"not_found","message":"agent x not found","hint":"check the id"}}`, true, "agent x not found"},
	} {
		sc := &scripted{answer: func([]string) (string, string, time.Duration, int) { return tc.doc, "", 0, tc.code }}
		cs := connect(t, Options{Run: sc.run})
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "result", Arguments: map[string]any{"context_id": "c"}})
		if err != nil {
			t.Fatalf("exit %d: a protocol error: %v", tc.code, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != tc.isError || !strings.Contains(text, tc.text) {
			t.Errorf("exit %d: isError %v, %q", tc.code, res.IsError, text)
		}
	}
}

func TestProgressWhileWaiting(t *testing.T) {
	sc := &scripted{answer: func([]string) (string, string, time.Duration, int) {
		return `{"context_id":"c-9","state":"completed","reply":"done"}`, "task c-9 started\n", 250 * time.Millisecond, 0
	}}
	st, ct := mcp.NewInMemoryTransports()
	srv := New(Options{Run: sc.run, ProgressEvery: 50 * time.Millisecond})
	ss, _ := srv.Connect(context.Background(), st, nil)
	defer ss.Close()
	var mu sync.Mutex
	var got []string
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, fmt.Sprint(r.Params.Message))
			mu.Unlock()
		},
	})
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"agent": "a", "message": "q"}}
	params.SetProgressToken("p-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !strings.Contains(got[0], "context c-9") {
		t.Errorf("progress %q", got)
	}
}

// The short text of several tasks' results names the first to finish and
// those still running; that of the ledger is a line a task.
func TestSummariesOfListsAndSeveralTasks(t *testing.T) {
	multi := `{"tasks":[{"context_id":"a","state":"working"},{"context_id":"b","state":"completed","reply":"B done"}],"first":"b","pending":["a"]}`
	if got := (&tools{}).summary(json.RawMessage(multi), 0, "result"); got != "task b: completed (the first to finish)\nB done\nstill running: a. Nothing is lost: call the result tool with these context_ids later; do not send the messages again." {
		t.Errorf("results: %q", got)
	}
	ledger := `{"source":"local","tasks":[{"context_id":"a","agent":"audit","state":"failed","age_seconds":754,"summary":"boom"},` +
		`{"context_id":"b","agent":"audit","state":"working","age_seconds":3,"summary":""}],"total":2}`
	if got := (&tools{}).summary(json.RawMessage(ledger), 0, "tasks"); got != "a\taudit\tfailed\t12m ago\tboom\nb\taudit\tworking\t3s ago" {
		t.Errorf("ledger: %q", got)
	}
	remote := `{"source":"remote","url":"http://a","agent":"echo","tasks":[{"context_id":"c1","state":"completed","task_id":"t1","updated_at":"2026-12-01T10:00:00Z","summary":"done"},` +
		`{"context_id":"c1","state":"working","task_id":"t2"}],"total":2,"more":false}`
	if got := (&tools{}).summary(json.RawMessage(remote), 0, "tasks"); got != "c1\ttask t1\tcompleted\t2026-12-01T10:00:00Z\tdone\nc1\ttask t2\tworking" {
		t.Errorf("remote: %q", got)
	}
	if got := (&tools{}).summary(json.RawMessage(`{"source":"remote","url":"http://a","tasks":[],"total":0}`), 0, "tasks"); got != "the agent lists no tasks that match" {
		t.Errorf("remote, empty: %q", got)
	}
	if got := StartedContext("warning: x\ntask 3f6c-1 started; its reply: a2a-courier result 3f6c-1 --wait\n"); got != "3f6c-1" {
		t.Errorf("started: %q", got)
	}
}

// The text of a question names the route its document's answer command
// takes: a generic agent's task (url or peer, task_id), a Kibana agent's
// context; the text of a task still running names the tool that goes on
// (fetch after fetch), and says nothing is lost only where a record is.
func TestNextStepTexts(t *testing.T) {
	ask := func(answer string) string {
		doc := fmt.Sprintf(`{"context_id":"c-1","agent":"ask","state":"input_required","reply":"Your name?","task_id":"t-1","answer":%q}`, answer)
		return (&tools{}).summary(json.RawMessage(doc), exitInputRequired, "send")
	}
	for answer, want := range map[string]string{
		"a2a-courier send --url http://127.0.0.1:9/a2a/ask --task t-1 --json -":         `url "http://127.0.0.1:9/a2a/ask", task_id "t-1"`,
		"a2a-courier send lab-peer --task 't 1' --timeout 30s --json -":                 `agent "lab-peer", task_id "t 1"`,
		"a2a-courier send audit-agent --context c-1 --json -":                           `agent "audit-agent", context_id "c-1"`,
		"a2a-courier send --url 'http://h/it'\\''s' --task t-1 --profile prod --json -": `url "http://h/it's", task_id "t-1"`,
		"": `agent "ask", context_id "c-1"`,
	} {
		if got := ask(answer); got != "the agent asks (context c-1): Your name?\nAnswer with the send tool: "+want+", the user's answer as message." {
			t.Errorf("%q: %q", answer, got)
		}
	}

	working := `{"context_id":"c-2","state":"working","reason":"the server has no reply stored yet","resume":"a2a-courier fetch c-2 --json"}`
	known := map[string]bool{"c-3": true}
	tl := &tools{o: Options{HasRecord: func(id string) bool { return known[id] }}}
	got := tl.summary(json.RawMessage(working), exitStillRunning, "fetch")
	if !strings.Contains(got, "Call the fetch tool again with the same arguments later") || strings.Contains(got, "result tool") ||
		strings.Contains(got, "Nothing is lost") || !strings.Contains(got, "the server has no reply stored yet") {
		t.Errorf("fetch, no record: %q", got)
	}
	known["c-2"] = true
	if got := tl.summary(json.RawMessage(working), exitStillRunning, "fetch"); !strings.Contains(got, `Nothing is lost: this machine has the task's record; the result tool with context_id "c-2" follows it.`) {
		t.Errorf("fetch, a record: %q", got)
	}
	sent := `{"context_id":"c-3","state":"working","resume":"a2a-courier result c-3 --wait --json"}`
	if got := tl.summary(json.RawMessage(sent), exitStillRunning, "send"); got != `still running (context c-3, state working): the task goes on in a background worker. `+
		`Nothing is lost: call the result tool with context_id "c-3" later; do not send the message again. With wait_seconds, result waits for the reply.` {
		t.Errorf("send: %q", got)
	}
}

// A command that panics is a tool error with a one-line message and a
// hint; the stack goes to the server's log only, and the server goes on
// serving.
func TestPanicIsAToolError(t *testing.T) {
	sc := &scripted{answer: func(args []string) (string, string, time.Duration, int) {
		if args[0] == "history" {
			var m map[string]int
			m["boom"]++ // a nil map: a runtime panic
		}
		return `{"context_id":"c-1","state":"completed","reply":"fine"}`, "", 0, 0
	}}
	var log syncBuffer
	cs := connect(t, Options{Run: sc.run, Log: &log})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "history"})
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	lines := strings.Split(text, "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "history stopped on an internal error") || !strings.HasPrefix(lines[1], "hint: ") ||
		strings.Contains(text, "goroutine") || strings.Contains(text, "nil map") {
		t.Errorf("text %q", text)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"code":"unexpected"`) {
		t.Errorf("structured %s", b)
	}
	if l := log.String(); !strings.Contains(l, "internal error in history: assignment to entry in nil map") || !strings.Contains(l, "goroutine") {
		t.Errorf("log %q", l)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "show", Arguments: map[string]any{"conversation": "c-1"}}); err != nil || res.IsError {
		t.Errorf("the server after the panic: %v %+v", err, res)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const (
	initLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsListLine   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// serveLines runs Serve on lines, its input ending right after them, and
// returns the answers it wrote, by id.
func serveLines(t *testing.T, o Options, lines ...string) map[string]map[string]any {
	t.Helper()
	var out syncBuffer
	if err := Serve(context.Background(), o, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	got := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON-RPC: %q", l)
		}
		if id, ok := m["id"]; ok {
			got[fmt.Sprint(id)] = m
		}
	}
	return got
}

// Every request read is answered before Serve returns on the end of its
// input, whatever its method: the client that writes its requests and
// closes its end at once still gets every answer.
func TestEveryRequestAnsweredAtEOF(t *testing.T) {
	sc := &scripted{answer: func(args []string) (string, string, time.Duration, int) {
		return `{"context_id":"c-1","state":"queued"}`, "task c-1 started; its reply: a2a-courier result c-1 --wait\n", 0, 0
	}}
	got := serveLines(t, Options{Run: sc.run}, initLine, initializedLine, toolsListLine)
	if len(got) != 2 || got["1"]["result"] == nil || got["2"]["result"] == nil {
		t.Fatalf("answers %v", got)
	}
	if tools, _ := got["2"]["result"].(map[string]any)["tools"].([]any); len(tools) != 10 {
		t.Errorf("tools/list: %v", got["2"])
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_async","arguments":{"agent":"a","message":"q"}}}`
	got = serveLines(t, Options{Run: sc.run}, initLine, initializedLine, call)
	res, _ := got["3"]["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); len(got) != 2 || sc["context_id"] != "c-1" || res["isError"] == true {
		t.Errorf("send_async: %v", got)
	}
}

// At the end of the input, a call that waits is ended with
// ErrServerStopping and answers; a send that has not recorded its task yet
// is let to record it first, and is ended once it has.
func TestCallsEndedAtEOF(t *testing.T) {
	var mu sync.Mutex
	causes := map[string]error{}
	run := func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		if args[0] == "send" {
			// Records its task a while after the input ended: its
			// context is still live then.
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			causes["send before its task"] = ctx.Err()
			mu.Unlock()
			io.WriteString(stderr, "task c-2 started; its reply: a2a-courier result c-2 --wait\n")
		}
		<-ctx.Done()
		mu.Lock()
		causes[args[0]] = context.Cause(ctx)
		mu.Unlock()
		fmt.Fprintf(stdout, `{"context_id":"c-2","state":"working","resume":"a2a-courier result c-2 --wait"}`)
		return exitStillRunning
	}
	result := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"result","arguments":{"context_id":"c-2","wait_seconds":600}}}`
	send := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send","arguments":{"agent":"a","message":"q","wait_seconds":600}}}`
	got := serveLines(t, Options{Run: run, StopGrace: 10 * time.Minute}, initLine, initializedLine, result, send)
	for _, id := range []string{"3", "4"} {
		res, _ := got[id]["result"].(map[string]any)
		if sc, _ := res["structuredContent"].(map[string]any); sc["state"] != "working" {
			t.Errorf("call %s: %v", id, got[id])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if causes["send before its task"] != nil || causes["send"] != ErrServerStopping || causes["result"] != ErrServerStopping {
		t.Errorf("causes %v", causes)
	}
}

// A send that never records its task is ended all the same once half the
// grace has passed, and answers.
func TestUnrecordedSendForcedAtEOF(t *testing.T) {
	run := func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		<-ctx.Done()
		fmt.Fprintf(stdout, `{"error":{"code":"interrupted","message":"interrupted before the task was recorded; nothing was sent"}}`)
		return 1
	}
	send := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send","arguments":{"agent":"a","message":"q"}}}`
	got := serveLines(t, Options{Run: run, StopGrace: 200 * time.Millisecond}, initLine, initializedLine, send)
	res, _ := got["4"]["result"].(map[string]any)
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "nothing was sent") {
		t.Errorf("send: %v", got)
	}
}
