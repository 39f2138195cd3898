package courier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A generic agent's stream whose events are over the size cap (a2a-js,
// with a cap smaller than its first event): the answer exists but cannot
// be kept, and neither the task nor the listing that would find it can be
// read: the task ends expired and lost (exit 6), never failed, never
// completed, sent once, with reply_too_large in the events.
func TestRunEndsAnA2AStreamOverTheCapLost(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	for _, mount := range []string{interoptest.MountV1, interoptest.MountV03, interoptest.MountREST} {
		t.Run(mount, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ra, err := client.ResolveAgentWith(ctx, nil, js.URL(mount, interoptest.AgentSlow), client.ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := newEngine(t)
			c.MaxResponseBytes = 64
			var log eventLog
			target := store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding), Streaming: true}
			rec := queued(t, c, Message{Agent: "slow", Target: target, Text: "chunks=2 delay=10ms", PollInterval: 50 * time.Millisecond, MaxWait: time.Minute})
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			got, err := c.Run(ctx, h, Work{Command: "worker", OnEvent: log.add})
			if err != nil {
				t.Fatal(err)
			}
			if got.State != store.Expired || !got.Lost || got.Reply != "" || !strings.Contains(got.Reason, "larger than") {
				t.Fatalf("%s lost %v: %s", got.State, got.Lost, got.Reason)
			}
			if !log.has(client.EventReplyTooLarge) || log.has(client.EventConnectionLost) {
				t.Errorf("events %v", log.kinds)
			}
			if got.Workers != 1 || got.Refusals != 0 {
				t.Errorf("workers %d, refusals %d", got.Workers, got.Refusals)
			}
		})
	}
}

// A generic agent's answer over the size cap that no task holds (the echo
// agent answers with a message, sent unary): the answer exists but cannot
// be kept, and no task can be read back (A2A 0.3 lists none; a 1.0 agent
// lists no task holding the message). Nothing says the run failed: the
// task ends expired and lost (exit 6), never failed, sent once, with
// reply_too_large in the events, on a2a-go and on each a2a-js mount.
func TestRunEndsAnA2AAnswerOverTheCapLost(t *testing.T) {
	t.Parallel()
	servers := map[string]*interoptest.Server{"a2a-go": interoptest.StartGo(t), "a2a-js": interoptest.StartJS(t)}
	for _, m := range []struct{ server, mount, why string }{
		{"a2a-go", interoptest.MountGo, "the agent cannot list tasks by context"},
		{"a2a-js", interoptest.MountV1, "the agent listed no task holding the message"},
		{"a2a-js", interoptest.MountV03, "the agent cannot list tasks by context"},
		{"a2a-js", interoptest.MountREST, "the agent listed no task holding the message"},
	} {
		t.Run(m.server+" "+m.mount, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ra, err := client.ResolveAgentWith(ctx, nil, servers[m.server].URL(m.mount, interoptest.AgentEcho), client.ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := newEngine(t)
			// The task list (empty) fits; the echo of the message does not.
			c.MaxResponseBytes = 1024
			var log eventLog
			target := store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding)}
			rec := queued(t, c, Message{Agent: "echo", Target: target, Text: strings.Repeat("long answer ", 200), PollInterval: 20 * time.Millisecond, MaxWait: time.Minute})
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			got, err := c.Run(ctx, h, Work{Command: "worker", OnEvent: log.add})
			if err != nil {
				t.Fatal(err)
			}
			if got.State != store.Expired || !got.Lost || got.Reply != "" || got.FinishedAt == nil ||
				!strings.Contains(got.Reason, "the agent answered, but its answer is larger than the 1 KiB cap and no task to read it from can be found ("+m.why) {
				t.Fatalf("%s lost %v: %s", got.State, got.Lost, got.Reason)
			}
			if !log.has(client.EventReplyTooLarge) || log.has(client.EventConnectionLost) {
				t.Errorf("events %v", log.kinds)
			}
			if got.Workers != 1 || got.Refusals != 0 {
				t.Errorf("workers %d, refusals %d", got.Workers, got.Refusals)
			}
		})
	}
}
