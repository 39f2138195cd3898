package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/internal/simulator/agentbuilder"
	"github.com/a2a-courier/a2a-courier/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestMain lets this test binary stand in for the a2a-courier binary built
// with the simulator: a worker or a dev-server a test starts runs the real
// Main.
func TestMain(m *testing.M) {
	if os.Getenv("A2A_COURIER_TEST_MAIN") == "1" {
		os.Exit(Main(agentbuilder.Start))
	}
	flag.Parse()
	waitBoundParallel()
	os.Exit(m.Run())
}

// waitBoundParallel runs more of this package's parallel tests at once
// than go test's default (one per CPU) when -parallel is not given: most
// of them wait, not compute. They wait on an agent's run time, a worker's
// poll or a whole process, and the package's own CPU is a small part of
// its wall time (measured on 2 CPUs, docs/performance.md "The commands'
// tests": 18 s of user CPU in 270 s of wall time at -parallel 2, about the
// same CPU in 120 s at -parallel 6). Under Wine every process is a Windows
// process of one wineserver, which is CPU-bound: the default stays there.
func waitBoundParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given || runtime.GOOS == "windows" {
		return
	}
	flag.Set("test.parallel", strconv.Itoa(max(6, 3*runtime.GOMAXPROCS(0))))
}

const (
	testKey        = "dGVzdDprZXk="
	testPublicBase = "http://kibana.example:5601"
)

func simOptions() agentbuildertest.Options {
	return agentbuildertest.Options{
		PublicBaseURL: testPublicBase,
		Keys: []agentbuildertest.Key{
			{APIKey: testKey, Username: "svc-a2a"},
			{APIKey: "bm9zcGFjZTprZXk=", Username: "prod", Spaces: []string{"prod"}},
		},
		Agents: []agentbuildertest.Agent{
			{ID: "elastic-ai-agent", Name: "Elastic AI Agent", Readonly: true, Description: "Answers questions about your data.\nSecond line.",
				Tools: []string{"platform.core.search", "platform.core.list_indices"}, RunTime: 20 * time.Millisecond},
			{ID: "audit-agent", Name: "Audit Analyst", Description: "Analyses audit logs for high-risk operations.",
				Tools: []string{"platform.core.search"}, RunTime: 800 * time.Millisecond, ToolResultBytes: 8 << 10,
				Reply: "Report for {{input}}: 14 escalations."},
			{ID: "flaky-agent", Name: "Flaky", Description: "Fails.", Fail: "No complete response received from chat service", RunTime: 10 * time.Millisecond},
			{ID: "asks", Name: "Asks", Description: "Asks.", AwaitPrompt: "Delete 3 indices?", RunTime: 10 * time.Millisecond},
		},
	}
}

func startSim(t *testing.T, mod func(*agentbuildertest.Options)) *agentbuildertest.Server {
	t.Helper()
	o := simOptions()
	if mod != nil {
		mod(&o)
	}
	s := agentbuildertest.NewServer(o)
	t.Cleanup(s.Close)
	return s
}

// harness runs commands in-process with their own environment.
type harness struct {
	t     *testing.T
	env   map[string]string
	stdin string
	// stdinR, when set, is stdin instead of stdin's text; stdinTTY makes
	// stdin a terminal.
	stdinR   io.Reader
	stdinTTY bool
	tty      bool
	// errTTY makes stderr a terminal (the spinner draws).
	errTTY bool
	// width is the terminal's width; 0 means 100.
	width int
	// now is the process's clock; nil means time.Now.
	now func() time.Time
	// tool runs the commands as the MCP server does (Process.Tool).
	tool bool
}

