package courier

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// Submit: a message in a context whose message is in flight is refused;
// an answer to a task known to have finished is refused before anything
// is sent; a follow-up of a final exchange archives it.
func TestSubmitGuardsTheContext(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	first := queued(t, c, message(sim, "quick", "first"))
	m := message(sim, "quick", "second")
	m.ContextID = first.ContextID
	var inFlight *InFlightError
	if _, _, err := submitted(c, context.Background(), m, "send-async"); !errors.As(err, &inFlight) || inFlight.State != store.Queued {
		t.Fatalf("follow-up of a queued message: %v", err)
	}
	h, _ := c.Store.Lock(first.ContextID)
	complete(t, h)
	h.Release()

	next, h, err := submitted(c, context.Background(), m, "send-async")
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	if next.ContextID != first.ContextID || next.FreshContext {
		t.Errorf("follow-up %+v", next)
	}
	if old, err := c.Store.LoadArchived(first.ContextID, first.MessageID); err != nil || old.State != store.Completed {
		t.Errorf("archive: %v %+v", err, old)
	}

	answer := Message{Agent: "peer", Target: store.Target{Kind: store.TargetA2A, URL: "http://127.0.0.1:1", Endpoint: "http://127.0.0.1:1/a2a"},
		Text: "yes", PollInterval: time.Second, MaxWait: time.Minute, TaskID: "task-1"}
	// The record of task-1 was archived with its context: the new record
	// carries no task id, so only a record of the task itself counts.
	c.Store.Create(&store.Record{ContextID: "ctx-task-1", MessageID: "m", TaskID: "task-1", State: store.Queued, Message: "q",
		Target: answer.Target, Identity: identity(answer.Target, "")})
	hh, _ := c.Store.Lock("ctx-task-1")
	complete(t, hh)
	hh.Release()
	var finished *FinishedTaskError
	if _, _, err := submitted(c, context.Background(), answer, "send-async"); !errors.As(err, &finished) || finished.Record.ContextID != "ctx-task-1" {
		t.Fatalf("answer to a finished task: %v", err)
	}

	// Another agent's task of the same name is not that task.
	other := answer
	other.Target.URL, other.Target.Endpoint = "http://127.0.0.1:2", "http://127.0.0.1:2/a2a"
	if err := errors.As(submitErr(c, other), &finished); err {
		t.Fatalf("an answer to another agent's task-1 was refused as finished")
	}

	// A finished task whose record a later exchange archived is still
	// known to be finished.
	followUp := answer
	followUp.TaskID, followUp.ContextID = "", "ctx-task-1"
	if _, h, err := submitted(c, context.Background(), followUp, "send-async"); err != nil {
		t.Fatal(err)
	} else {
		h.Release()
	}
	answer.ContextID = "ctx-task-1"
	if _, _, err := submitted(c, context.Background(), answer, "send-async"); !errors.As(err, &finished) || finished.Record.TaskID != "task-1" {
		t.Fatalf("answer to a finished, archived task: %v", err)
	}
}

// submitErr submits m and releases what it took; it returns the error.
func submitErr(c *Courier, m Message) error {
	_, h, err := submitted(c, context.Background(), m, "send-async")
	if h != nil {
		h.Release()
	}
	return err
}

// complete moves a locked record through sending to completed, as a run
// does.
func complete(t *testing.T, h *store.Handle) {
	t.Helper()
	for _, st := range []store.State{store.Sending, store.Completed} {
		if _, err := h.Update(func(x *store.Record) error {
			if st == store.Sending {
				x.Send(time.Now())
				return nil
			}
			x.Finish(st, time.Now())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Submit continuing a Kibana conversation counts its rounds, so that the
// reply is the first new round.
func TestSubmitCountsTheRoundsBefore(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "one"))
	h, _ := c.Store.Lock(rec.ContextID)
	if got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey}); err != nil || got.State != store.Completed {
		t.Fatalf("%v %+v", err, got)
	}
	h.Release()
	m := message(sim, "quick", "two")
	m.ContextID = rec.ContextID
	next, h, err := submitted(c, context.Background(), m, "send-async")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if next.RoundsBefore != 1 || next.FreshContext {
		t.Errorf("%+v", next)
	}
}

