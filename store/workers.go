package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// MaxWorkerSlots bounds the workers of one identity that hold a worker lock
// at once. One serves an identity; another takes a further slot only while
// every worker before it has stopped beating, so the slots fill only with
// stopped workers.
const MaxWorkerSlots = 8

// ErrWorkersStalled means every worker lock of an identity is held by a
// worker that stopped beating: no new worker can start for it until one of
// them goes on or is ended.
var ErrWorkersStalled = errors.New("every worker lock of this identity is held by a worker that stopped responding")

// WorkerTiming says how often a worker shows that it is alive, and how long
// a silence means that it has stopped (SIGSTOP, a frozen container): alive,
// holding its lock, but not working.
type WorkerTiming struct {
	// Beat is how often the holder of a worker lock touches it; 0 for not
	// at all.
	Beat time.Duration
	// StaleAfter is how long after its last beat a holder counts as
	// stopped. It must be several beats, so that a busy machine is not
	// taken for a stopped worker.
	StaleAfter time.Duration
}

// WorkerLock is the lock a worker holds for its life: workers/<identity>.lock
// for the first slot, workers/<identity>.<n>.lock for slot n. Its holder
// writes its process id into the file, and beats by setting the file's
// modification time; a stopped process stops beating, although the kernel
// still counts its lock as held.
type WorkerLock struct {
	lock *fileLock
	path string
	slot int

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// WorkerInfo describes a held worker lock: who holds it and when it last
// beat.
type WorkerInfo struct {
	Slot int
	// PID is the holder's process id, 0 when unknown.
	PID      int
	LastBeat time.Time
}

// Stale reports whether the holder has not beaten for longer than after.
func (w WorkerInfo) Stale(now time.Time, after time.Duration) bool {
	return now.Sub(w.LastBeat) > after
}

func (s *Store) workerLockPath(identity string, slot int) string {
	if slot == 0 {
		return filepath.Join(s.workersDir(), identity+".lock")
	}
	return filepath.Join(s.workersDir(), fmt.Sprintf("%s.%d.lock", identity, slot))
}

// AcquireWorker takes a worker lock of an identity without waiting, and
// starts beating it. Slots are tried in order: a free one is taken; one
// held by a worker that beats means that worker serves the identity
// (ErrLocked); one held by a worker that stopped beating is passed over
// for the next, so that a stopped worker does not keep new tasks from
// being worked on. The tasks it holds stay with it: each task's own lock
// guards it.
func (s *Store) AcquireWorker(identity string, t WorkerTiming) (*WorkerLock, error) {
	if err := CheckContextID(identity); err != nil {
		return nil, fmt.Errorf("worker identity: %w", err)
	}
	for slot := 0; slot < MaxWorkerSlots; slot++ {
		path := s.workerLockPath(identity, slot)
		l, err := tryLock(path)
		if errors.Is(err, ErrLocked) {
			// Looking (Workers, Locked) takes the lock for an instant: one
			// more try, a moment later, tells a probe from a worker.
			time.Sleep(probeRetry)
			l, err = tryLock(path)
		}
		if errors.Is(err, ErrLocked) {
			if info, ok := s.workerInfo(identity, slot); !ok || !info.Stale(s.now(), t.StaleAfter) {
				return nil, ErrLocked
			}
			continue
		}
		if err != nil {
			return nil, s.unwritable(err)
		}
		l.writeOwner()
		w := &WorkerLock{lock: l, path: path, slot: slot, stop: make(chan struct{}), done: make(chan struct{})}
		// Beat at once: a caller looking now must not take the previous
		// holder's last beat for this one's.
		w.beat()
		if t.Beat > 0 {
			go w.heartbeat(t.Beat)
		} else {
			close(w.done)
		}
		return w, nil
	}
	return nil, ErrWorkersStalled
}

// probeRetry is how long a worker that finds a slot's lock taken waits
// before it looks once more: a probe holds a lock for microseconds.
const probeRetry = 20 * time.Millisecond

// Workers returns the identity's held worker locks, by slot.
func (s *Store) Workers(identity string) []WorkerInfo {
	if CheckContextID(identity) != nil {
		return nil
	}
	var out []WorkerInfo
	for slot := 0; slot < MaxWorkerSlots; slot++ {
		path := s.workerLockPath(identity, slot)
		if _, err := os.Stat(path); err != nil {
			continue // looking creates no file
		}
		l, err := tryLock(path)
		if err == nil {
			l.release()
			continue
		}
		if errors.Is(err, ErrLocked) {
			if info, ok := s.workerInfo(identity, slot); ok {
				out = append(out, info)
			}
		}
	}
	return out
}

func (s *Store) workerInfo(identity string, slot int) (WorkerInfo, bool) {
	path := s.workerLockPath(identity, slot)
	fi, err := os.Stat(path)
	if err != nil {
		return WorkerInfo{}, false
	}
	return WorkerInfo{Slot: slot, PID: readOwner(path), LastBeat: fi.ModTime()}, true
}

// WorkerRunning reports whether a worker holds one of the identity's worker
// locks, beating or not.
func (s *Store) WorkerRunning(identity string) bool { return len(s.Workers(identity)) > 0 }

// Slot is the worker lock's slot.
func (w *WorkerLock) Slot() int { return w.slot }

func (w *WorkerLock) heartbeat(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.beat()
		}
	}
}

func (w *WorkerLock) beat() {
	now := time.Now()
	os.Chtimes(w.path, now, now)
}

// Release stops the heartbeat and gives the worker lock up. No beat comes
// after it: the next holder's silence must be its own.
func (w *WorkerLock) Release() {
	if w == nil || w.lock == nil {
		return
	}
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.lock.release()
	w.lock = nil
}
