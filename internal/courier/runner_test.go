package courier

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

var errNoSpace = errorString("no space left on device")

type errorString string

func (e errorString) Error() string { return string(e) }

// The whole path of one task in a worker: queued, sent, completed, its
// reply in the record, the text gone, one run on the server, audited.
func TestRunSendsAQueuedTaskOnce(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "hello"))
	if rec.State != store.Queued || load(t, c, rec.ContextID).Message != "hello" {
		t.Fatalf("submitted %+v", rec)
	}
	h, err := c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	var events eventLog
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey, OnEvent: events.add})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.Completed || got.Reply != "Echo: hello" || got.Message != "" || got.Workers != 1 || got.Path != PathBlocking {
		t.Fatalf("%+v", got)
	}
	if disk := load(t, c, rec.ContextID); disk.State != store.Completed || disk.Message != "" || disk.SentAt == nil {
		t.Fatalf("on disk %+v", disk)
	}
	if sim.Runs(rec.ContextID) != 1 || !events.has(client.EventSent) || !events.has(client.EventWritten) {
		t.Errorf("runs %d, events %v", sim.Runs(rec.ContextID), events.kinds)
	}
}

// send in the foreground: the record is created queued, its text in it, as
// for a worker; the run writes sending once its connection is made, just
// before the request, and sends it once. (It used to be created sending,
// the text never on disk: a process that died before its request left
// then left a record nobody would send.)
func TestRunSendsATaskCreatedQueued(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec, h, err := submitted(c, context.Background(), message(sim, "quick", "in the foreground"), "send")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if disk := load(t, c, rec.ContextID); disk.State != store.Queued || disk.Message != "in the foreground" || disk.Workers != 0 || disk.SentAt != nil {
		t.Fatalf("created %+v", disk)
	}
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	if err != nil || got.State != store.Completed || got.Reply != "Echo: in the foreground" || got.Workers != 1 || got.SentAt == nil || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("%v %+v", err, got)
	}
}

// A run that finds the record past sending only reads: the task is
// recovered from the conversation, never sent again.
func TestRunRecoversByReadingOnly(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	m := message(sim, "slow", "once")
	m.MaxWait = 5 * time.Second
	rec, h, err := submitted(c, context.Background(), m, "send")
	if err != nil {
		t.Fatal(err)
	}
	// The sender hands off as soon as the server has the request. (A stop
	// at EventWritten, before net/http flushed its buffer, used to close
	// the connection with the request still in it, 1 run in about 300;
	// the gate now holds the stop back: TestStopOnceTheMessageGoesOutSendsItWhole.)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for sim.Runs(rec.ContextID) == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}()
	first, err := c.Run(ctx, h, Work{Command: "send", Key: testKey})
	h.Release()
	if !errors.Is(err, ErrHandedOff) || first.State.Terminal() {
		t.Fatalf("first run: %v %+v", err, first)
	}
	h, err = c.Store.Lock(rec.ContextID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	if err != nil || got.State != store.Completed || got.Reply != "Report for once." || got.Workers != 2 {
		t.Fatalf("%v %+v", err, got)
	}
	if sim.Runs(rec.ContextID) != 1 {
		t.Errorf("sent %d times", sim.Runs(rec.ContextID))
	}
}

// A task whose caller stopped before a connection was made goes back to
// queued, its text in it, for a worker to send once.
func TestRunHandsBackAnUnsentTask(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec, h, err := submitted(c, context.Background(), message(sim, "quick", "not yet"), "send")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := c.Run(ctx, h, Work{Command: "send", Key: testKey})
	if !errors.Is(err, ErrHandedOff) || got.State != store.Queued || got.Message != "not yet" || got.SentAt != nil {
		t.Fatalf("%v %+v", err, got)
	}
	if sim.Runs(rec.ContextID) != 0 {
		t.Errorf("%d runs", sim.Runs(rec.ContextID))
	}
}

// decide: a cancel asked before the run began ends the task canceled,
// nothing sent; a queued record without text fails.
func TestRunEndsWhatCannotBeSent(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "cancel me"))
	if err := c.Store.RequestCancel(rec.ContextID, rec.MessageID); err != nil {
		t.Fatal(err)
	}
	h, _ := c.Store.Lock(rec.ContextID)
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	if err != nil || got.State != store.Canceled || got.CanceledBy != "cancel" || !strings.Contains(got.Reason, "before it was sent") {
		t.Fatalf("%v %+v", err, got)
	}
	if c.Store.CancelRequested(rec.ContextID, rec.MessageID) || sim.TotalRuns() != 0 {
		t.Errorf("marker left, or %d runs", sim.TotalRuns())
	}

	empty := queued(t, c, message(sim, "quick", "x"))
	h, _ = c.Store.Lock(empty.ContextID)
	h.Update(func(x *store.Record) error { x.Message = ""; return nil })
	got, err = c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	if err != nil || got.State != store.Failed || !strings.Contains(got.Reason, "no message text") {
		t.Fatalf("%v %+v", err, got)
	}
}

