package courier

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/termui"
	"github.com/a2a-courier/a2a-courier/internal/textcut"
	"github.com/a2a-courier/a2a-courier/store"
)

// progressEvery bounds how often a task's latest status update is written
// into its record: an agent that sends many costs one write in that time,
// and the one written is the latest.
const progressEvery = 2 * time.Second

// maxProgressText bounds the status text kept in the record.
const maxProgressText = 1000

// progressText is a status update's text at most maxProgressText bytes,
// cut at a character's start and ended with "…" when cut: what the record
// keeps, the log shows and a caller's OnEvent gets (send --progress).
func progressText(text string) string {
	if len(text) <= maxProgressText {
		return text
	}
	return textcut.Prefix(text, maxProgressText-len("…")) + "…"
}

// logText is a text a server controls fit for one line of the worker's
// log, which people read with cat: the terminal scrubber's (escape
// sequences and controls out), its line breaks and tabs spaces, so that
// it cannot redraw the terminal nor pass for another line of the log.
func logText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, termui.Text(s))
}

// progressWriter holds the status update waiting to be written; run.mu
// guards it.
type progressWriter struct {
	pending *store.Progress
	timer   *time.Timer
	last    time.Time // when one was last written
	stopped bool
}

// noteProgress keeps a status update of the task for the record: written
// at once when none was for progressEvery, else at the end of that time
// (the latest by then).
func (r *run) noteProgress(e client.Event) {
	text := progressText(e.Message)
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.progress
	if p.stopped {
		return
	}
	p.pending = &store.Progress{State: e.State, Text: text, At: r.c.now().UTC()}
	if p.timer == nil {
		p.timer = time.AfterFunc(max(time.Until(p.last.Add(progressEvery)), 0), r.writeProgress)
	}
}

// writeProgress writes the pending status update, unless the task ended.
func (r *run) writeProgress() {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.progress
	pending := p.pending
	p.pending, p.timer, p.last = nil, nil, time.Now()
	if pending == nil || p.stopped || r.rec.State.Terminal() {
		return
	}
	r.updateLocked(func(x *store.Record) {
		if !x.State.Terminal() {
			x.Progress = pending
		}
	})
}

// stopProgress ends the writes of status updates: none is written once
// the run has returned (its record lock may be released).
func (r *run) stopProgress() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress.stopped = true
	if r.progress.timer != nil {
		r.progress.timer.Stop()
	}
}

// WatchProgress calls fn with the latest status update of each of the
// tasks contextIDs names as the process working on it records it
// (store.Record.Progress), once for each new one, those recorded already
// first, until stop is called (which returns once fn can no longer be
// called) or ctx ends. It watches the tasks directory and looks every
// second in case an event is missed.
func (c *Courier) WatchProgress(ctx context.Context, contextIDs []string, fn func(contextID string, p store.Progress)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		changes, _ := store.Watch(ctx, c.Store) // without it, a look every second
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last := make(map[string]store.Progress, len(contextIDs))
		look := func(id string) {
			if rec, err := c.Store.Load(id); err == nil && rec.Progress != nil && *rec.Progress != last[id] && ctx.Err() == nil {
				last[id] = *rec.Progress
				fn(id, last[id])
			}
		}
		watched := make(map[string]bool, len(contextIDs))
		for _, id := range contextIDs {
			watched[id] = true
			look(id)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ch, ok := <-changes:
				switch {
				case !ok:
					changes = nil
				case ch.Kind == store.Missed:
					for _, id := range contextIDs {
						look(id)
					}
				case watched[ch.ContextID] && ch.Kind != store.CancelAsked && ch.Kind != store.WaitChanged:
					look(ch.ContextID)
				}
			case <-tick.C:
				for _, id := range contextIDs {
					look(id)
				}
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