// Serve, in this process: a worker claims the queued records of its
// identity, works on them, and exits when idle.
func TestServeWorksOnQueuedTasks(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	a := queued(t, c, message(sim, "quick", "a"))
	b := queued(t, c, message(sim, "slow", "b"))
	other := queued(t, c, Message{Agent: "quick", Target: store.Target{Kind: store.TargetKibana, URL: sim.URL}, Key: "b3RoZXI6a2V5",
		Text: "not mine", PollInterval: time.Second, MaxWait: time.Minute})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Serve(context.Background(), a.Identity, testKey, 200*time.Millisecond, 50*time.Millisecond)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not exit")
	}
	for _, id := range []string{a.ContextID, b.ContextID} {
		if rec := load(t, c, id); rec.State != store.Completed || sim.Runs(id) != 1 {
			t.Errorf("%s: %+v, %d runs", id, rec, sim.Runs(id))
		}
	}
	if rec := load(t, c, other.ContextID); rec.State != store.Queued {
		t.Errorf("another identity's task: %s", rec.State)
	}
}

// ensureWorker starts a detached worker (this test binary, as a worker)
// that finishes the task; a second call while it serves starts none.
func TestEnsureWorkerStartsADetachedWorker(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 500 * time.Millisecond })
	c := newEngine(t)
	rec := queued(t, c, message(sim, "slow", "in the background"))
	if err := c.ensureWorker(rec.Identity, testKey); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(c.Store.Workers(rec.Identity)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	pids := c.Store.Workers(rec.Identity)
	if err := c.ensureWorker(rec.Identity, testKey); err != nil || len(pids) != 1 {
		t.Fatalf("%v, workers %v", err, pids)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := c.Wait(ctx, rec, nil)
	if err != nil || got.State != store.Completed || got.Reply != "Report for in the background." {
		t.Fatalf("%v %+v", err, got)
	}
	if len(c.Store.Workers(rec.Identity)) > 1 || sim.Runs(rec.ContextID) != 1 {
		t.Errorf("workers %v, runs %d", c.Store.Workers(rec.Identity), sim.Runs(rec.ContextID))
	}
}

// A worker timing the caller says is not sound starts no worker.
func TestEnsureWorkerRefusesAnUnsoundTiming(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	c.TimingErr = errors.New("not a duration")
	if err := c.ensureWorker("0123456789abcdef", testKey); err != c.TimingErr {
		t.Fatalf("%v", err)
	}
}

// Probe: the spawned worker reports it was started detached (a session of
// its own; on Windows, no console), stdin the null device, with its
// credential on its descriptor or handle.
func TestProbe(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	rep, err := c.Probe(20 * time.Second)
	if err != nil || !rep.Detached || rep.InJob || !rep.StdinDevNull || !rep.Credential {
		t.Fatalf("%v %+v", err, rep)
	}
}

// Revive: a task nobody works on gets a worker, with the credential it was
// sent with only.
func TestRevive(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "revive me"))
	if !c.NeedsWorker(rec) {
		t.Fatal("a queued task with no worker needs one")
	}
	if err := c.Revive(rec, "b3RoZXI6a2V5"); !errors.Is(err, ErrOtherCredential) {
		t.Fatalf("another credential: %v", err)
	}
	if err := c.Revive(rec, testKey); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if got, err := c.Wait(ctx, rec, Keys{rec.ContextID: testKey}); err != nil || got.State != store.Completed {
		t.Fatalf("%v %+v", err, got)
	}
}

// Cancel: with no worker holding the task, cancel itself writes the record
// canceled and clears the marker; a worker holding it is asked through the
// marker, and cancel waits for it.
func TestCancel(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "never mind"))
	got, err := c.Cancel(context.Background(), rec, false)
	if err != nil || got.State != store.Canceled || got.CanceledBy != "cancel" || c.Store.CancelRequested(rec.ContextID, rec.MessageID) {
		t.Fatalf("%v %+v", err, got)
	}

	held := queued(t, c, message(sim, "slow", "stop following"))
	h, _ := c.Store.Lock(held.ContextID)
	runDone := make(chan *store.Record, 1)
	go func() {
		defer h.Release()
		ctx, stop := c.WatchCancel(context.Background(), held)
		defer stop()
		r, _ := c.Run(ctx, h, Work{Command: "worker", Key: testKey})
		runDone <- r
	}()
	for load(t, c, held.ContextID).State == store.Queued {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err = c.Cancel(ctx, held, false)
	if err != nil || got.State != store.Canceled || got.SentAt == nil || !strings.Contains(got.Reason, "may still finish") {
		t.Fatalf("%v %+v", err, got)
	}
	if r := <-runDone; r.State != store.Canceled {
		t.Errorf("the run ended %s", r.State)
	}
}