// load: a task is worked on only with the credential it was sent with.
func TestRunRefusesAnotherCredential(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "mine"))
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: "b3RoZXI6a2V5"})
	if err == nil || !strings.Contains(err.Error(), "another credential") || got.State != store.Queued || sim.TotalRuns() != 0 {
		t.Fatalf("%v %+v", err, got)
	}
}

// follow and resend: a message the server refused with a 429 goes back to
// queued, and is sent again after the wait the server asked for; it ran
// once.
func TestRunSendsARefusedMessageAgain(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: 429, RetryAfter: "1", Times: 1}}
	})
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "busy?"))
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	var events eventLog
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey, OnEvent: events.add})
	if err != nil || got.State != store.Completed || got.Refusals != 1 || got.Reply != "Echo: busy?" {
		t.Fatalf("%v %+v", err, got)
	}
	if !events.has(client.EventBusy) || sim.Runs(rec.ContextID) != 1 {
		t.Errorf("events %v, runs %d", events.kinds, sim.Runs(rec.ContextID))
	}
}

// settle: a failed run is failed with its reason; a refused one is
// rejected with the refusal.
func TestRunSettlesFailuresAndRefusals(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "flaky", "are you there?"))
	h, _ := c.Store.Lock(rec.ContextID)
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	if err != nil || got.State != store.Failed || !strings.Contains(got.Reason, "No complete response") {
		t.Fatalf("%v %+v", err, got)
	}
	rec = queued(t, c, message(sim, "no-such-agent", "hello"))
	h, _ = c.Store.Lock(rec.ContextID)
	got, err = c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	h.Release()
	if err != nil || got.State != store.Rejected || KindOf(got.Error) != client.KindNotFound {
		t.Fatalf("%v %+v", err, got)
	}
}

// A record that cannot be marked "sending" is not sent: a record still
// queued would be sent again by the next worker.
func TestNoSendWhenTheSendingWriteFails(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "hello"))
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	// The disk is full from the first write on.
	c.write = func(*store.Handle, func(*store.Record) error) (*store.Record, error) {
		return nil, &os.PathError{Op: "write", Path: c.Store.TasksDir(), Err: errNoSpace}
	}
	got, err := c.Run(context.Background(), h, Work{Command: "worker", Key: testKey})
	if err == nil || !strings.Contains(err.Error(), "not sent") {
		t.Fatalf("err %v", err)
	}
	if got.State != store.Queued || sim.TotalRuns() != 0 {
		t.Fatalf("state %s, %d runs", got.State, sim.TotalRuns())
	}
}

// An outcome that cannot be written is still handed back, marked so.
func TestFinalWriteFailureStillReturnsTheReply(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	c := newEngine(t)
	rec := queued(t, c, message(sim, "quick", "hello"))
	h, _ := c.Store.Lock(rec.ContextID)
	defer h.Release()
	c.write = func(h *store.Handle, fn func(*store.Record) error) (*store.Record, error) {
		var probe store.Record
		fn(&probe)
		if probe.State == store.Completed {
			return nil, errNoSpace
		}
		return h.Update(fn)
	}
	got, err := c.Run(context.Background(), h, Work{Command: "send", Key: testKey})
	var rwe *RecordWriteError
	if !errors.As(err, &rwe) || got.State != store.Completed || got.Reply != "Echo: hello" {
		t.Fatalf("%v %+v", err, got)
	}
	if sim.Runs(rec.ContextID) != 1 {
		t.Errorf("runs %d", sim.Runs(rec.ContextID))
	}
}

