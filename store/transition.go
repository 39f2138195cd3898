package store

import "time"

// The transitions of a record: the only writers of its state outside this
// package (TestStateChangesOnlyThroughTransitions holds it). Each is called
// on the record inside Handle.Update, which checks the move against the
// state machine (machine.go), settles what every record promises (settle:
// the one normaliser) and writes it atomically; a caller's fields beside
// the state (a reason, an error, a count) are its own. A record begins
// queued, or sending, with Create.
//
// A new transition goes here, with its rule in moves and settle.

// Send says the message leaves (queued → sending): a connection to the
// server is made and nothing of the request is written yet. Past it the
// text leaves the record (only its hash and size stay) and nobody sends
// the message again.
func (r *Record) Send(now time.Time) {
	t := now.UTC()
	r.State, r.SentAt, r.RetryAt = Sending, &t, nil
	settle(r)
}

// Requeue puts a message that did not reach the server back in the queue
// (sending or working → queued), its text back in the record for the next
// sender, not sent yet; retryAt is when the server said it may come again
// (nil: at once).
func (r *Record) Requeue(text string, retryAt *time.Time) {
	r.State, r.Message, r.SentAt, r.RetryAt = Queued, text, nil, retryAt
	settle(r)
}

// Work says the request reached the server (sending → working).
func (r *Record) Work() {
	r.State = Working
	settle(r)
}

// Finish ends the record in the final state st (completed, failed,
// rejected, input_required, expired; Cancel for canceled) at now: the
// message text, the time to retry and the progress go (settle).
func (r *Record) Finish(st State, now time.Time) {
	t := now.UTC()
	r.State, r.FinishedAt = st, &t
	settle(r)
}

// Cancel ends the record canceled at now: by who ("cancel", "interrupt",
// "" when the server did), for the reason given.
func (r *Record) Cancel(by, reason string, now time.Time) {
	r.Finish(Canceled, now)
	r.CanceledBy, r.Reason = by, reason
}

// As returns a copy of the record in state st, for a report of what a
// server says about the task; it is never written.
func (r Record) As(st State) Record {
	r.State = st
	return r
}
