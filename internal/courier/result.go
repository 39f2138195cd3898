package courier

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

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
	if Identity(rec.Target, key) != rec.Identity {
		return ErrOtherCredential
	}
	return c.EnsureWorker(rec.Identity, key)
}

// reviveAfter is how long Wait lets a task go without a worker before it
// revives it.
const reviveAfter = 5 * time.Second

// Wait waits until a task's record is final (or its reads were refused and
// nobody holds it), or ctx ends: then it returns the record as it stands.
// It watches the tasks directory and looks every second in case an event
// is missed; a worker that dies meanwhile is replaced with revive.
func (c *Courier) Wait(ctx context.Context, rec *store.Record, revive func(*store.Record)) (*store.Record, error) {
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(c.Store.TasksDir()) == nil {
			events, watchErrs = w.Events, w.Errors
		}
	}
	name := rec.ContextID + ".json"
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	revived := c.now()
	for {
		select {
		case <-ctx.Done():
			return rec, nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Base(ev.Name) != name {
				continue
			}
		case _, ok := <-watchErrs:
			if !ok {
				watchErrs = nil
			}
		case <-tick.C:
		}
		cur, err := c.Store.Load(rec.ContextID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return rec, nil
			}
			return nil, err
		}
		rec = cur
		if rec.State.Terminal() || ReadingRefused(rec) && !c.Store.Locked(rec.ContextID) {
			return rec, nil
		}
		if c.now().Sub(revived) > reviveAfter && !c.Store.Locked(rec.ContextID) {
			revived = c.now()
			revive(rec)
		}
	}
}
