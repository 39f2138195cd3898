package courier

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// runHere works on a queued task in this process until it is final.
func runHere(t *testing.T, c *Courier, rec *store.Record) *store.Record {
	t.Helper()
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The ledger lists the records newest first, filtered; prune drops the
// final ones that ended before the cutoff, archived ones too, and the
// reply files only they named or too old to be named by a kept record;
// never a running one; a dry run removes nothing.
func TestTasksAndPrune(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	done := runHere(t, c, queued(t, c, message(sim, "quick", "first")))
	failed := runHere(t, c, queued(t, c, message(sim, "flaky", "boom")))
	follow := message(sim, "quick", "second")
	follow.ContextID = done.ContextID
	again := runHere(t, c, queued(t, c, follow)) // the first exchange goes to tasks/archive/
	running := queued(t, c, message(sim, "slow", "later"))

	recs, total, errs := c.Tasks(TaskQuery{})
	if len(errs) > 0 || total != 3 || recs[0].ContextID != running.ContextID || recs[2].ContextID != failed.ContextID {
		t.Fatalf("ledger %d %v: %v", total, errs, ids(recs))
	}
	states, err := ParseStates("running")
	if err != nil {
		t.Fatal(err)
	}
	if recs, _, _ := c.Tasks(TaskQuery{States: states}); len(recs) != 1 || recs[0].ContextID != running.ContextID {
		t.Errorf("running: %v", ids(recs))
	}
	if recs, total, _ := c.Tasks(TaskQuery{Agent: "QUICK", Limit: 1}); total != 1 || recs[0].ContextID != again.ContextID {
		t.Errorf("agent quick: %d %v", total, ids(recs))
	}
	if got := Summary(failed); !strings.Contains(got, "No complete response") {
		t.Errorf("summary of a failure: %q", got)
	}

	// What prune finds in replies/: the whole reply a --max-chars cut kept
	// of the pruned task, an old text of show, and a young one.
	cut, _ := c.Store.WriteReply(ReplyName(again), "the whole reply")
	// The folder of the pruned task's reply files (two files), and an
	// old folder no record names.
	filesDir, _ := c.Store.ReplyFilesDir(ReplyName(again))
	for _, n := range []string{"report.csv", "chart.png"} {
		if _, err := store.SaveFile(filesDir, n, []byte("content of "+n)); err != nil {
			t.Fatal(err)
		}
	}
	orphanDir, _ := c.Store.ReplyFilesDir("a2a-z.0123456789ab")
	if _, err := store.SaveFile(orphanDir, "old.txt", []byte("old")); err != nil {
		t.Fatal(err)
	}
	oldShow, _ := c.Store.WriteReply("a2a-x.round-1", "old")
	young, _ := c.Store.WriteReply("a2a-y.round-1", "young")
	later := time.Now().Add(40 * 24 * time.Hour) // the cutoff is 10 days ahead
	c.Now = func() time.Time { return later }
	os.Chtimes(young, later, later)
	dry, err := c.Prune(PruneOptions{OlderThan: 30 * 24 * time.Hour, DryRun: true})
	if err != nil || len(dry.Records) != 3 || dry.KeptRunning != 1 || dry.ReplyFiles != 5 ||
		dry.ReplyBytes != int64(len("the whole reply")+len("old")+len("content of report.csv")+len("content of chart.png")+len("old")) {
		t.Fatalf("dry run: %v %+v", err, dry)
	}
	if recs, total, _ := c.Tasks(TaskQuery{}); total != 3 || len(recs) != 3 {
		t.Fatalf("a dry run removed records: %v", ids(recs))
	}
	rep, err := c.Prune(PruneOptions{OlderThan: 30 * 24 * time.Hour})
	if err != nil || len(rep.Records) != 3 || len(rep.Errors) > 0 {
		t.Fatalf("prune: %v %+v", err, rep)
	}
	archivedSeen := false
	for _, p := range rep.Records {
		archivedSeen = archivedSeen || p.Archived && p.ContextID == done.ContextID
	}
	if !archivedSeen {
		t.Errorf("the archived exchange was not pruned: %+v", rep.Records)
	}
	if recs, _, _ := c.Tasks(TaskQuery{}); len(recs) != 1 || recs[0].ContextID != running.ContextID {
		t.Errorf("after prune: %v", ids(recs))
	}
	if a, _ := c.Store.ListArchived(); len(a) != 0 {
		t.Errorf("archived records left: %d", len(a))
	}
	for path, want := range map[string]bool{cut: false, oldShow: false, young: true, filesDir: false, orphanDir: false} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
	if _, err := c.Prune(PruneOptions{}); err == nil {
		t.Error("a prune without an age ran")
	}
}

func ids(recs []*store.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Agent+":"+string(r.State))
	}
	return out
}

// WaitMany with anyDone returns as soon as one task is final, naming it;
// without, once all are.
func TestWaitMany(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	slow := queued(t, c, message(sim, "slow", "long"))
	quick := queued(t, c, message(sim, "quick", "short"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	served := make(chan struct{})
	go func() {
		defer close(served)
		c.Serve(ctx, quick.Identity, testKey, 2*time.Second, 50*time.Millisecond)
	}()
	// The worker is this process: it must be gone before the cleanup
	// kills the state directory's workers.
	defer func() { cancel(); <-served }()
	recs, first, err := c.WaitMany(ctx, []*store.Record{slow, quick}, true, nil)
	if err != nil || first != 1 || recs[1].State != store.Completed {
		t.Fatalf("any: %v first %d %v", err, first, ids(recs))
	}
	if recs[0].State.Terminal() {
		t.Errorf("the slow task ended first: %v", ids(recs))
	}
	recs, first, err = c.WaitMany(ctx, recs, false, nil)
	if err != nil || recs[0].State != store.Completed || recs[1].State != store.Completed || first != 1 {
		t.Fatalf("all: %v first %d %v", err, first, ids(recs))
	}
	if !strings.Contains(recs[0].Reply, "Report for long") {
		t.Errorf("reply %q", recs[0].Reply)
	}
}

func TestStateFilterAndSuggestion(t *testing.T) {
	set, err := ParseStates("running, input-required")
	if err != nil || len(set) != 4 || !set[store.Sending] || !set[store.InputRequired] {
		t.Errorf("%v %v", set, err)
	}
	if _, err := ParseStates("done"); err == nil || !strings.Contains(err.Error(), "running, queued") {
		t.Errorf("an unknown state: %v", err)
	}
	agents := []client.Agent{{ID: "elastic-ai-agent", Name: "Chat"}, {ID: "a", Name: "Twin"}, {ID: "b", Name: "twin"}}
	if ag, _, ok := SuggestAgent(agents, "chat"); !ok || ag.ID != "elastic-ai-agent" {
		t.Errorf("chat: %v %v", ag, ok)
	}
	if _, _, ok := SuggestAgent(agents, "Twin"); ok {
		t.Error("two agents of one name: a suggestion")
	}
	r := &store.Record{State: store.Completed, Reply: "\n  First line\nsecond"}
	if got := Summary(r); got != "First line …" {
		t.Errorf("summary %q", got)
	}
	r = &store.Record{State: store.Working, LastError: &store.ErrorInfo{Message: "HTTP 502"}}
	if got := Summary(r); got != "last problem: HTTP 502" {
		t.Errorf("summary %q", got)
	}
}
