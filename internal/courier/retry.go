package courier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Sends the server refused (HTTP 429, or 503 with Retry-After) are sent again
// at most MaxSendRetries times, each after the server's Retry-After, else
// after a backoff of about 1s, 2s, 4s (±20%, at most 30s); never after a wait
// longer than MaxSendRetryWait, nor one that leaves less than
// SendRetryReserve of the time the command or the task may take (send's
// help says so with these figures).
const (
	MaxSendRetries   = 3
	MaxSendRetryWait = 60 * time.Second
	SendRetryReserve = time.Second
)

// resend handles a send the server refused before taking it in: sending it
// again is safe, after the wait it asked for, a bounded number of times and
// only within the time left. Until it is sent again the record says what
// is true: queued, its text back in it, not before RetryAt; a process that
// dies meanwhile leaves it for a worker, which sends it once, then. again
// is false when the message is not sent again: out is then the outcome to
// settle.
func (r *run) resend(ctx, dctx context.Context, out client.Outcome) (again bool, _ client.Outcome) {
	r.refusals++
	dl, hasDL := dctx.Deadline()
	wait, why := sendRetryWait(out.Err, r.refusals, r.c.now(), dl, hasDL, r.waitLimit(ctx, dl))
	if why != "" {
		r.refusedNote = why
		return false, out
	}
	r.mu.Lock()
	r.written = false
	r.mu.Unlock()
	retryAt := r.c.now().Add(wait).UTC()
	// If this write fails, the record goes on saying sending: this process
	// still sends the message again (the text is in memory); only a crash
	// during the wait would leave it to a reader, which never sends.
	r.update(func(x *store.Record) {
		x.Requeue(r.text, &retryAt)
		x.Refusals = r.refusals
		x.LastError = errorInfo(out.Err)
	})
	r.c.logf("%s: refused (%v); sending again in %s (retry %d of %d)", r.id, out.Err, WaitText(wait), r.refusals, MaxSendRetries)
	if r.w.OnEvent != nil {
		r.w.OnEvent(client.Event{Kind: client.EventBusy, Err: out.Err,
			Message: fmt.Sprintf("the server is busy or rate limiting; sending again in %s (retry %d of %d)", WaitText(wait), r.refusals, MaxSendRetries)})
	}
	if client.SleepContext(dctx, wait) != nil {
		if ctx.Err() != nil {
			r.unsent = true
			out = client.Outcome{Err: out.Err}
		}
		// Else the maximum wait ran out: the refusal stands.
		return false, out
	}
	// The next send goes to sending again once its connection is made
	// (leaving): past that write the message is never sent again by anyone
	// but this process, and only after another refusal.
	r.c.logf("%s: sending to agent %s again", r.id, r.current().Agent)
	return true, out
}

// waitLimit names what sets deadline, the end of the time a refused
// message may be sent again in: the caller's wait (ctx's: send's
// --timeout), or the task's maximum wait.
func (r *run) waitLimit(ctx context.Context, deadline time.Time) string {
	if cd, ok := ctx.Deadline(); ok && !cd.After(deadline) {
		if r.w.Command == "send" {
			return "--timeout"
		}
		return "the caller's wait"
	}
	return "the task's maximum wait (--max-wait)"
}

// sendRetryWait says how long to wait before sending again a message the
// server refused for the n-th time (n from 1), or why it is not sent again;
// limit names what sets the deadline ("--timeout").
func sendRetryWait(err error, n int, now, deadline time.Time, hasDeadline bool, limit string) (time.Duration, string) {
	if n > MaxSendRetries {
		return 0, fmt.Sprintf("refused %d times in a row", n)
	}
	ra := client.RetryAfterOf(err)
	wait := ra
	if wait <= 0 {
		wait = min(time.Second<<(n-1), 30*time.Second)
		wait = max(time.Duration(float64(wait)*(0.8+0.4*rand.Float64())), time.Second)
	}
	if wait > MaxSendRetryWait {
		return 0, fmt.Sprintf("the server asked to retry after %s, longer than the %s a send waits", WaitText(wait), WaitText(MaxSendRetryWait))
	}
	if left := deadline.Sub(now); hasDeadline && wait+SendRetryReserve > left {
		asked := fmt.Sprintf("a retry after %s", WaitText(wait))
		if ra > 0 {
			asked = fmt.Sprintf("the server asked to retry after %s", WaitText(ra))
		}
		// The time left rounded down, so that the text never shows more
		// than there is.
		shown := WaitText(max(left, 0).Truncate(100 * time.Millisecond))
		if left >= time.Minute {
			shown = WaitText(left.Truncate(time.Second))
		}
		if wait >= left {
			return 0, fmt.Sprintf("%s, longer than the %s left of %s", asked, shown, limit)
		}
		// It fits, but would leave less than the reserve to send again
		// and read the answer.
		return 0, fmt.Sprintf("%s, which would leave less than %s of %s (%s left)", asked, WaitText(SendRetryReserve), limit, shown)
	}
	return wait, ""
}
