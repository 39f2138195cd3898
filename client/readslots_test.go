package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// hangingKibana answers every request at once except those whose path
// ends in "/hang", which it holds until the client gives up or the test
// ends; arrived receives one value per held request.
func hangingKibana(t *testing.T) (*Kibana, chan struct{}) {
	t.Helper()
	arrived, hang := hangOn(t)
	srv := httptest.NewServer(hang(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/conversations") {
			w.Write([]byte(`{"results":[{"id":"fast","agent_id":"a","title":"t","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}]}`))
			return
		}
		w.Write([]byte(`{"id":"fast","rounds":[]}`))
	}))
	t.Cleanup(srv.Close)
	k, err := NewKibana(KibanaConfig{URL: srv.URL, APIKey: "a2V5OnNlY3JldA==", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return k, arrived
}

// hangOn returns a wrapper of a handler that holds every request whose
// path ends in "/hang" until the client gives up or the test ends, and
// passes the rest to next; arrived receives one value per held request.
func hangOn(t *testing.T) (arrived chan struct{}, hang func(next http.HandlerFunc) http.Handler) {
	arrived = make(chan struct{}, 64)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return arrived, func(next http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/hang") {
				arrived <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			next(w, r)
		})
	}
}

// holdAllReadSlots starts MaxConcurrentReads reads the server never
// answers and returns once the server holds every one; wait returns their
// errors once they ended.
func holdAllReadSlots(t *testing.T, ctx context.Context, k *Kibana, arrived chan struct{}) (wait func() []error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, MaxConcurrentReads)
	for i := range MaxConcurrentReads {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = k.GetConversation(ctx, "hang") }()
	}
	for range MaxConcurrentReads {
		<-arrived
	}
	return func() []error { wg.Wait(); return errs }
}

// TestHungReadsGiveTheirSlotsBack: eight reads a server never answers hold
// every read slot of its origin; each attempt's own bound (readHold, made
// short here) ends them with "timed out waiting for the server", and a
// ninth read, whose caller sets no deadline, then gets a slot and its
// answer. A read whose caller stops while it waits for a slot says that
// nothing was sent (ErrNoReadSlot, busy), not "connection lost". Before,
// nothing bounded a slot's hold: the ninth read waited until its caller's
// context ended and failed with "connection lost: timed out waiting for
// the server".
func TestHungReadsGiveTheirSlotsBack(t *testing.T) {
	k, arrived := hangingKibana(t)
	defer readHold.Store(int64(60 * time.Second))
	// A caller that stops while all the slots are held.
	readHold.Store(int64(time.Hour))
	hung, stop := context.WithCancel(context.Background())
	wait := holdAllReadSlots(t, hung, k, arrived)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := k.GetConversation(ctx, "fast")
	cancel()
	if !errors.Is(err, ErrNoReadSlot) || !IsKind(err, KindBusy) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("a read that found no slot: %v (kind %s), want ErrNoReadSlot, busy", err, KindOf(err))
	}
	stop()
	wait()
	// Reads never answered, each bounded by a short hold this time: they
	// end and free their slots for a read whose caller sets no deadline.
	readHold.Store(int64(300 * time.Millisecond))
	wait = holdAllReadSlots(t, context.Background(), k, arrived)
	done := make(chan error, 1)
	go func() { _, err := k.GetConversation(context.Background(), "fast"); done <- err }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("a read the server answers at once still waits a minute after eight hung ones")
	}
	if err != nil {
		t.Errorf("a read the server answers at once, after eight hung ones: %v", err)
	}
	for _, err := range wait() {
		if !IsKind(err, KindConnection) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a read never answered: %v (kind %s), want a connection timeout", err, KindOf(err))
		}
	}
}

// TestUrgentReadsDoNotQueue: with every read slot of the origin held by
// reads the server does not answer (a Kibana 9.6 simulator behind a front
// that holds some paths), a task a caller waits on (Hurry) is still sent,
// followed by tasks/get and its reply read, and the feed's list read still
// answers: they take the reserved slots. A plain read still waits (the
// control). Before, both queued behind the held reads until their
// contexts ended: the delivery had no outcome, the feed could not tell.
func TestUrgentReadsDoNotQueue(t *testing.T) {
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
	target, _ := url.Parse(sim.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	arrived, hang := hangOn(t)
	front := httptest.NewServer(hang(proxy.ServeHTTP))
	t.Cleanup(front.Close)
	k := newTestKibana(t, front.URL, func(c *KibanaConfig) { c.APIKey = Secret(testKey); c.Retries = -1 })
	hung, stop := context.WithCancel(context.Background())
	defer stop()
	holdAllReadSlots(t, hung, k, arrived)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := deliverOpts("slow", "c-urgent", "waited on")
	o.NonBlocking = true
	o.Hurry = &Hurry{}
	o.Hurry.Set(true)
	out := k.Deliver(ctx, o)
	if out.State != StateCompleted || out.Reply != "Echo: waited on" {
		t.Errorf("a task a caller waits on, all read slots held: %+v", out)
	}

	f := NewFeed(k, "slow", true, false)
	defer f.Follow()()
	defer f.Follow()()
	if v, seen := f.Check(ctx, time.Now(), ConversationIDForContext("c-urgent"), ""); v != FeedChanged || seen == "" {
		t.Errorf("the list, all read slots held: %v %q, want changed", v, seen)
	}

	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := k.GetConversation(short, ConversationIDForContext("c-urgent")); !errors.Is(err, ErrNoReadSlot) {
		t.Errorf("a plain read, all read slots held: %v, want ErrNoReadSlot", err)
	}
}
