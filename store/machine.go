package store

import (
	"errors"
	"fmt"
)

// The record's state machine: the moves a record may make, whoever writes
// it (send, the worker, cancel, fetch). Handle.Update refuses any other,
// so that no code path can, say, turn a completed task into a rejected one.
//
//	queued  → sending (it leaves), canceled (dropped before it left),
//	          failed (no text to send), rejected (refused while it waited
//	          its turn), expired
//	sending → working, queued (handed back before a connection was made, or
//	          refused with a 429 and waiting to be sent again), any final
//	working → queued (refused, to be sent again), any final
//	expired → any other final state: fetch found the outcome later
//
// completed, failed, rejected, canceled and input_required are final: a new
// message of the context is a new record (the old one is archived).
func moves(from State) []State {
	switch from {
	case Queued:
		return []State{Sending, Canceled, Failed, Rejected, Expired}
	case Sending:
		return []State{Working, Queued, Completed, Failed, Rejected, Canceled, InputRequired, Expired}
	case Working:
		return []State{Queued, Completed, Failed, Rejected, Canceled, InputRequired, Expired}
	case Expired:
		return []State{Completed, Failed, Rejected, Canceled, InputRequired}
	}
	return nil
}

// ErrIllegalMove means an update tried a move the state machine does not
// allow; the record was not written.
var ErrIllegalMove = errors.New("illegal task record state change")

// CanMove reports whether a record may go from one state to another (a
// state to itself is always allowed: fields other than the state change).
func CanMove(from, to State) bool {
	if from == to {
		return from.Known()
	}
	for _, s := range moves(from) {
		if s == to {
			return true
		}
	}
	return false
}

// checkMove returns ErrIllegalMove, wrapped with the states, unless the
// move is allowed.
func checkMove(id string, from, to State) error {
	if CanMove(from, to) {
		return nil
	}
	return fmt.Errorf("task record %s: %w: %s → %s", id, ErrIllegalMove, from, to)
}

// settle keeps what every record promises, whatever a writer did: the
// message text and the time to send again only while it is queued (after
// the request leaves, its hash and size stay), a final record has a finish
// time and no progress, and the times are in
// order (sent and finished not before created, finished not before sent),
// and the texts a server controls beside the reply are at most
// MaxFreeText bytes (BoundFreeText).
func settle(r *Record) {
	BoundFreeText(r)
	if r.State != Queued {
		// The time to send again is a queued record's.
		r.Message, r.RetryAt = "", nil
	}
	if r.State.Terminal() && r.FinishedAt == nil {
		t := r.UpdatedAt
		r.FinishedAt = &t
	}
	if r.State.Terminal() {
		r.Progress = nil // a running task's
	}
	if !r.State.Terminal() {
		r.FinishedAt = nil
	}
	if r.SentAt != nil && r.SentAt.Before(r.CreatedAt) {
		t := r.CreatedAt
		r.SentAt = &t
	}
	if r.FinishedAt != nil {
		floor := r.CreatedAt
		if r.SentAt != nil && r.SentAt.After(floor) {
			floor = *r.SentAt
		}
		if r.FinishedAt.Before(floor) {
			r.FinishedAt = &floor
		}
	}
}
