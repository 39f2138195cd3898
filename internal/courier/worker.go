package courier

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Serve is the detached worker: it serves every task of one identity
// (credential key) until none is left for linger, claiming records as the
// tasks directory announces them and in a rescan every rescan. It holds the
// identity's worker lock, and each task's lock while it works on it. It
// returns when it is idle, when another worker serves the identity, or when
// ctx ends (the tasks keep their state for the next worker).
func (c *Courier) Serve(ctx context.Context, ident string, key client.Secret, linger, rescan time.Duration) {
	wl, err := c.Store.AcquireWorker(ident, c.Timing)
	if errors.Is(err, store.ErrLocked) {
		c.logf("another worker serves %s; exiting", ident)
		return
	}
	if err != nil {
		c.logf("%v; exiting", err)
		return
	}
	if wl.Slot() > 0 {
		c.logf("the worker(s) before slot %d of %s stopped responding; their tasks stay with them", wl.Slot(), ident)
	}
	w := &worker{
		st: c.Store, ident: ident, lock: wl, c: c, key: key,
		active: map[string]context.CancelCauseFunc{}, skip: map[string]time.Time{}, done: make(chan taskEnd, 16),
		linger: linger, rescan: rescan, feeds: newFeeds(), hurry: map[string]*client.Hurry{},
	}
	// The worker is this process: it waits on its tasks far more than it
	// computes, and its footprint is what a thousand tasks cost. The
	// collector's goal counts the goroutines' stacks with the heap (since
	// Go 1.18), so at the default 100 a worker holding 1,000 open POSTs
	// (9.5) let its heap grow by the 60 MiB they hold live: 109 MiB of RSS.
	// At 25 a collection comes four times as often, on a heap that is
	// mostly waiting goroutines (scripts/bench, section scale).
	workerGC()
	c.logf("serving %s from %s", ident, c.Store.Dir())
	w.loop(ctx)
	c.logf("exiting")
}

// workerGCPercent is the worker process's GOGC (Serve).
const workerGCPercent = 25

// worker serves every task of one identity in one process: a hundred
// pending tasks cost one process, not a hundred.
type worker struct {
	st     *store.Store
	ident  string
	lock   *store.WorkerLock
	c      *Courier
	key    client.Secret
	linger time.Duration
	rescan time.Duration

	wg     sync.WaitGroup
	active map[string]context.CancelCauseFunc
	// skip holds records not to look at again while their file is
	// unchanged (terminal, another identity's, damaged, stopped on an
	// error), with the file's modification time: a record replaced under
	// the same contextId (a follow-up) is looked at afresh.
	skip map[string]time.Time
	done chan taskEnd
	// closing is set once another worker took over: finish, claim nothing.
	closing bool
	// feeds are the conversation lists the tasks share; hurry says, per
	// active task, whether a caller waits on it (its wait marker).
	feeds *feeds
	hurry map[string]*client.Hurry
	// rescans counts the rescans.
	rescans int
}

// waitRecheck is every how many rescans the wait markers of every active
// task are read again (an event can be missed).
const waitRecheck = 5

func (w *worker) loop(ctx context.Context) {
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	changes, err := store.Watch(wctx, w.st)
	if err != nil {
		w.c.logf("watching tasks: %v", err) // the rescan finds them
	}
	rescan := time.NewTicker(w.rescan)
	defer rescan.Stop()
	linger := time.NewTimer(w.linger)
	defer linger.Stop()
	w.claimAll(ctx)
	for {
		select {
		case <-ctx.Done():
			w.c.logf("stopping (%v); tasks keep their state for the next worker", context.Cause(ctx))
			w.wg.Wait()
			w.lock.Release()
			return
		case ch, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			w.changed(ctx, ch)
		case <-rescan.C:
			w.claimAll(ctx)
			w.rescans++
			for id := range w.active {
				w.cancelIfAsked(id)
				// A marker whose event was missed, every few rescans; an
				// expired one (its waiter killed), at every rescan.
				w.noteWaiting(id, w.rescans%waitRecheck != 0)
			}
		case end := <-w.done:
			w.ended(end)
			if len(w.active) == 0 {
				linger.Reset(w.linger)
			}
		case <-linger.C:
			if len(w.active) > 0 {
				continue
			}
			if w.closing {
				w.wg.Wait()
				return
			}
			// Release first, then look once more: a process that found
			// the lock held wrote its record before looking, so this scan
			// sees it; one that finds the lock free starts a new worker.
			w.lock.Release()
			w.claimAll(ctx)
			if len(w.active) == 0 {
				return
			}
			l, err := w.st.AcquireWorker(w.ident, w.c.Timing)
			if err != nil {
				w.closing = true
				w.c.logf("another worker took over; finishing %d task(s)", len(w.active))
				continue
			}
			w.lock = l
		}
	}
}

