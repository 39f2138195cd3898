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
