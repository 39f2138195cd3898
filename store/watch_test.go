package store

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"
)

// next waits for the change that want accepts, returning the changes seen
// before it; it fails after a minute (a wait for an event, not a timing).
func next(t *testing.T, ch <-chan Change, want func(Change) bool) []Change {
	t.Helper()
	var seen []Change
	deadline := time.After(time.Minute)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("the channel closed; seen %+v", seen)
			}
			if want(c) {
				return seen
			}
			seen = append(seen, c)
		case <-deadline:
			t.Fatalf("no such change; seen %+v", seen)
		}
	}
}

func is(k ChangeKind, id string) func(Change) bool {
	return func(c Change) bool { return c.Kind == k && c.ContextID == id }
}

// TestWatchReportsRecordsInTheStoresTerms: a record created, replaced by
// an atomic rename, archived; a cancel marker; never a temporary file or a
// lock; and a tasks directory removed and made again is watched again.
func TestWatchReportsRecordsInTheStoresTerms(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(newRecord("w-1")); err != nil {
		t.Fatal(err)
	}
	next(t, ch, is(RecordChanged, "w-1"))
	h, err := s.Lock("w-1")
	if err != nil {
		t.Fatal(err)
	}
	// Replaced by a rename: reported under the record's name, never the
	// temporary file's.
	if _, err := h.Update(func(r *Record) error { r.State = Sending; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestCancel("w-1", "m"); err != nil {
		t.Fatal(err)
	}
	before := next(t, ch, is(CancelAsked, "w-1"))
	sawUpdate := false
	for _, c := range before {
		// A rename over the file may be told as the old one removed (on
		// Windows) besides the new one written.
		if c.ContextID != "w-1" || c.Kind != RecordChanged && c.Kind != RecordRemoved {
			t.Errorf("unexpected change %+v", c)
		}
		sawUpdate = sawUpdate || c.Kind == RecordChanged
	}
	if !sawUpdate {
		t.Error("the update by rename was not reported")
	}
	if _, err := h.Update(func(r *Record) error { r.State = Completed; return nil }); err != nil {
		t.Fatal(err)
	}
	next(t, ch, is(RecordChanged, "w-1"))
	if err := h.Archive(); err != nil {
		t.Fatal(err)
	}
	h.Release()
	for _, c := range next(t, ch, is(RecordRemoved, "w-1")) {
		if c.ContextID != "w-1" {
			t.Errorf("unexpected change %+v", c)
		}
	}

	// The tasks directory goes and comes back: watched again, said by a
	// Missed change, and its records are reported again.
	if err := os.RemoveAll(s.tasksDir()); err != nil {
		t.Fatal(err)
	}
	// Windows keeps a directory being watched (its removal waits for the
	// watch to end): there is no other directory to watch then.
	_, err = os.Stat(s.tasksDir())
	if kept := err == nil && runtime.GOOS == "windows"; !kept {
		if err := ensurePrivateDir(s.tasksDir()); err != nil {
			t.Fatal(err)
		}
		next(t, ch, func(c Change) bool { return c.Kind == Missed && c.Err == nil })
	}
	if err := s.Create(newRecord("w-2")); err != nil {
		t.Fatal(err)
	}
	for _, c := range next(t, ch, is(RecordChanged, "w-2")) {
		if c.Kind != Missed && c.ContextID != "w-1" {
			t.Errorf("unexpected change %+v", c)
		}
	}

	cancel()
	for range ch { // closed once ctx ends
	}
}

// TestRecordIDs: only the record files of valid contextIds are records.
func TestRecordIDs(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	for _, name := range []string{"a.json", ".a.json.tmp-1", "a.lock", "a.cancel", "b.json", "..json", "bad id.json"} {
		if err := os.WriteFile(s.tasksDir()+"/"+name, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := RecordIDs(s)
	if err != nil || len(ids) != 2 || ids[0] != "a" || ids[1] != "b" {
		t.Fatalf("%q %v", ids, err)
	}
	if _, ok := RecordModTime(s, "a"); !ok {
		t.Error("no modification time of a")
	}
	if _, ok := RecordModTime(s, "c"); ok {
		t.Error("a modification time of a missing record")
	}
}
