package courier

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
	"github.com/a2a-courier/a2a-courier/store"
)

// TestMain lets this test binary stand in for the a2a-courier binary's
// worker: a worker ensureWorker spawns in a test runs workerMain, which
// serves its tasks as `a2a-courier worker` does, with the real Serve.
func TestMain(m *testing.M) {
	if os.Getenv("A2A_COURIER_TEST_BUSY") == "1" {
		busyLoop() // a process that only burns CPU (stress_test.go)
	}
	if os.Getenv("A2A_COURIER_TEST_WORKER") == "1" {
		os.Exit(workerMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// workerMain is the test binary run as a worker: "worker --state-dir <dir>
// --identity <id>", or "--probe <token>", its credential on descriptor 3
// (Unix) or the handle --credential-handle names (Windows).
func workerMain(args []string) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	dir := fs.String("state-dir", "", "")
	ident := fs.String("identity", "", "")
	probe := fs.String("probe", "", "")
	handle := fs.Uint64(CredentialFlag, DefaultCredentialHandle, "")
	linger := fs.Duration("linger", 300*time.Millisecond, "")
	if len(args) == 0 || args[0] != "worker" || fs.Parse(args[1:]) != nil {
		return 2
	}
	st, err := store.Open(*dir)
	if err != nil {
		return 1
	}
	c := testCourier(st)
	if d, err := time.ParseDuration(os.Getenv("A2A_COURIER_TEST_STALE_AFTER")); err == nil && d > 0 {
		c.Timing = store.WorkerTiming{Beat: min(d/10, time.Second), StaleAfter: d}
	}
	c.Logf = log.New(os.Stderr, "test-worker ", log.Lmicroseconds).Printf
	var cred *os.File
	if *handle != 0 {
		cred = os.NewFile(uintptr(*handle), "credential")
	}
	if *probe != "" {
		if c.WriteProbe(*probe, cred) != nil {
			return 1
		}
		return 0
	}
	key, err := ReadCredential(cred)
	if err != nil {
		return 1
	}
	c.Serve(context.Background(), *ident, key, *linger, 100*time.Millisecond)
	return 0
}

const testKey = "dGVzdDprZXk="

func simOptions() agentbuildertest.Options {
	return agentbuildertest.Options{
		Keys: []agentbuildertest.Key{{APIKey: testKey, Username: "svc-a2a"}},
		Agents: []agentbuildertest.Agent{
			{ID: "quick", Name: "Quick", Description: "Answers at once.", RunTime: 20 * time.Millisecond},
			{ID: "slow", Name: "Slow", Description: "Takes a while.", RunTime: 800 * time.Millisecond,
				Reply: "Report for {{input}}."},
			{ID: "flaky", Name: "Flaky", Description: "Fails.", Fail: "No complete response received from chat service", RunTime: 10 * time.Millisecond},
		},
	}
}

// startSim is the Agent Builder simulator on loopback: a real HTTP server.
func startSim(t testing.TB, mod func(*agentbuildertest.Options)) *agentbuildertest.Server {
	t.Helper()
	o := simOptions()
	if mod != nil {
		mod(&o)
	}
	s := agentbuildertest.NewServer(o)
	t.Cleanup(s.Close)
	return s
}

// testCourier is an engine on st with the default HTTP client, whose
// workers are this test binary.
func testCourier(st *store.Store) *Courier {
	// One client per engine, as a process has: a pool shared by every test
	// would hand a test a connection to another test's closed simulator
	// whose port the kernel gave again.
	hc := client.NewHTTPClient(nil)
	return &Courier{
		Store:      st,
		HTTPClient: func(store.Target) (*http.Client, error) { return hc, nil },
		Now:        time.Now,
		UserAgent:  "a2a-courier/test",
		Executable: func() (string, error) { return os.Args[0], nil },
		Environ:    func() []string { return append(os.Environ(), "A2A_COURIER_TEST_WORKER=1") },
		Timing:     store.WorkerTiming{Beat: 50 * time.Millisecond, StaleAfter: 2 * time.Second},
	}
}

// newEngine is an engine on a fresh state directory, logging to the test.
func newEngine(t testing.TB) *Courier {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	c := testCourier(st)
	var mu sync.Mutex
	done := false
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
		killWorkers(st)
	})
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Logf(format, args...)
		}
	}
	return c
}

// killWorkers ends the workers a test started: they run detached and
// would outlive the test binary.
func killWorkers(st *store.Store) { proctest.EndWorkers(st.Dir(), 10*time.Second) }

// message is a new task for agent on the simulator.
func message(sim *agentbuildertest.Server, agent, text string) Message {
	return Message{Agent: agent, Target: store.Target{Kind: store.TargetKibana, URL: sim.URL}, Key: testKey, Text: text,
		PollInterval: 100 * time.Millisecond, MaxWait: time.Minute}
}

// queued writes a record queued for a worker, as send-async does.
func queued(t testing.TB, c *Courier, m Message) *store.Record {
	t.Helper()
	rec, h, err := submitted(c, context.Background(), m, "send-async")
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	return rec
}

// eventLog collects a run's events.
type eventLog struct {
	mu    sync.Mutex
	kinds []client.EventKind
}

func (l *eventLog) add(e client.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, e.Kind)
}

func (l *eventLog) has(k client.EventKind) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.kinds {
		if x == k {
			return true
		}
	}
	return false
}

// load reads a record from the engine's store.
func load(t *testing.T, c *Courier, id string) *store.Record {
	t.Helper()
	rec, err := c.Store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// submitted is Submit's task as its record and lock.
func submitted(c *Courier, ctx context.Context, m Message, command string) (*store.Record, *store.Handle, error) {
	task, err := c.Submit(ctx, m, command)
	if err != nil {
		return nil, nil, err
	}
	return task.rec, task.h, nil
}