func newHarness(t *testing.T, sim *agentbuildertest.Server) *harness {
	t.Helper()
	h := &harness{t: t, env: map[string]string{
		"A2A_COURIER_STATE_DIR": filepath.Join(t.TempDir(), "state"),
		"A2A_COURIER_TEST_MAIN": "1",
		"HOME":                  t.TempDir(),
		// Windows' profile folders (internal/userdirs): without them a
		// test under Wine writes into the prefix's real profile.
		"USERPROFILE": t.TempDir(), "APPDATA": t.TempDir(), "LOCALAPPDATA": t.TempDir(),
		// A worker a failed test leaves behind gives up soon.
		"A2A_COURIER_MAX_WAIT": "3m",
	}}
	killWorkersAtCleanup(t, h.env["A2A_COURIER_STATE_DIR"])
	if sim != nil {
		h.env["KIBANA_URL"] = sim.URL
		h.env["KIBANA_API_KEY"] = testKey
	}
	return h
}

type result struct {
	stdout, stderr string
	code           int
}

// runAnswer runs the command of a document's answer field as it is (its
// words are plain tokens in tests), with the answer on stdin.
func (h *harness) runAnswer(t *testing.T, command, answer string) result {
	t.Helper()
	words := strings.Fields(command)
	if len(words) < 2 || words[0] != "a2a-courier" || words[len(words)-1] != "-" {
		t.Fatalf("answer command %q is not an a2a-courier command reading stdin", command)
	}
	saved := h.stdin
	h.stdin = answer
	defer func() { h.stdin = saved }()
	return h.run(words[1:]...)
}

func (h *harness) run(args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.runCtx(ctx, args...)
}

// runCtx runs a command with ctx as the process's context (a test cancels
// it as a signal would).
func (h *harness) runCtx(ctx context.Context, args ...string) result {
	h.t.Helper()
	var out, errb bytes.Buffer
	env := h.env
	width := h.width
	if width == 0 {
		width = 100
	}
	var stdin io.Reader = strings.NewReader(h.stdin)
	if h.stdinR != nil {
		stdin = h.stdinR
	}
	p := &Process{
		Args: args, Stdin: stdin, Stdout: &out, Stderr: &errb,
		StdoutTTY: h.tty, StderrTTY: h.errTTY, StdinTTY: h.stdinTTY,
		TermWidth: func() int { return width },
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			kv = append(kv, "PATH="+os.Getenv("PATH"))
			sort.Strings(kv)
			return kv
		},
		Executable: func() (string, error) { return os.Args[0], nil },
		Now:        time.Now,
		Simulator:  agentbuilder.Start,
	}
	if h.now != nil {
		p.Now = h.now
	}
	p.Tool = h.tool
	code := Run(ctx, p)
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

func (r result) expect(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
}

// afterStarted is stderr without the line send and send-async write before
// anything leaves ("task <contextId> started; …", which internal/mcpserver
// reads for its progress: the two agree here).
func afterStarted(stderr string) string {
	first, rest, ok := strings.Cut(stderr, "\n")
	if ok && startedContext(first) != "" {
		return rest
	}
	return stderr
}

// golden compares got with testdata/<name>.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/cli -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./cmd/cli -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, got, want)
	}
}

// killWorkersAtCleanup kills the workers of a state directory when the test
// ends, and waits until they have gone: they run detached and would outlive
// the test binary (on Windows, holding the worker log open, they would also
// keep the test's directory from being removed).
func killWorkersAtCleanup(t *testing.T, stateDir string) {
	t.Cleanup(func() { proctest.EndWorkers(stateDir, 20*time.Second) })
}

// loadRecord reads a task record of the harness's state directory.
func loadRecord(t *testing.T, h *harness, contextID string) *store.Record {
	t.Helper()
	st, err := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(contextID)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// startedContext finds the contextId send and send-async announce on
// stderr before anything leaves: a line "task <contextId> started", which
// may go on ("; its reply: …"). (The MCP server is told it as a value:
// mcpserver.Events.)
func startedContext(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "task "); ok {
			if id, _, ok := strings.Cut(rest, " started"); ok && !strings.ContainsAny(id, " \t") {
				return id
			}
		}
	}
	return ""
}
