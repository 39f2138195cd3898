package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hangingKibana answers every request at once except those whose path
// ends in "/hang", which it holds until the client gives up or the test
// ends; arrived receives one value per held request.
func hangingKibana(t *testing.T) (*Kibana, chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 64)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/hang") {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/conversations") {
			w.Write([]byte(`{"results":[{"id":"fast","agent_id":"a","title":"t","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}]}`))
			return
		}
		w.Write([]byte(`{"id":"fast","rounds":[]}`))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	k, err := NewKibana(KibanaConfig{URL: srv.URL, APIKey: "a2V5OnNlY3JldA==", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return k, arrived
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