// writeFetched writes an outcome only into a record sent and not final
// (or expired), still holding the message it was read for.
func TestWriteFetched(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "fetched"))
	out := &store.Record{State: store.Completed, Reply: "from the server"}
	if ok, err := c.writeFetched(rec, out); ok || err != nil {
		t.Fatalf("a queued record was written: %v", err)
	}
	h, _ := c.Store.Lock(rec.ContextID)
	sent, _ := h.Update(func(x *store.Record) error {
		now := time.Now().UTC()
		x.State, x.SentAt = store.Sending, &now
		return nil
	})
	h.Release()
	if ok, err := c.writeFetched(sent, out); !ok || err != nil {
		t.Fatalf("not written: %v", err)
	}
	if got := load(t, c, rec.ContextID); got.State != store.Completed || got.Reply != "from the server" || got.Via != "fetch" {
		t.Errorf("%+v", got)
	}
	if ok, _ := c.writeFetched(sent, out); ok {
		t.Error("a final record was written again")
	}
}

// errorInfo and its way back: a record keeps a failure by its kind's name.
func TestErrorInfoRoundTrip(t *testing.T) {
	t.Parallel()
	err := &client.Error{Kind: client.KindBusy, StatusCode: 429, Message: "slow down", RetryAfter: 1500 * time.Millisecond, Op: "send"}
	info := errorInfo(err)
	if info.Kind != "busy" || info.RetryAfterSeconds != 2 || info.HTTPStatus != 429 {
		t.Fatalf("%+v", info)
	}
	back := ClientError(info)
	if back.Kind != client.KindBusy || back.StatusCode != 429 || back.RetryAfter != 2*time.Second {
		t.Errorf("%+v", back)
	}
	if KindOf(&store.ErrorInfo{Kind: "no such kind"}) != client.KindUnexpected || errorInfo(nil) != nil ||
		errorInfo(errors.New("x")).Kind != "unexpected" {
		t.Error("unknown kinds and plain errors")
	}
}

// Cancel reads a record, and a follow-up of the same context replaces it
// before cancel takes the lock: the follow-up is not canceled, and cancel
// hands back the earlier message's (archived, final) record.
func TestCancelLeavesAFollowUpAlone(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	first := queued(t, c, message(sim, "quick", "first"))
	h, _ := c.Store.Lock(first.ContextID)
	complete(t, h)
	h.Release()
	read := load(t, c, first.ContextID) // what cancel was given
	follow := message(sim, "quick", "second")
	follow.ContextID = first.ContextID
	next := queued(t, c, follow)

	got, err := c.Cancel(context.Background(), read, false)
	if err != nil || got.MessageID != first.MessageID || got.State != store.Completed {
		t.Fatalf("%v %+v", err, got)
	}
	if disk := load(t, c, first.ContextID); disk.MessageID != next.MessageID || disk.State != store.Queued || disk.Message != "second" {
		t.Fatalf("the follow-up was touched: %+v", disk)
	}
}

// Submit refuses a message while the engine's worker timing is not sound
// (TimingErr), before anything is recorded: no worker could take the task
// over, so its record would wait for one that never starts.
func TestSubmitRefusedWithABadTiming(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	bad := errors.New(`A2A_COURIER_WORKER_STALE_AFTER="10" is not a positive duration`)
	c.TimingErr = bad
	if rec, _, err := submitted(c, context.Background(), message(sim, "quick", "hi"), "send-async"); !errors.Is(err, bad) || rec != nil {
		t.Fatalf("Submit: %v %v", rec, err)
	}
	if recs, errs := c.Store.List(); len(recs) != 0 || len(errs) != 0 {
		t.Errorf("records %v %v", recs, errs)
	}
	if _, err := os.Stat(c.Store.AuditPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("audit log: %v", err)
	}
	if n := sim.TotalRuns(); n != 0 {
		t.Errorf("%d runs", n)
	}
}
