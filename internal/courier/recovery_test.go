package courier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A connection that ends while the run goes on loses nothing, on the path
// each release is sent: Kibana 9.5's blocking send, cut by a proxy (502)
// or closed as idle, is recovered by reading the conversation; Kibana
// 9.6's blocking:false send is answered with its task at once and followed
// with tasks/get, so a proxy cutting long requests never reaches it. Each
// ran once, completed with the agent's reply.
func TestRunRecoversACutConnection(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		version     agentbuildertest.Version
		faults      agentbuildertest.Faults
		kibana      string
		nonBlocking bool
		path, via   string
		lost        bool
	}{
		{"9.5 blocking, proxy cut", agentbuildertest.V95, agentbuildertest.Faults{ProxyCutAfter: 100 * time.Millisecond}, "9.5.1", false, PathBlocking, "conversation", true},
		{"9.5 blocking, idle close", agentbuildertest.V95, agentbuildertest.Faults{IdleCloseAfter: 100 * time.Millisecond}, "9.5.1", false, PathBlocking, "conversation", true},
		{"9.6 blocking:false, proxy cut", agentbuildertest.V96, agentbuildertest.Faults{ProxyCutAfter: 100 * time.Millisecond}, "9.6.0", true, PathTask, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) { o.Version, o.Faults = tt.version, tt.faults })
			c := newEngine(t)
			var events eventLog
			m := message(sim, "slow", "through the cut")
			m.Target.KibanaVersion, m.Target.NonBlocking = tt.kibana, tt.nonBlocking
			rec := queued(t, c, m)
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey, OnEvent: events.add})
			if err != nil {
				t.Fatal(err)
			}
			if got.State != store.Completed || got.Reply != "Report for through the cut." || got.Path != tt.path || got.Lost {
				t.Fatalf("%+v", got)
			}
			if tt.via != "" && got.Via != tt.via {
				t.Errorf("via %q, want %q", got.Via, tt.via)
			}
			if events.has(client.EventConnectionLost) != tt.lost || got.ConnectionLost != tt.lost {
				t.Errorf("connection lost: event %v, record %v, want %v (events %v)", events.has(client.EventConnectionLost), got.ConnectionLost, tt.lost, events.kinds)
			}
			if tt.nonBlocking && got.TaskID == "" {
				t.Error("the task path recorded no task id")
			}
			if sim.Runs(rec.ContextID) != 1 || got.Workers != 1 {
				t.Errorf("runs %d, workers %d", sim.Runs(rec.ContextID), got.Workers)
			}
		})
	}
}

// A generic A2A agent (a2a-js, JSON-RPC and HTTP+JSON): a Message answer
// and a Task polled to its end both complete, sent once, with the reply.
func TestRunSendsToAGenericAgent(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	for _, tt := range []struct {
		mount, agent, text, reply string
	}{
		{interoptest.MountV1, interoptest.AgentEcho, "hello", "echo: hello"},
		{interoptest.MountREST, interoptest.AgentEcho, "over rest", "echo: over rest"},
		{interoptest.MountV03, interoptest.AgentSlow, "chunks=2 delay=10ms", "chunk 1/2\nchunk 2/2\ndone after 2 chunks"},
	} {
		t.Run(tt.mount+"/"+tt.agent, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := newEngine(t)
			rec := queued(t, c, Message{Agent: tt.agent, Target: a2aTarget(t, ctx, js.URL(tt.mount, tt.agent)), Text: tt.text,
				PollInterval: 50 * time.Millisecond, MaxWait: time.Minute})
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			got, err := c.Run(ctx, h, Work{Command: "worker"})
			if err != nil || got.State != store.Completed || got.Reply != tt.reply {
				t.Fatalf("%v %s %q (%s)", err, got.State, got.Reply, got.Reason)
			}
			if got.Workers != 1 || got.Refusals != 0 || got.Message != "" || got.SentAt == nil {
				t.Errorf("workers %d, refusals %d, message %q", got.Workers, got.Refusals, got.Message)
			}
		})
	}
}

// a2aTarget is the stored target of a generic agent's URL, as send
// resolves it.
func a2aTarget(t *testing.T, ctx context.Context, url string) store.Target {
	t.Helper()
	ra, err := client.ResolveAgentWith(ctx, nil, url, client.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding)}
}

