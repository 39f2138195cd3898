package courier

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// runQueued sends one queued task through Run, as a worker does.
func runQueued(t *testing.T, c *Courier, m Message) (*store.Record, error) {
	t.Helper()
	rec := queued(t, c, m)
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	return c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
}

// A run whose connection was cut, and whose conversation is larger than
// is read, can never be read back: expired and lost, once, not a wait
// until the maximum and not failed.
func TestRunEndsAConversationOverItsCapLost(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "big", Name: "Big", RunTime: 300 * time.Millisecond, ReplyBytes: 200 << 10})
		o.Faults.ProxyCutAfter = 50 * time.Millisecond
	})
	c := newEngine(t)
	c.MaxConversationBytes = 64 << 10
	got, err := runQueued(t, c, message(sim, "big", "a long report"))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.Expired || !got.Lost || !strings.Contains(got.Reason, "larger than a2a-courier reads") ||
		got.LastError == nil || got.Reply != "" {
		t.Fatalf("%+v", got)
	}
	if disk := load(t, c, got.ContextID); disk.State != store.Expired || !disk.Lost {
		t.Fatalf("on disk %+v", disk)
	}
	if sim.Runs(got.ContextID) != 1 {
		t.Errorf("%d runs", sim.Runs(got.ContextID))
	}
}

// A round no Kibana writes, read again and again once no connection may
// bring the answer: the outcome cannot be read, so the task is lost (exit
// 6), not failed (nothing showed a failure), and never completed empty.
func TestRunEndsAnUnreadableRoundLost(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "forever", Name: "Forever", RunTime: time.Hour})
		o.Faults.ProxyCutAfter = 50 * time.Millisecond
	})
	c := newEngine(t)
	m := message(sim, "forever", "q")
	m.PollInterval = 20 * time.Millisecond
	rec := queued(t, c, m)
	sim.PutConversation("", "a2a-"+rec.ContextID, "forever", "svc-a2a", "planted", time.Now(),
		json.RawMessage(`{"input":{"message":"q"},"response":{"message":7}}`))
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.Expired || !got.Lost || !strings.Contains(got.Reason, "cannot be read") || got.Reply != "" ||
		KindOf(got.LastError) != client.KindProtocol {
		t.Fatalf("%+v", got)
	}
	if sim.Runs(rec.ContextID) != 1 {
		t.Errorf("%d runs", sim.Runs(rec.ContextID))
	}
}

// A reply the run brought back, but that cannot be kept (its file cannot
// be written): expired, with the reason and the error, not failed (the
// run did not fail) and not completed with nothing; fetch can read it
// again from the server.
func TestRunEndsAReplyThatCannotBeKeptExpired(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "huge", Name: "Huge", RunTime: 10 * time.Millisecond, ReplyBytes: maxRecordReply + 1<<20})
	})
	c := newEngine(t)
	// Where the replies directory was, a file: no reply file can be made
	// (a full or read-only disk, as root too).
	replies := filepath.Join(c.Store.Dir(), "replies")
	if err := os.RemoveAll(replies); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(replies, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := runQueued(t, c, message(sim, "huge", "everything"))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.Expired || got.Lost || got.Reply != "" || got.ReplyFile != "" || got.LastError == nil ||
		!strings.Contains(got.Reason, "the run ended completed, but its reply could not be kept") ||
		!strings.Contains(got.Reason, "fetch "+got.ContextID) {
		t.Fatalf("%+v", got)
	}
	if disk := load(t, c, got.ContextID); disk.State != store.Expired || disk.FinishedAt == nil {
		t.Fatalf("on disk %+v", disk)
	}
}

// Two messages of one conversation, both too large for the record: each
// reply keeps a file of its own, so the follow-up does not overwrite the
// reply the archived record names.
func TestRepliesOfOneContextKeepTheirOwnFiles(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	first := &store.Record{ContextID: "ctx-two", MessageID: "m-1"}
	second := &store.Record{ContextID: "ctx-two", MessageID: "m-2"}
	a, b := strings.Repeat("a", maxRecordReply+1), strings.Repeat("b", maxRecordReply+1)
	if err := keepReply(c.Store, first, a); err != nil {
		t.Fatal(err)
	}
	if err := keepReply(c.Store, second, b); err != nil {
		t.Fatal(err)
	}
	if first.ReplyFile == second.ReplyFile || first.Reply != "" || first.ReplyBytes != len(a) {
		t.Fatalf("files %q and %q", first.ReplyFile, second.ReplyFile)
	}
	for file, want := range map[string]string{first.ReplyFile: a, second.ReplyFile: b} {
		if got, err := os.ReadFile(file); err != nil || string(got) != want {
			t.Errorf("%s: %v, %d bytes", file, err, len(got))
		}
	}
}

// A blocking send to Kibana 9.6 (non_blocking false) whose connection is
// cut: the release stops the run with it, so no reply will come. The task
// ends lost a grace after the cut, saying so, instead of being read for
// its whole maximum wait (hours) and reported as still running.
func TestRunEndsALikelyAbortedRunSoon(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V96
		o.Faults.ProxyCutAfter = 50 * time.Millisecond
	})
	c := newEngine(t)
	c.AbortGrace = 300 * time.Millisecond
	m := message(sim, "slow", "cut me")
	m.Target.KibanaVersion, m.Target.NonBlocking = "9.6.0", false
	got, err := runQueued(t, c, m)
	if err != nil {
		t.Fatal(err)
	}
	// Ended by the grace (its reason names it), not by the maximum wait.
	if got.State != store.Expired || !got.Lost || !got.ConnectionLost ||
		!strings.Contains(got.Reason, "no reply came within "+WaitText(c.AbortGrace)) ||
		!strings.Contains(got.Reason, "most likely ended without one") || !strings.Contains(got.Reason, "non_blocking is false") {
		t.Fatalf("%+v", got)
	}
	if sim.Runs(got.ContextID) != 1 {
		t.Errorf("%d runs", sim.Runs(got.ContextID))
	}
}
