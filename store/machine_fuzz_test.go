package store

import (
	"errors"
	"testing"
	"time"
)

var allStates = []State{Queued, Sending, Working, Completed, Failed, Rejected, Canceled, InputRequired, Expired}

// referenceMove is the state machine written out as a table of what may
// follow what, independently of moves (docs/design.md, "Task records").
func referenceMove(from, to State) bool {
	if from == to {
		return true
	}
	final := func(s State) bool {
		return s == Completed || s == Failed || s == Rejected || s == Canceled || s == InputRequired
	}
	switch from {
	case Queued:
		return to == Sending || to == Canceled || to == Failed || to == Rejected || to == Expired
	case Sending, Working:
		return to == Queued || to == Working && from == Sending || final(to) || to == Expired
	case Expired:
		return final(to)
	}
	return false
}

func TestCanMoveMatchesTheReference(t *testing.T) {
	t.Parallel()
	for _, from := range allStates {
		for _, to := range allStates {
			if CanMove(from, to) != referenceMove(from, to) {
				t.Errorf("%s → %s: CanMove %v", from, to, CanMove(from, to))
			}
		}
	}
}

// FuzzRecordTransitions drives one record through any sequence of updates
// (each byte pair: a state to move to, and which fields the writer also
// sets, with a clock that may jump backwards) through Create and
// Handle.Update, and checks after every step that the store did what the
// state machine says: an illegal move is refused with ErrIllegalMove and
// writes nothing; a legal one is written; and every record read back keeps
// the promises (text only while queued, a final record finished, times in
// order, a final record never moves again but for expired).
func FuzzRecordTransitions(f *testing.F) {
	f.Add(false, []byte{1, 0, 2, 0, 3, 1})       // queued → sending → working → completed
	f.Add(true, []byte{3, 0, 7, 0})              // sending → completed → rejected (refused)
	f.Add(false, []byte{8, 3, 3, 0})             // queued → expired → completed (fetch)
	f.Add(false, []byte{1, 0, 0, 2, 1, 0, 6, 0}) // a refusal: back to queued, then canceled
	f.Add(true, []byte{2, 6, 5, 0, 0, 0})        // clock backwards, canceled, then queued again (refused)
	f.Fuzz(func(t *testing.T, startSending bool, steps []byte) {
		if len(steps) > 64 {
			steps = steps[:64]
		}
		dir := t.TempDir()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.now = func() time.Time { return clock }
		rec := &Record{ContextID: "ctx-m", MessageID: "m-1", State: Queued, Message: "text", MessageSHA256: "h", MessageSize: 4,
			Target: Target{Kind: "kibana", URL: "http://k"}}
		if startSending {
			now := clock
			rec.State, rec.Message, rec.SentAt = Sending, "", &now
		}
		if err := s.Create(rec); err != nil {
			t.Fatal(err)
		}
		h, err := s.Lock("ctx-m")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		for i := 0; i+1 < len(steps); i += 2 {
			to := allStates[int(steps[i])%len(allStates)]
			flags := steps[i+1]
			if flags&4 != 0 {
				clock = clock.Add(-time.Duration(flags) * time.Second) // a clock that went back
			} else {
				clock = clock.Add(time.Duration(flags) * time.Millisecond)
			}
			before, err := s.Load("ctx-m")
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Update(func(r *Record) error {
				r.State = to
				if flags&1 != 0 {
					r.Message = "text again" // a writer that leaves the text in
				}
				if flags&2 != 0 {
					t := clock
					r.FinishedAt = &t
				}
				if flags&8 != 0 {
					t := clock
					r.SentAt = &t
				}
				return nil
			})
			after, lerr := s.Load("ctx-m")
			if lerr != nil {
				t.Fatalf("step %d: the record does not load: %v", i/2, lerr)
			}
			legal := referenceMove(before.State, to)
			switch {
			case legal && err != nil:
				t.Fatalf("step %d: %s → %s refused: %v", i/2, before.State, to, err)
			case !legal && !errors.Is(err, ErrIllegalMove):
				t.Fatalf("step %d: %s → %s allowed (%v)", i/2, before.State, to, err)
			case !legal && after.State != before.State:
				t.Fatalf("step %d: a refused move was written: %s", i/2, after.State)
			}
			if after.State != Queued && after.Message != "" {
				t.Fatalf("step %d: %s with the message text in it", i/2, after.State)
			}
			if after.State.Terminal() != (after.FinishedAt != nil) {
				t.Fatalf("step %d: %s, finished_at %v", i/2, after.State, after.FinishedAt)
			}
			if after.SentAt != nil && after.SentAt.Before(after.CreatedAt) {
				t.Fatalf("step %d: sent %v before created %v", i/2, after.SentAt, after.CreatedAt)
			}
			if after.FinishedAt != nil && (after.FinishedAt.Before(after.CreatedAt) || after.SentAt != nil && after.FinishedAt.Before(*after.SentAt)) {
				t.Fatalf("step %d: finished %v before created %v / sent %v", i/2, after.FinishedAt, after.CreatedAt, after.SentAt)
			}
		}
	})
}