// ending: how a delivery ended decides what settle writes, in this order.
func TestEndingOrder(t *testing.T) {
	t.Parallel()
	live := context.Background()
	stopped, stop := context.WithCancel(context.Background())
	stop()
	canceledCtx, cancelIt := context.WithCancelCause(context.Background())
	cancelIt(errCancelRequested)
	past, cancelPast := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelPast()
	gone := &client.Error{Kind: client.KindNotFound, Err: client.ErrTaskGone}
	refused := &client.Error{Kind: client.KindForbidden, StatusCode: 403}
	tooLarge := &client.Error{Kind: client.KindProtocol, Err: client.ErrReplyTooLarge}
	unreadable := &client.Error{Kind: client.KindProtocol, Err: client.ErrRoundUnreadable}
	aborted, abort := context.WithCancelCause(context.Background())
	abort(errLikelyAborted)
	for _, tt := range []struct {
		name      string
		ctx, dctx context.Context
		out       client.Outcome
		unsent    bool
		want      ending
	}{
		{"an outcome wins over a stop", stopped, stopped, client.Outcome{State: client.StateCompleted}, false, endOutcome},
		{"cancel", canceledCtx, canceledCtx, client.Outcome{}, false, endCanceled},
		{"stopped, nothing sent", stopped, stopped, client.Outcome{}, true, endUnsent},
		{"stopped after sending", stopped, stopped, client.Outcome{}, false, endHandedOff},
		{"the task is gone", live, past, client.Outcome{Err: gone}, false, endGone},
		{"the task is gone, after the abort grace", live, aborted, client.Outcome{Err: gone}, false, endGone},
		{"likely aborted with its connection", live, aborted, client.Outcome{}, false, endAborted},
		{"likely aborted, a stop wins", stopped, aborted, client.Outcome{}, false, endHandedOff},
		{"the maximum wait", live, past, client.Outcome{}, false, endExpired},
		{"reading refused", live, live, client.Outcome{Err: refused}, false, endRefused},
		{"too large to read", live, live, client.Outcome{Err: tooLarge}, false, endTooLarge},
		{"an unreadable round", live, live, client.Outcome{Err: unreadable}, false, endUnreadable},
		{"nothing more to read", live, live, client.Outcome{Err: errors.New("a page")}, false, endStuck},
	} {
		r := &run{unsent: tt.unsent}
		if got := r.ending(tt.ctx, tt.dctx, tt.out); got != tt.want {
			t.Errorf("%s: ending %d, want %d", tt.name, got, tt.want)
		}
	}
}

// holdFirstListener keeps the connections it accepts while hold is set,
// never handshaken (a TLS client then never has its connection), and
// hands them to the test.
type holdFirstListener struct {
	net.Listener
	hold *atomic.Bool
	held chan net.Conn
}

func (l *holdFirstListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || !l.hold.Load() {
			return c, err
		}
		l.held <- c
	}
}

// A message stays queued, its text in it, until a connection to the server
// is made: a run stopped while it connects (here, held before the TLS
// handshake) leaves it queued for the next worker, which sends it once.
// The sending write comes once the connection is there.
func TestRunWritesSendingOnlyOnceConnected(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	u, _ := url.Parse(sim.URL)
	var hold atomic.Bool
	hold.Store(true)
	held := make(chan net.Conn, 8)
	front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(u))
	front.Listener = &holdFirstListener{Listener: front.Listener, hold: &hold, held: held}
	front.StartTLS()
	defer front.Close()
	c := newEngine(t)
	pool := x509.NewCertPool()
	pool.AddCert(front.Certificate())
	hc := client.NewHTTPClient(&tls.Config{RootCAs: pool})
	c.HTTPClient = func(store.Target) (*http.Client, error) { return hc, nil }
	m := message(sim, "quick", "while it connects")
	m.Target.URL = front.URL
	rec := queued(t, c, m)
	h, _ := c.Store.Lock(rec.ContextID)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		conn := <-held
		defer conn.Close()
		// Connecting: nothing can have left, and the record says so.
		if disk := load(t, c, rec.ContextID); disk.State != store.Queued || disk.Message != "while it connects" || disk.SentAt != nil {
			t.Errorf("while connecting: %s %q", disk.State, disk.Message)
		}
		stop() // the caller's --timeout, say
	}()
	got, err := c.Run(ctx, h, Work{Command: "send", Key: testKey})
	h.Release()
	if !errors.Is(err, ErrHandedOff) || got.State != store.Queued || got.Message != "while it connects" || got.SentAt != nil || got.Workers != 0 {
		t.Fatalf("%v %+v", err, got)
	}
	if sim.Runs(rec.ContextID) != 0 {
		t.Fatalf("%d runs", sim.Runs(rec.ContextID))
	}
	hold.Store(false)
	h, _ = c.Store.Lock(rec.ContextID)
	defer h.Release()
	var sendingAt atomic.Value
	got, err = c.Run(context.Background(), h, Work{Command: "worker", Key: testKey, OnEvent: func(e client.Event) {
		if e.Kind == client.EventWritten {
			sendingAt.Store(load(t, c, rec.ContextID).State)
		}
	}})
	if err != nil || got.State != store.Completed || got.Reply != "Echo: while it connects" || got.Workers != 1 || sim.Runs(rec.ContextID) != 1 {
		t.Fatalf("%v %+v, %d runs", err, got, sim.Runs(rec.ContextID))
	}
	if s, _ := sendingAt.Load().(store.State); s != store.Sending && s != store.Working {
		t.Errorf("the record said %q when the request was written", s)
	}
}
