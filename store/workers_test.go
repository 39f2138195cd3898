package store

import (
	"errors"
	"os"
	"testing"
	"time"
)

// One worker serves an identity while it beats; one that stopped beating
// is passed over, and the next takes the following slot. A stopped worker
// looks like a held lock whose file is not touched any more.
func TestWorkerSlotsPassOverAStoppedWorker(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	const ident = "abcdef0123456789"
	beating := WorkerTiming{Beat: 10 * time.Millisecond, StaleAfter: 200 * time.Millisecond}
	first, err := s.AcquireWorker(ident, beating)
	if err != nil {
		t.Fatal(err)
	}
	if first.Slot() != 0 {
		t.Fatalf("slot %d", first.Slot())
	}
	time.Sleep(300 * time.Millisecond) // longer than StaleAfter, but it beats
	if _, err := s.AcquireWorker(ident, beating); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second worker beside one that beats: %v", err)
	}
	ws := s.Workers(ident)
	if len(ws) != 1 || ws[0].PID != os.Getpid() || ws[0].Stale(time.Now(), beating.StaleAfter) {
		t.Fatalf("workers %+v", ws)
	}
	first.Release()
	if s.WorkerRunning(ident) {
		t.Fatal("released, still seen")
	}

	// Beat 0: this holder is silent from the start, as a stopped one is.
	silent, err := s.AcquireWorker(ident, WorkerTiming{StaleAfter: 200 * time.Millisecond})
	if err != nil || silent.Slot() != 0 {
		t.Fatalf("%v", err)
	}
	defer silent.Release()
	if _, err := s.AcquireWorker(ident, beating); !errors.Is(err, ErrLocked) {
		t.Fatalf("before its silence is long: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	next, err := s.AcquireWorker(ident, beating)
	if err != nil || next.Slot() != 1 {
		t.Fatalf("after a silence: %v", err)
	}
	ws = s.Workers(ident)
	if len(ws) != 2 || ws[0].Slot != 0 || !ws[0].Stale(time.Now(), beating.StaleAfter) || ws[1].Slot != 1 || ws[1].Stale(time.Now(), beating.StaleAfter) {
		t.Fatalf("workers %+v", ws)
	}
	// The second beats: no third.
	if _, err := s.AcquireWorker(ident, beating); !errors.Is(err, ErrLocked) {
		t.Fatalf("third: %v", err)
	}
	// No beat after Release: the file of a released slot stays as it was.
	next.Release()
	fi, _ := os.Stat(s.workerLockPath(ident, 1))
	time.Sleep(50 * time.Millisecond)
	if fi2, _ := os.Stat(s.workerLockPath(ident, 1)); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("a released worker lock is still beaten")
	}

	// Every slot held by a silent worker: none is left.
	for i := 1; i < MaxWorkerSlots; i++ {
		l, err := s.AcquireWorker(ident, WorkerTiming{StaleAfter: time.Nanosecond})
		if err != nil || l.Slot() != i {
			t.Fatalf("slot %d: %v", i, err)
		}
		defer l.Release()
	}
	time.Sleep(time.Millisecond)
	if _, err := s.AcquireWorker(ident, WorkerTiming{StaleAfter: time.Nanosecond}); !errors.Is(err, ErrWorkersStalled) {
		t.Fatalf("all slots stalled: %v", err)
	}
}

// The holder of a task's lock is known by its process id while it holds it.
func TestLockHolder(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	if s.LockHolder("ctx-h") != 0 {
		t.Error("holder of a lock never taken")
	}
	h, err := s.Lock("ctx-h")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if got := s.LockHolder("ctx-h"); got != os.Getpid() {
		t.Errorf("holder %d, want %d", got, os.Getpid())
	}
}