// An answer to a task that asked a question (send --task) is placed in
// the task's context, with the question it answers: from the local record
// of the task, or, on a machine without one, from the agent (GetTask); a
// task neither knows gets a local contextId the server never sees. The
// answer completes the task, each message sent once.
func TestSubmitPlacesAnAnswerInItsTasksContext(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target := a2aTarget(t, ctx, js.URL(interoptest.MountV1, interoptest.AgentAsk))
	run := func(c *Courier, m Message) *store.Record {
		t.Helper()
		rec := queued(t, c, m)
		h, err := c.Store.Lock(rec.ContextID)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		got, err := c.Run(ctx, h, Work{Command: "worker"})
		if err != nil || got.Workers != 1 {
			t.Fatalf("%v %+v", err, got)
		}
		return got
	}
	msg := func(text, taskID string) Message {
		return Message{Agent: "ask", Target: target, Text: text, TaskID: taskID, PollInterval: 50 * time.Millisecond, MaxWait: time.Minute}
	}

	c := newEngine(t)
	asked := run(c, msg("who?", ""))
	if asked.State != store.InputRequired || asked.TaskID == "" || asked.Reply == "" {
		t.Fatalf("%s %q %q", asked.State, asked.TaskID, asked.Reply)
	}
	// From the local record.
	answer := queued(t, c, msg("Ada", asked.TaskID))
	if answer.ContextID != asked.ContextID || answer.Question != asked.Reply || answer.AnswersTask != asked.TaskID || answer.LocalContext {
		t.Fatalf("placed in %s (question %q), want %s (%q)", answer.ContextID, answer.Question, asked.ContextID, asked.Reply)
	}

	// From the agent, on a machine with no record of the task.
	other := newEngine(t)
	done := run(other, msg("Ada", asked.TaskID))
	if done.ContextID != asked.ContextID || done.Question != asked.Reply || done.LocalContext {
		t.Fatalf("placed in %s (question %q, local %v), want %s", done.ContextID, done.Question, done.LocalContext, asked.ContextID)
	}
	if done.State != store.Completed || done.Reply != "Hello, Ada!" {
		t.Fatalf("%s %q (%s)", done.State, done.Reply, done.Reason)
	}

	// A task nobody knows: a local contextId, never sent to the server.
	unknown := queued(t, newEngine(t), msg("Ada", "0193c2d4-7e1f-7a3b-9c4d-5e6f7a8b9c0d"))
	if !unknown.LocalContext || unknown.ContextID == "" || unknown.Question != "" {
		t.Fatalf("%+v", unknown)
	}
}

// HandOff lets the record's lock go and starts a worker, which sends the
// task once; DropUnsent ends a queued task nobody sent as canceled by the
// interrupt, and leaves a task that left alone.
func TestHandOffAndDropUnsent(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	task, err := c.Submit(context.Background(), message(sim, "quick", "hand it over"), "send-async")
	if err != nil {
		t.Fatal(err)
	}
	rec := task.Record()
	if err := task.HandOff(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := c.Wait(ctx, rec, nil)
	if err != nil || got.State != store.Completed || got.Reply != "Echo: hand it over" || got.Workers != 1 || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("%v %+v, runs %d", err, got, sim.Runs(rec.ContextID))
	}

	task, err = c.Submit(context.Background(), message(sim, "quick", "never mind"), "send")
	if err != nil {
		t.Fatal(err)
	}
	rec = task.Record()
	dropped, err := task.Drop()
	task.Release()
	if err != nil || dropped.State != store.Canceled || dropped.CanceledBy != "interrupt" || dropped.SentAt != nil ||
		dropped.Message != "" || !strings.Contains(dropped.Reason, "nothing ran") {
		t.Fatalf("%v %+v", err, dropped)
	}
	if sim.Runs(rec.ContextID) != 0 {
		t.Errorf("%d runs", sim.Runs(rec.ContextID))
	}

	task, err = c.Submit(context.Background(), message(sim, "quick", "already sending"), "send")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := task.h.Update(func(x *store.Record) error { x.State = store.Sending; return nil }); err != nil {
		t.Fatal(err)
	}
	left, err := task.Drop()
	task.Release()
	if err != nil || left.State != store.Sending || left.CanceledBy != "" {
		t.Fatalf("%v %+v", err, left)
	}
}

// LoadSettled returns a record that is there, and ErrNotFound for one
// that stays missing after its few looks.
func TestLoadSettled(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "here"))
	got, err := c.LoadSettled(context.Background(), rec.ContextID)
	if err != nil || got.MessageID != rec.MessageID || got.State != store.Queued {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := c.LoadSettled(context.Background(), "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}
