package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/store"
)

// Outcomes that never lie (the hardening issue): what the server did is
// what the record says, and every command that shows it agrees.

// TestReplyOverTheCap: a run that completed with a reply larger than an
// answer may be (36 MB in a 200) is completed, not rejected: the reply is
// read from the conversation, kept in a file beside the record, and cut in
// the output; send, result and fetch say the same.
func TestReplyOverTheCap(t *testing.T) {
	t.Parallel()
	const size = 36 << 20
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "verbose", Name: "Verbose", Reply: "start of a long report.", ReplyBytes: size, RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	r := h.run("send", "verbose", "tell me everything", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	check := func(what string, d taskDoc) {
		t.Helper()
		if d.State != "completed" || d.Reply == nil || !strings.HasPrefix(*d.Reply, "start of a long report.") || !d.ReplyTruncated ||
			d.ReplyChars < size || d.ReplyFile == "" || len(*d.Reply) > courier.SpilledReplyCut+200 {
			t.Fatalf("%s: state %s, truncated %v, %d chars, file %q, %d bytes shown", what, d.State, d.ReplyTruncated, d.ReplyChars, d.ReplyFile, len(*d.Reply))
		}
		if fi, err := os.Stat(d.ReplyFile); err != nil || fi.Size() < size || ownfiletest.FileProblem(d.ReplyFile) != "" {
			t.Fatalf("%s: the reply file: %v %v %s", what, fi, err, ownfiletest.FileProblem(d.ReplyFile))
		}
	}
	check("send", d)
	if sim.Runs(d.ContextID) != 1 {
		t.Errorf("%d runs", sim.Runs(d.ContextID))
	}
	rec := loadRecord(t, h, d.ContextID)
	if rec.Reply != "" || rec.ReplyFile != d.ReplyFile || rec.ReplyBytes < size {
		t.Errorf("the record holds %d bytes of reply, file %q", len(rec.Reply), rec.ReplyFile)
	}
	r = h.run("result", d.ContextID, "--json")
	r.expect(t, ExitOK)
	check("result", decodeTask(t, r.stdout))
	r = h.run("fetch", d.ContextID, "--json", "--max-chars", "100")
	r.expect(t, ExitOK)
	f := decodeTask(t, r.stdout)
	if f.State != "completed" || !f.ReplyTruncated || f.ReplyChars < size || len(*f.Reply) > 400 {
		t.Fatalf("fetch --max-chars 100: %+v", f.ReplyChars)
	}
}

// TestCreatedSentFinishedInOrder: a record's times come from one clock, in
// order (an answer sent twice, refused, is in the interop matrix: "an
// answer sent twice").
func TestCreatedSentFinishedInOrder(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	// The process's clock runs 1000 hours behind the machine's: every time
	// of the record is on it, none on another clock.
	const behind = 1000 * time.Hour
	h.now = func() time.Time { return time.Now().Add(-behind) }
	d := decodeTask(t, h.run("send", "elastic-ai-agent", "in order", "--json").stdout)
	rec := loadRecord(t, h, d.ContextID)
	if rec.State != store.Completed {
		// (The maximum wait is counted on the process's clock too.)
		t.Errorf("state %s: %s", rec.State, rec.Reason)
	}
	if rec.SentAt == nil || rec.FinishedAt == nil || rec.SentAt.Before(rec.CreatedAt) || rec.FinishedAt.Before(*rec.SentAt) {
		t.Errorf("created %v sent %v finished %v", rec.CreatedAt, rec.SentAt, rec.FinishedAt)
	}
	limit := time.Now().Add(-behind / 2)
	for name, at := range map[string]*time.Time{"created": &rec.CreatedAt, "sent": rec.SentAt, "finished": rec.FinishedAt} {
		if at != nil && at.After(limit) {
			t.Errorf("%s at %v: not on the process's clock", name, at)
		}
	}
}

// TestRedirectLoopAndInterrupt: a redirect loop is a configuration error,
// not an unreachable server; Ctrl-C during a request is "interrupted", not
// a lost connection.
func TestRedirectLoopAndInterrupt(t *testing.T) {
	t.Parallel()
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(loop.Close)
	h := newHarness(t, nil)
	h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = loop.URL, testKey
	r := h.run("discover", "--json")
	r.expect(t, ExitUsage)
	var doc struct{ Error errorDoc }
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "config" || !strings.Contains(doc.Error.Message, "redirects in a loop") || !strings.Contains(doc.Error.Hint, "KIBANA_URL") {
		t.Errorf("%+v", doc.Error)
	}

	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	t.Cleanup(hang.Close)
	h = newHarness(t, nil)
	h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = hang.URL, testKey
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel) // as Ctrl-C does
	r = h.runCtx(ctx, "discover", "--json")
	r.expect(t, ExitUnexpected)
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "interrupted" || strings.Contains(doc.Error.Message+doc.Error.Hint, "network") {
		t.Errorf("%+v", doc.Error)
	}
}

