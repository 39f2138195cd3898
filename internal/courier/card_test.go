package courier

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// A run forgets a Kibana agent's cached card when the send shows it stale:
// the card said streaming and the server does not stream (the same
// delivery goes on by message/send, once, and the record stops
// streaming), or the agent is not found. A send that completes keeps it.
func TestRunForgetsAStaleCard(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil) // does not stream
	c := newEngine(t)
	card := []byte(`{"name":"cached","capabilities":{"streaming":true}}`)
	cache := func(agent string) string {
		key := cardKey(sim.URL, testKey, "", agent)
		if err := c.Store.SaveCard(key, card, time.Hour); err != nil {
			t.Fatal(err)
		}
		return key
	}
	cached := func(key string) bool { _, ok := c.Store.LoadCard(key); return ok }
	run := func(m Message) (*store.Record, *eventLog) {
		t.Helper()
		events := &eventLog{}
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
		return got, events
	}

	key := cache("quick")
	m := message(sim, "quick", "stream?")
	m.Target.Streaming = true
	got, events := run(m)
	if got.State != store.Completed || got.Reply != "Echo: stream?" || got.Target.Streaming || sim.Runs(got.ContextID) != 1 {
		t.Fatalf("%+v, runs %d", got, sim.Runs(got.ContextID))
	}
	if !events.has(client.EventStreamUnsupported) || cached(key) {
		t.Errorf("events %v, card still cached %v", events.kinds, cached(key))
	}

	key = cache("no-such-agent")
	got, _ = run(message(sim, "no-such-agent", "anyone?"))
	if got.State != store.Rejected || KindOf(got.Error) != client.KindNotFound || cached(key) {
		t.Fatalf("%s %v, card still cached %v", got.State, got.Error, cached(key))
	}

	key = cache("quick")
	got, _ = run(message(sim, "quick", "plain"))
	if got.State != store.Completed || got.Reply != "Echo: plain" || !cached(key) {
		t.Fatalf("%s %q, card cached %v", got.State, got.Reply, cached(key))
	}
}
