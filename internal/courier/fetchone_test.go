package courier

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// Fetch, the one entry of a generic agent's read, on a real A2A server
// (a2a-js, A2A 1.0): a context's task is chosen and read, a task is read by
// its id into its context's terms, and a record never sent is its own
// answer, with nothing asked of the server.
func TestFetchReadsAGenericAgentsTask(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ra, err := client.ResolveAgentWith(ctx, nil, js.URL(interoptest.MountV1, interoptest.AgentSlow), client.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := newEngine(t)
	target := store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding)}
	rec := queued(t, c, Message{Agent: "slow", Target: target, Text: "chunks=2 delay=10ms", PollInterval: 50 * time.Millisecond, MaxWait: time.Minute})
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Run(ctx, h, Work{Command: "worker"})
	h.Release()
	if err != nil || done.State != store.Completed || done.TaskID == "" {
		t.Fatalf("%v %+v", err, done)
	}

	f, err := c.Fetch(ctx, FetchQuery{Target: target, Agent: "slow", ContextID: rec.ContextID, Local: done})
	if err != nil || f.FromRecord || !f.Task.Final || f.Task.Record.State != store.Completed || f.Task.Record.Reply != done.Reply || f.Local != done {
		t.Fatalf("by context: %v %+v", err, f)
	}
	f, err = c.Fetch(ctx, FetchQuery{Target: target, Agent: "slow", TaskID: done.TaskID})
	if err != nil || f.ContextID != rec.ContextID || f.Local != nil || !f.Task.Final || f.Task.Record.Reply != done.Reply {
		t.Fatalf("by task: %v %+v", err, f)
	}

	unsent := queued(t, c, Message{Agent: "slow", Target: store.Target{Kind: store.TargetA2A, URL: "http://127.0.0.1:1", Endpoint: "http://127.0.0.1:1"},
		Text: "not yet", PollInterval: time.Second, MaxWait: time.Minute})
	f, err = c.Fetch(ctx, FetchQuery{Target: unsent.Target, ContextID: unsent.ContextID, Local: unsent})
	if err != nil || !f.FromRecord || f.Local != unsent || f.Task != nil {
		t.Fatalf("never sent: %v %+v", err, f)
	}
}