// ended is a task's run over.
func (w *worker) ended(end taskEnd) {
	delete(w.active, end.id)
	delete(w.hurry, end.id)
	if end.stopped {
		// It stopped on an error (reading refused): not again until its
		// record changes.
		w.skipNow(end.id)
	}
}

// changed is a change of the tasks directory (store.Watch): a record is
// claimed unless it is one to skip and unchanged since (claim compares its
// modification time: an event is no proof of a change, and Windows
// delivers the event of a worker's own last write after the run ended,
// so the skip is never cleared by an event); a removed record is looked
// at too (a follow-up may already be in its place); a cancel is acted on;
// after missed events every record is looked at.
func (w *worker) changed(ctx context.Context, ch store.Change) {
	switch ch.Kind {
	case store.RecordChanged, store.RecordRemoved:
		w.claim(ctx, ch.ContextID)
	case store.CancelAsked:
		w.cancelIfAsked(ch.ContextID)
	case store.WaitChanged:
		w.noteWaiting(ch.ContextID, false)
	default:
		if ch.Err != nil {
			w.c.logf("watching tasks: %v", ch.Err)
		}
		w.claimAll(ctx)
	}
}

func (w *worker) claimAll(ctx context.Context) {
	if w.closing {
		return
	}
	ids, err := store.RecordIDs(w.st)
	if err != nil {
		w.c.logf("read tasks: %v", err)
		return
	}
	for _, id := range ids {
		w.claim(ctx, id)
	}
}

// recordMtime returns the modification time of a task's record file.
func (w *worker) recordMtime(id string) (time.Time, bool) { return store.RecordModTime(w.st, id) }

func (w *worker) skipNow(id string) {
	if mt, ok := w.recordMtime(id); ok {
		w.skip[id] = mt
	}
}

func (w *worker) claim(ctx context.Context, id string) {
	if w.closing || w.active[id] != nil {
		return
	}
	if mt, ok := w.skip[id]; ok {
		if cur, exists := w.recordMtime(id); !exists || cur.Equal(mt) {
			return
		}
		delete(w.skip, id)
	}
	rec, err := w.st.Load(id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			w.c.logf("%v", err)
			w.skipNow(id)
		}
		return
	}
	if rec.Identity != w.ident || rec.State.Terminal() {
		w.skipNow(id)
		return
	}
	h, err := w.st.Lock(id)
	if err != nil {
		return // a foreground send or another worker has it
	}
	tctx, cancel := context.WithCancelCause(ctx)
	w.active[id] = cancel
	hu := &client.Hurry{}
	hu.Set(store.Waited(w.st, id, time.Now()))
	w.hurry[id] = hu
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer h.Release()
		defer cancel(nil)
		_, err := w.c.Run(tctx, h, Work{Command: "worker", Key: w.key, feeds: w.feeds, hurry: hu})
		stopped := err != nil && !errors.Is(err, ErrHandedOff)
		if stopped {
			w.c.logf("%s: %v", id, err)
		}
		select {
		case w.done <- taskEnd{id: id, stopped: stopped}:
		case <-ctx.Done():
		}
	}()
}

// noteWaiting reads an active task's wait marker: a caller that waits on
// it makes its delivery look every client.FastPoll. expiredOnly looks
// only at a task said to be waited on (the rescan: a waiter killed
// without removing its marker).
func (w *worker) noteWaiting(id string, expiredOnly bool) {
	hu := w.hurry[id]
	if hu == nil || expiredOnly && !hu.Waiting() {
		return
	}
	hu.Set(store.Waited(w.st, id, time.Now()))
}

// cancelIfAsked stops an active task whose cancel was requested; the
// runner then marks it canceled.
func (w *worker) cancelIfAsked(id string) {
	cancel := w.active[id]
	if cancel == nil {
		return
	}
	if rec, err := w.st.Load(id); err == nil && w.st.CancelRequested(id, rec.MessageID) {
		w.c.logf("%s: cancel requested", id)
		cancel(errCancelRequested)
	}
}

type taskEnd struct {
	id      string
	stopped bool
}

// workerGC sets the worker's GC goal to workerGCPercent, unless GOGC is
// set in its environment: then the runtime already took the user's.
func workerGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(workerGCPercent)
	}
}
