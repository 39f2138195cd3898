package store

import (
	"context"
	"testing"
	"time"
)

// TestWaitMarker: a wait marker says a caller waits until its time, is
// reported by Watch when written and when removed (never its temporary
// file), and an expired or absent one says nobody waits.
func TestWaitMarker(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := Watch(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// A record first: once its change comes, the directory is watched.
	if err := s.Create(newRecord("w-1")); err != nil {
		t.Fatal(err)
	}
	next(t, ch, is(RecordChanged, "w-1"))
	now := time.Now()
	if Waited(s, "w-1", now) {
		t.Fatal("waited without a marker")
	}
	if err := MarkWaiting(s, "w-1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, c := range next(t, ch, is(WaitChanged, "w-1")) {
		t.Errorf("unexpected change %+v", c)
	}
	if !Waited(s, "w-1", now) || Waited(s, "w-1", now.Add(2*time.Minute)) {
		t.Error("a marker until a minute from now: waited now, and not in two minutes")
	}
	ClearWaiting(s, "w-1")
	next(t, ch, is(WaitChanged, "w-1"))
	if Waited(s, "w-1", now) {
		t.Error("waited after the marker was removed")
	}
	if MarkWaiting(s, "../x", now) == nil {
		t.Error("a marker for an invalid contextId was written")
	}
}
