package courier

import (
	"context"
	"errors"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// NeedsWorker reports whether a task that is not final has nobody working
// on it and needs a worker (Revive): not when one holds its lock, nor when
// its reads were refused, since a new worker would only be refused again
// (fetch reads once, when fixed).
func (c *Courier) NeedsWorker(rec *store.Record) bool {
	return !rec.State.Terminal() && !c.Store.Locked(rec.ContextID) && !ReadingRefused(rec)
}

// ErrOtherCredential means a task was sent with another URL or credential
// than the one given: only a worker holding that one may work on it.
var ErrOtherCredential = errors.New("the task was sent with another URL or credential")

// Revive starts a worker for a task that needs one (NeedsWorker), with key,
// the credential the caller resolved for the task's target. A worker of a
// record past sending reads the reply back and never sends again; only a
// record still queued is sent.
func (c *Courier) Revive(rec *store.Record, key client.Secret) error {
	if identity(rec.Target, key) != rec.Identity {
		return ErrOtherCredential
	}
	return c.ensureWorker(rec.Identity, key)
}

// reviveAfter is how long Wait lets a task go without a worker before it
// revives it.
const reviveAfter = 5 * time.Second

// Keys are the credentials Wait revives tasks with, by contextId, each
// resolved once by the caller for its task's target. A task without one
// is not revived.
type Keys map[string]client.Secret

// Wait waits until a task's record is final (or its reads were refused and
// nobody holds it), or ctx ends: then it returns the record as it stands.
// It watches the tasks directory and looks every second in case an event
// is missed; a worker that dies meanwhile is replaced (Revive, with the
// task's key of keys), which the log says.
func (c *Courier) Wait(ctx context.Context, rec *store.Record, keys Keys) (*store.Record, error) {
	recs, _, err := c.WaitMany(ctx, []*store.Record{rec}, false, keys)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// Done reports whether waiting for a record is over: it is final, or its
// reads were refused and nobody holds it (nobody can do better until the
// credential is fixed).
func (c *Courier) Done(rec *store.Record) bool {
	return rec.State.Terminal() || ReadingRefused(rec) && !c.Store.Locked(rec.ContextID)
}

// WaitMany waits for several tasks, as Wait does for one: until every one
// is done, or with anyDone until one is; or until ctx ends. It returns the
// records as they stand, in the order given, and the index of the task
// that finished first (-1 when none has): of those found done at the same
// look, the one whose record ended first. A record that disappears (a
// follow-up archived it) counts as done as it was last read.
func (c *Courier) WaitMany(ctx context.Context, recs []*store.Record, anyDone bool, keys Keys) ([]*store.Record, int, error) {
	recs = append([]*store.Record(nil), recs...)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	changes, _ := store.Watch(wctx, c.Store) // without it, a look every second
	names := map[string]bool{}
	for _, r := range recs {
		names[r.ContextID] = true
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	marked := c.markWaiting(recs, time.Time{})
	defer c.clearWaiting(recs)
	revived := c.now()
	first := -1
	gone := make([]bool, len(recs))
	for look := 0; ; look++ {
		if look > 0 {
			select {
			case <-ctx.Done():
				return recs, first, nil
			case ch, ok := <-changes:
				if !ok {
					changes = nil
				}
				if !ok || ch.Kind != store.Missed && !names[ch.ContextID] {
					continue
				}
			case <-tick.C:
			}
		}
		all, err := c.lookAll(recs, gone)
		if err != nil {
			return nil, -1, err
		}
		first = c.firstDone(recs, gone, first)
		if all || anyDone && first >= 0 {
			return recs, first, nil
		}
		marked = c.markWaiting(recs, marked)
		if c.now().Sub(revived) > reviveAfter {
			revived = c.now()
			for i, r := range recs {
				if !gone[i] {
					c.reviveWaited(r, keys)
				}
			}
		}
	}
}

// A waiter's wait markers (store.MarkWaiting) hold for waitMarkFor and are
// written again every waitMarkEvery while it waits, so that one killed
// leaves a marker that soon expires.
const (
	waitMarkFor   = time.Minute
	waitMarkEvery = 20 * time.Second
)

// markWaiting tells the workers that this process waits on recs' tasks not
// final yet (their deliveries then look every client.FastPoll), anew
// every waitMarkEvery since last; it returns when they were written.
func (c *Courier) markWaiting(recs []*store.Record, last time.Time) time.Time {
	now := time.Now()
	if !last.IsZero() && now.Sub(last) < waitMarkEvery {
		return last
	}
	for _, r := range recs {
		if !r.State.Terminal() {
			store.MarkWaiting(c.Store, r.ContextID, now.Add(waitMarkFor))
		}
	}
	return now
}

// clearWaiting removes the wait markers of recs' tasks.
func (c *Courier) clearWaiting(recs []*store.Record) {
	for _, r := range recs {
		store.ClearWaiting(c.Store, r.ContextID)
	}
}

// reviveWaited starts a worker for a task waited for that has none
// (NeedsWorker), with its key; what it could not do goes to the log.
func (c *Courier) reviveWaited(rec *store.Record, keys Keys) {
	key, ok := keys[rec.ContextID]
	if !ok || !c.NeedsWorker(rec) {
		return
	}
	if err := c.Revive(rec, key); err != nil {
		c.logf("%s: no worker, and none started: %v", rec.ContextID, err)
		return
	}
	c.logf("%s: no worker; started one", rec.ContextID)
}

// lookAll reads every record afresh and reports whether all are done.
func (c *Courier) lookAll(recs []*store.Record, gone []bool) (bool, error) {
	all := true
	for i, r := range recs {
		if gone[i] {
			continue
		}
		cur, err := c.Store.Load(r.ContextID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			gone[i] = true
			continue
		case err != nil:
			return false, err
		}
		recs[i] = cur
		all = all && c.Done(cur)
	}
	return all, nil
}

// firstDone keeps the task found done first, or names the one of those
// done now whose record ended first.
func (c *Courier) firstDone(recs []*store.Record, gone []bool, first int) int {
	if first >= 0 {
		return first
	}
	for i, r := range recs {
		if !gone[i] && !c.Done(r) {
			continue
		}
		if first < 0 || endedAt(r).Before(endedAt(recs[first])) {
			first = i
		}
	}
	return first
}
