package store

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// A write whose directory fsync fails after the new file is in place says
// so with ErrNotDurable, distinct from a write that was not made: Update
// hands back the record the disk now holds, Create's record is there,
// WriteReply names its file, Remove's record is gone. A write that fails
// before its rename is no ErrNotDurable, and writes nothing.
func TestDirSyncFailureAfterTheRenameIsNotDurable(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	eio := &os.PathError{Op: "sync", Path: s.tasksDir(), Err: syscall.EIO}
	s.SetDirSyncFault(func(string) error { return eio })
	err := s.Create(newRecord("ctx-d"))
	if !errors.Is(err, ErrNotDurable) || !errors.Is(err, syscall.EIO) || !InPlace(err) {
		t.Fatalf("create: %v", err)
	}
	if r, lerr := s.Load("ctx-d"); lerr != nil || r.State != Queued {
		t.Fatalf("created record: %v", lerr)
	}
	h, err := s.Lock("ctx-d")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	r, err := h.Update(func(r *Record) error { r.State, r.Message = Sending, ""; return nil })
	if !errors.Is(err, ErrNotDurable) || r == nil || r.State != Sending {
		t.Fatalf("update: %v, %+v", err, r)
	}
	if disk, _ := s.Load("ctx-d"); disk.State != Sending {
		t.Fatalf("on disk %s", disk.State)
	}
	path, err := s.WriteReply("ctx-d", "a reply")
	if !errors.Is(err, ErrNotDurable) || path == "" {
		t.Fatalf("reply: %q %v", path, err)
	}
	if b, rerr := os.ReadFile(path); rerr != nil || string(b) != "a reply" {
		t.Fatalf("reply file: %q %v", b, rerr)
	}
	if err := s.RequestCancel("ctx-d", "m"); !errors.Is(err, ErrNotDurable) || !s.CancelRequested("ctx-d", "m") {
		t.Fatalf("cancel marker: %v", err)
	}
	// Not a sync: a move the state machine refuses writes nothing, and is
	// no ErrNotDurable.
	if _, err := h.Update(func(r *Record) error { r.State = State("bogus"); return nil }); err == nil || InPlace(err) {
		t.Fatalf("a refused write: %v", err)
	}
	if err := h.Remove(); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("remove: %v", err)
	}
	if _, err := s.Load("ctx-d"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed record: %v", err)
	}
	s.SetDirSyncFault(nil)
	if err := s.Create(newRecord("ctx-e")); err != nil {
		t.Fatalf("without the fault: %v", err)
	}
}
