package courier

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A status update of 40 KB on one line, with a terminal's escape
// sequences and line breaks in it (Kibana's stream passes the agent's
// reasoning on, which quotes the message): the caller's events (send
// --progress) carry it cut to what the record keeps, 1,000 bytes, and the
// worker's log, which people read with cat, gets it scrubbed on one line.
// (Before: whole, up to the 32 MiB of an event, escapes and all.)
func TestStatusUpdateIsBoundedAndScrubbed(t *testing.T) {
	t.Parallel()
	streams := true
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version, o.Streaming = agentbuildertest.V96, &streams })
	c := newEngine(t)
	var mu sync.Mutex
	var logged []string
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	text := "\x1b]0;owned\x07\x1b[2Jfake line\nid: sent: hello\r" + strings.Repeat("x", 40000)
	m := message(sim, "quick", text)
	m.Target.Streaming = true
	rec := queued(t, c, m)
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	var progress []string
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey, OnEvent: func(e client.Event) {
		if e.Kind == client.EventProgress {
			mu.Lock()
			progress = append(progress, e.Message)
			mu.Unlock()
		}
	}})
	if err != nil || got.State != store.Completed {
		t.Fatalf("%v %s", err, got.State)
	}
	mu.Lock()
	defer mu.Unlock()
	long := 0
	for _, p := range progress {
		if len(p) > maxProgressText {
			t.Errorf("a status update of %d bytes reached the caller", len(p))
		}
		if strings.Contains(p, "xxxxxxxxxx") {
			long++
		}
	}
	if long == 0 {
		t.Fatalf("no status update quoted the message: %q", progress)
	}
	for _, l := range logged {
		if strings.ContainsAny(l, "\x1b\x07\r\n") || len(l) > 2*maxProgressText {
			t.Errorf("log line of %d bytes: %q", len(l), l[:min(len(l), 200)])
		}
	}
}
