package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	cli "github.com/a2a-courier/a2a-courier/cmd/cli"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/internal/simulator/agentbuilder"
	"github.com/a2a-courier/a2a-courier/store"
)

// The tests of this package drive the MCP server with the real CLI behind
// it, as `a2a-courier mcp` has it (cmd/cli's mcpRunner): each tool's
// command line is cli.Run on a copy of a Process with its own environment
// and state directory, against the Agent Builder simulator on loopback (or
// the a2a-js fixture), with the SDK's client and server on both ends of an
// in-memory transport. The stdio binary itself is tested in cmd/cli
// (TestMCPServer).

// TestMain lets this test binary stand in for the a2a-courier binary built
// with the simulator: the detached worker a send starts re-runs it, and it
// runs the real Main.
func TestMain(m *testing.M) {
	if os.Getenv("A2A_COURIER_TEST_MAIN") == "1" {
		os.Exit(cli.Main(agentbuilder.Start))
	}
	os.Exit(m.Run())
}

const testKey = "dGVzdDprZXk="

// Agents of the simulator the tests use.
const (
	replyTemplate = "Report for {{input}}: 14 escalations."
	askPrompt     = "Delete 3 indices?"
)

func startSim(t *testing.T) *agentbuildertest.Server {
	t.Helper()
	s := agentbuildertest.NewServer(agentbuildertest.Options{
		Keys: []agentbuildertest.Key{{APIKey: testKey, Username: "svc-a2a"}},
		Agents: []agentbuildertest.Agent{
			{ID: "audit-agent", Name: "Audit Analyst", Description: "Analyses audit logs.", Tools: []string{"platform.core.search"},
				RunTime: 50 * time.Millisecond, Reply: replyTemplate},
			// paced-agent takes long enough for a few progress
			// notifications; slow-agent outlasts every wait of a test.
			{ID: "paced-agent", Name: "Paced", Description: "Takes a second.", RunTime: time.Second, Reply: "paced: {{input}}"},
			{ID: "slow-agent", Name: "Slow", Description: "Takes long.", RunTime: 30 * time.Second},
			{ID: "flaky-agent", Name: "Flaky", Description: "Fails.", Fail: "No complete response received from chat service", RunTime: 10 * time.Millisecond},
			{ID: "asks", Name: "Asks", Description: "Asks.", AwaitPrompt: askPrompt, RunTime: 10 * time.Millisecond},
			{ID: "wordy-agent", Name: "Wordy", Description: "Says much.", RunTime: time.Millisecond, ReplyBytes: 50000},
		},
	})
	t.Cleanup(s.Close)
	return s
}

// courier is the CLI of one user: an environment, a state directory, the
// simulator as its Kibana.
type courier struct {
	t   *testing.T
	env map[string]string

	mu sync.Mutex
	// ran notes each command line the server ran and its stdin, as they
	// reached cli.Run (an observation: the command runs all the same).
	ran []ranLine
}

type ranLine struct {
	args  []string
	stdin string
}

func newCourier(t *testing.T, sim *agentbuildertest.Server) *courier {
	t.Helper()
	c := &courier{t: t, env: map[string]string{
		"A2A_COURIER_STATE_DIR": filepath.Join(t.TempDir(), "state"),
		"A2A_COURIER_TEST_MAIN": "1",
		"HOME":                  t.TempDir(),
		// A worker a failed test leaves behind gives up soon.
		"A2A_COURIER_MAX_WAIT": "3m",
		"KIBANA_URL":           sim.URL,
		"KIBANA_API_KEY":       testKey,
	}}
	t.Cleanup(c.killWorkers)
	return c
}

// process is the Process a command runs with, as cmd/cli's mcpRunner
// copies it: no terminal, no signal handling of its own.
func (c *courier) process(args []string, stdin io.Reader, stdout, stderr io.Writer) *cli.Process {
	env := c.env
	return &cli.Process{
		Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ: func() []string {
			kv := []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			return kv
		},
		Executable: func() (string, error) { return os.Args[0], nil },
		Now:        time.Now,
		Simulator:  agentbuilder.Start,
	}
}

// run is the server's Runner: the real CLI.
func (c *courier) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, ev mcpserver.Events) int {
	b, err := io.ReadAll(stdin)
	if err != nil {
		c.t.Errorf("stdin of %q: %v", args, err)
	}
	c.mu.Lock()
	c.ran = append(c.ran, ranLine{append([]string{}, args...), string(b)})
	c.mu.Unlock()
	p := c.process(args, bytes.NewReader(b), stdout, stderr)
	p.Events, p.Tool = ev, true // as mcpRunner: the MCP server is the caller
	return cli.Run(ctx, p)
}

// ranCount is how many command lines the server ran.
func (c *courier) ranCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ran)
}

func (c *courier) lastRan() ranLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran[len(c.ran)-1]
}

// hasRecord is cmd/cli's: whether the state directory holds the task.
func (c *courier) hasRecord(contextID string) bool {
	_, err := c.record(contextID)
	return err == nil
}

func (c *courier) record(contextID string) (*store.Record, error) {
	st, err := store.Open(c.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		return nil, err
	}
	return st.Load(contextID)
}

func (c *courier) options() mcpserver.Options {
	return mcpserver.Options{Run: c.run, HasRecord: c.hasRecord}
}

// cli runs a command line directly (not through the server), to look at
// what a tool did; it returns stdout and the exit code.
func (c *courier) cli(stdin string, args ...string) (string, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := cli.Run(ctx, c.process(args, strings.NewReader(stdin), &out, &errb))
	return out.String(), code
}

// ledger is the local tasks, by contextId, with their states.
func (c *courier) ledger() map[string]string {
	c.t.Helper()
	out, code := c.cli("", "tasks", "--json")
	var doc struct {
		Tasks []struct {
			ContextID string `json:"context_id"`
			State     string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		c.t.Fatalf("tasks --json: %d %v %q", code, err, out)
	}
	got := map[string]string{}
	for _, r := range doc.Tasks {
		got[r.ContextID] = r.State
	}
	return got
}

// killWorkers kills the detached workers of the state directory when the
// test ends (they run detached and would outlive the test binary), and
// waits for them: found by the pids the store and the spawner record.
func (c *courier) killWorkers() {
	proctest.EndWorkers(c.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
}

// session is a client connected to a server over the SDK's in-memory
// transports; it notes the progress notifications it gets.
type session struct {
	t   *testing.T
	cs  *mcp.ClientSession
	mu  sync.Mutex
	msg []string
}

func connect(t *testing.T, o mcpserver.Options) *session {
	t.Helper()
	s := &session{t: t}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := mcpserver.New(o).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			s.mu.Lock()
			s.msg = append(s.msg, r.Params.Message)
			s.mu.Unlock()
		},
	})
	s.cs, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cs.Close() })
	return s
}

// call calls a tool, asking for progress; a protocol error fails the test.
// It returns the result, its structuredContent and its text.
func (s *session) call(name string, args map[string]any) (*mcp.CallToolResult, map[string]any, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(name)
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		s.t.Fatalf("%s: a protocol error: %v", name, err)
	}
	var doc map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &doc)
	return res, doc, res.Content[0].(*mcp.TextContent).Text
}

func (s *session) progress() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.msg...)
}

// waitUntil polls cond until it holds, failing the test after max.
func waitUntil(t *testing.T, what string, max time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(max)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
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