// TestWrongSpace: fetch and show read the space the task was sent in, and
// say which space they read when nothing is there.
func TestWrongSpace(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "prod-agent", Name: "Prod", Space: "prod", RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	h.env["KIBANA_SPACE_ID"] = "prod"
	d := decodeTask(t, h.run("send", "prod-agent", "in prod", "--json").stdout)
	// The user switches to the default space: the record knows where the
	// task went.
	delete(h.env, "KIBANA_SPACE_ID")
	for _, args := range [][]string{{"fetch", d.ContextID}, {"show", d.ContextID}} {
		r := h.run(args...)
		r.expect(t, ExitOK)
		if r.stdout != "Echo: in prod\n" || !strings.Contains(r.stderr, "reading space prod") {
			t.Errorf("%v: stdout %q stderr %q", args, r.stdout, r.stderr)
		}
	}
	// Without a record (another machine), the message names the space read.
	other := newHarness(t, sim)
	r := other.run("fetch", d.ContextID, "--json")
	r.expect(t, ExitStillRunning)
	if doc := decodeTask(t, r.stdout); !strings.Contains(doc.Reason, "in space default") || !strings.Contains(doc.Reason, "KIBANA_SPACE_ID") {
		t.Errorf("%+v", doc)
	}
	r = other.run("show", d.ContextID)
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "not found in space default") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestCancelRacesAFollowUp: cancel of a context while a follow-up message
// replaces its record never reports a record as still running: it finds
// the finished exchange, or the follow-up, which it cancels.
func TestCancelRacesAFollowUp(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	ctxID := decodeTask(t, p.run("send", "elastic-ai-agent", "first", "--json").stdout).ContextID
	st := p.store()
	for i := 0; i < 5; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		follow := p.cmd(ctx, "", "send", "audit-agent", "follow-up", "--context", ctxID, "--json", "--poll-interval", "100ms")
		if err := follow.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i*15) * time.Millisecond) // land the cancel at different moments
		r := p.run("cancel", ctxID, "--json")
		follow.Wait()
		cancel()
		c := decodeTask(t, r.stdout)
		switch {
		case r.code == ExitOK && c.State == "canceled":
		case r.code == ExitTaskFailed && strings.Contains(r.stdout, "not_cancelable") &&
			(strings.Contains(r.stdout, "already") || strings.Contains(r.stdout, "finished before the cancel took effect")):
		default:
			t.Fatalf("cancel %d: exit %d %s", i, r.code, r.stdout)
		}
		if rec, _ := st.Load(ctxID); !rec.State.Terminal() {
			t.Fatalf("the record is %s after the cancel and the send ended", rec.State)
		}
	}
}

// TestFetchOfAnUnreadableRound: fetch of a context whose stored round is in
// a shape no Kibana writes says the task is lost (exit 6), as the worker
// that read it so would, with one line and a hint; never a completed
// empty reply.
func TestFetchOfAnUnreadableRound(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	const ctxID = "0b5c9a70-2b1e-4d7e-9d3c-51c1f0a5e0aa"
	sim.PutConversation("", "a2a-"+ctxID, "elastic-ai-agent", "svc-a2a", "planted", time.Now(),
		json.RawMessage(`{"input":{"message":"q"},"response":{"message":7}}`))
	r := h.run("fetch", ctxID, "--json")
	r.expect(t, ExitTaskFailed)
	var doc struct{ Error errorDoc }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Error.Code != "task_lost" ||
		!strings.Contains(doc.Error.Message, "cannot be read") || doc.Error.Hint == "" {
		t.Fatalf("%v %s", err, r.stdout)
	}
}
