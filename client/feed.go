package client

import (
	"context"
	"sync"
	"time"
)

// Feed tells, from one read of an agent's conversation list, which of the
// conversations a process follows changed since it last read them, so that
// a worker following a thousand tasks of one agent reads the list once per
// poll and then only the conversations that changed, instead of every
// conversation every poll (issue 24).
//
// A conversation absent from a complete list is one a read would not find
// (404): nothing is stored yet. One present that was never read, or whose
// updated_at differs from the one its last read saw, changed. The list
// cannot answer, and each conversation is read as before, when it is not
// complete (9.2 to 9.5 return at most 1,000 conversations; 9.6 pages hold
// 1,000 newest first, and the owner has more), when it could not be read,
// for a conversation that was there and is gone, and for a conversation
// read once already on a release whose list does not move updated_at on a
// new round (the onechat-era converter of 9.2 and 9.3). It answers only
// while two conversations or more follow it: for one, its own read is
// cheaper than the list.
type Feed struct {
	k       *Kibana
	agentID string
	// movesUpdatedAt: the release moves updated_at on every stored round
	// (9.4 and later, Serverless).
	movesUpdatedAt bool
	// failuresInRounds: a failed or aborted run is stored as a round with
	// an interruption (Serverless), so the list tells of it too.
	failuresInRounds bool

	mu        sync.Mutex
	followers int
	snap      *feedSnap
	cur       *feedRead
	reads     int
}

// feedSnap is one read of the list.
type feedSnap struct {
	started  time.Time
	entries  map[string]string // conversation id → updated_at
	complete bool
}

// feedRead is a read of the list in flight, which callers that need no
// newer one wait for.
type feedRead struct {
	started time.Time
	done    chan struct{}
	snap    *feedSnap
}

// FeedVerdict is what the list says of one conversation.
type FeedVerdict int

const (
	// FeedUnknown: the list cannot answer; read the conversation.
	FeedUnknown FeedVerdict = iota
	// FeedUnchanged: nothing new since the last read (or nothing stored).
	FeedUnchanged
	// FeedChanged: something new: read it.
	FeedChanged
)

// NewFeed returns the feed of agentID's conversations on k. movesUpdatedAt
// says the release moves a conversation's updated_at on every round it
// stores (9.4 and later, Serverless); when it is false the list only tells
// when a conversation first appears. failuresInRounds says a failed run is
// stored as a round with an interruption (Serverless), so that on the task
// path the list tells of failures too.
func NewFeed(k *Kibana, agentID string, movesUpdatedAt, failuresInRounds bool) *Feed {
	return &Feed{k: k, agentID: agentID, movesUpdatedAt: movesUpdatedAt, failuresInRounds: failuresInRounds}
}

// Follow counts a conversation that follows the feed until stop is called.
func (f *Feed) Follow() (stop func()) {
	f.mu.Lock()
	f.followers++
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.followers--
			f.mu.Unlock()
		})
	}
}

// Reads returns how many list reads the feed made.
func (f *Feed) Reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// Check says whether conversation id changed since mark, the updated_at
// its caller's last read of it saw ("" for none, or a read that found
// nothing), from a list read that began at or after after: every caller
// whose check falls due at the same time shares one read. seen is the
// updated_at the list shows ("" when it is absent or cannot answer).
func (f *Feed) Check(ctx context.Context, after time.Time, id, mark string) (v FeedVerdict, seen string) {
	f.mu.Lock()
	alone := f.followers < 2
	f.mu.Unlock()
	if alone {
		return FeedUnknown, ""
	}
	s := f.snapshot(ctx, after)
	if s == nil || !s.complete {
		return FeedUnknown, ""
	}
	u, ok := s.entries[id]
	switch {
	case !ok && mark == "":
		return FeedUnchanged, ""
	case !ok:
		return FeedUnknown, ""
	case mark == "":
		return FeedChanged, u
	case !f.movesUpdatedAt:
		return FeedUnknown, u
	case u != mark:
		return FeedChanged, u
	}
	return FeedUnchanged, u
}

// snapshot returns a read of the list begun at or after after: the last
// one, the one in flight, or a new one. nil when ctx ended first.
func (f *Feed) snapshot(ctx context.Context, after time.Time) *feedSnap {
	f.mu.Lock()
	if s := f.snap; s != nil && !s.started.Before(after) {
		f.mu.Unlock()
		return s
	}
	r := f.cur
	if r == nil || r.started.Before(after) {
		r = &feedRead{started: time.Now(), done: make(chan struct{})}
		f.cur = r
		f.reads++
		go f.read(ctx, r)
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.snap
	case <-ctx.Done():
		return nil
	}
}

// feedReadTimeout bounds one read of the list: a caller stops waiting on
// it when its own context ends, and the read serves the others.
const feedReadTimeout = time.Minute

// read reads the list once for r. It is not ended by the context of the
// caller that started it (others wait on it too), only by its timeout.
func (f *Feed) read(ctx context.Context, r *feedRead) {
	// Every delivery of the agent waits on this read: it takes a reserved
	// read slot rather than queue behind their reads.
	rctx, cancel := context.WithTimeout(withUrgentRead(context.WithoutCancel(ctx)), feedReadTimeout)
	defer cancel()
	s := &feedSnap{started: r.started}
	list, err := f.k.ListConversations(rctx, ListConversationsOptions{AgentID: f.agentID, Limit: unpagedListCap})
	if err == nil {
		s.complete = !list.Capped && list.Total <= len(list.Conversations)
		s.entries = make(map[string]string, len(list.Conversations))
		for _, c := range list.Conversations {
			s.entries[c.ID] = c.UpdatedAt
		}
	}
	f.mu.Lock()
	if f.cur == r {
		f.cur = nil
	}
	if f.snap == nil || f.snap.started.Before(r.started) {
		f.snap = s
	}
	f.mu.Unlock()
	r.snap = s
	close(r.done)
}

// onGrid is the wait until the next point of the grid of step w (times
// that are whole multiples of w since the Unix epoch) after now: at most
// w, so that a delivery looks at least as often as it asked, and every
// delivery with the same step looks at the same moments, which one read
// of the list serves.
func onGrid(now time.Time, w time.Duration) time.Duration {
	if w <= 0 {
		return 0
	}
	n := now.UnixNano()
	next := (n/int64(w) + 1) * int64(w)
	return time.Duration(next - n)
}

// Hurry says whether a caller waits on a task now (a `result --wait`, an
// MCP wait): its delivery then looks every FastPoll instead of every poll
// interval. The zero value is usable; nil means nobody waits.
type Hurry struct {
	mu      sync.Mutex
	waiting bool
	ch      chan struct{}
}

// FastPoll is the time between looks at a task a caller waits on.
const FastPoll = 2 * time.Second

// Set says whether a caller waits now.
func (h *Hurry) Set(waiting bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting == waiting {
		return
	}
	h.waiting = waiting
	if h.ch != nil {
		close(h.ch)
		h.ch = nil
	}
}

// Waiting reports whether a caller waits now.
func (h *Hurry) Waiting() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// Changed returns a channel closed at the next Set that changes it (nil
// for a nil Hurry: never).
func (h *Hurry) Changed() <-chan struct{} {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ch == nil {
		h.ch = make(chan struct{})
	}
	return h.ch
}
