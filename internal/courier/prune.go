package courier

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2a-courier/a2a-courier/store"
)

// Prune drops what the state directory keeps of tasks that ended long ago.
// Nothing is pruned on its own: records stay until someone prunes them.

// PruneOptions say what Prune drops.
type PruneOptions struct {
	// OlderThan: records that ended longer ago than this go.
	OlderThan time.Duration
	// DryRun says what would go and removes nothing.
	DryRun bool
}

// Pruned is one record Prune dropped (or would drop).
type Pruned struct {
	ContextID  string
	Agent      string
	State      store.State
	FinishedAt time.Time
	// Archived: an earlier exchange of the context, from tasks/archive/.
	Archived bool
}

// PruneReport is what Prune did.
type PruneReport struct {
	Cutoff  time.Time
	Records []Pruned
	// ReplyFiles and ReplyBytes count the files of replies/ removed (those
	// of a reply's files folder included).
	ReplyFiles int
	ReplyBytes int64
	// KeptRunning counts the records older than the cutoff that are not
	// final, which are never pruned; Busy those whose lock was held.
	KeptRunning, Busy int
	// Errors are the records and files that could not be read or removed.
	Errors []error
}

// ParseAge reads an age: days (30d), weeks (2w), or a Go duration (12h,
// 90m); positive.
func ParseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("an age is needed")
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	var d time.Duration
	var err error
	if u, ok := unit[s[len(s)-1]]; ok && len(s) > 1 {
		var n int
		n, err = strconv.Atoi(s[:len(s)-1])
		d = time.Duration(n) * u
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive age", s)
	}
	return d, nil
}

// endedAt is when a record ended: its finished_at, else its last write.
func endedAt(r *store.Record) time.Time {
	if r.FinishedAt != nil {
		return *r.FinishedAt
	}
	return r.UpdatedAt
}

// Prune drops the final records (completed, failed, rejected, canceled,
// input_required, expired) that ended before now minus OlderThan, the
// archived records likewise, and the files of replies/ that only they
// named or that are older than the cutoff and named by no record kept. A
// record that is not final is never dropped, however old: its worker may
// still bring its reply. Each record goes under its lock, so none that a
// command is working on at this instant goes.
func (c *Courier) Prune(o PruneOptions) (*PruneReport, error) {
	if o.OlderThan <= 0 {
		return nil, errors.New("prune needs a positive age")
	}
	rep := &PruneReport{Cutoff: c.now().Add(-o.OlderThan)}
	recs, errs := c.Store.List()
	rep.Errors = append(rep.Errors, errs...)
	keep := map[string]bool{} // reply files a kept record names
	dropped := map[string]bool{}
	for _, r := range recs {
		switch {
		case !endedAt(r).Before(rep.Cutoff):
		case !r.State.Terminal():
			rep.KeptRunning++
		default:
			if c.pruneRecord(r, o.DryRun, rep) {
				c.markReplies(dropped, r)
				continue
			}
		}
		c.markReplies(keep, r)
	}
	archived, errs := c.Store.ListArchived()
	rep.Errors = append(rep.Errors, errs...)
	for _, a := range archived {
		if !endedAt(a.Record).Before(rep.Cutoff) {
			c.markReplies(keep, a.Record)
			continue
		}
		if !o.DryRun {
			if err := c.Store.RemoveArchived(a); err != nil {
				rep.Errors = append(rep.Errors, err)
				c.markReplies(keep, a.Record)
				continue
			}
		}
		c.markReplies(dropped, a.Record)
		rep.Records = append(rep.Records, prunedOf(a.Record, true))
	}
	c.pruneReplies(rep, keep, dropped, o.DryRun)
	return rep, nil
}

// markReplies marks the entries of replies/ a record names: the reply
// kept in a file of its own, the whole reply a --max-chars cut kept (named
// after its message: ReplyName), the contextId's file of older builds,
// and the folder of the reply's files (files saved to send --out are the
// caller's, never pruned).
func (c *Courier) markReplies(set map[string]bool, r *store.Record) {
	for _, f := range []string{r.ReplyFile, c.Store.ReplyPath(ReplyName(r)), c.Store.ReplyPath(r.ContextID)} {
		set[f] = true
	}
	if d, err := c.Store.ReplyFilesDir(ReplyName(r)); err == nil {
		set[d] = true
	}
}

func prunedOf(r *store.Record, archived bool) Pruned {
	return Pruned{ContextID: r.ContextID, Agent: r.Agent, State: r.State, FinishedAt: endedAt(r), Archived: archived}
}

// pruneRecord drops one final record under its lock, read afresh there:
// a follow-up may have replaced it since it was listed.
func (c *Courier) pruneRecord(r *store.Record, dryRun bool, rep *PruneReport) bool {
	h, err := c.Store.Lock(r.ContextID)
	if errors.Is(err, store.ErrLocked) {
		rep.Busy++
		return false
	}
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return false
	}
	defer h.Release()
	cur, err := h.Load()
	if err != nil || !cur.State.Terminal() || !endedAt(cur).Before(rep.Cutoff) {
		return false
	}
	if !dryRun {
		if err := h.Remove(); !store.InPlace(err) {
			rep.Errors = append(rep.Errors, err)
			return false
		} else if err != nil {
			c.logf("%v", err) // removed all the same
		}
	}
	rep.Records = append(rep.Records, prunedOf(cur, false))
	return true
}

// pruneReplies removes the files of replies/ that a dropped record named,
// or that are older than the cutoff (texts cut by --max-chars, show's
// rounds), unless a kept record names them.
func (c *Courier) pruneReplies(rep *PruneReport, keep, dropped map[string]bool, dryRun bool) {
	files, err := c.Store.ReplyFiles()
	if err != nil {
		rep.Errors = append(rep.Errors, err)
		return
	}
	for _, f := range files {
		if keep[f.Path] || !dropped[f.Path] && !f.ModTime.Before(rep.Cutoff) {
			continue
		}
		if !dryRun {
			if err := c.Store.RemoveReplyFile(f.Path); err != nil {
				rep.Errors = append(rep.Errors, err)
				continue
			}
		}
		rep.ReplyFiles += f.Files
		rep.ReplyBytes += f.Size
	}
}
