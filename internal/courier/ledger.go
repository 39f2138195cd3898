package courier

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/a2a-courier/a2a-courier/store"
)

// The local ledger: the records of the tasks started from this machine,
// as `tasks` lists them.

// Running is the state group of the tasks not final yet: queued, sending
// and working, the states a worker still moves.
const Running = "running"

// StateNames lists what a state filter takes, for messages.
func StateNames() string {
	names := []string{Running}
	for _, s := range []store.State{store.Queued, store.Sending, store.Working, store.Completed, store.Failed,
		store.Rejected, store.Canceled, store.InputRequired, store.Expired} {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// ParseStates reads a state filter: state names or "running", separated by
// commas. "" is no filter.
func ParseStates(s string) (map[store.State]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	set := map[store.State]bool{}
	for _, w := range strings.Split(s, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		switch st := store.State(strings.ReplaceAll(w, "-", "_")); {
		case w == Running:
			set[store.Queued], set[store.Sending], set[store.Working] = true, true, true
		case st.Known():
			set[st] = true
		default:
			return nil, fmt.Errorf("unknown state %q: use %s", w, StateNames())
		}
	}
	return set, nil
}

// TaskQuery selects records of the ledger.
type TaskQuery struct {
	// States keeps only records in these states (nil: all).
	States map[store.State]bool
	// Agent keeps only the records of this agent (its id, or a peer's or
	// card's name), compared without case.
	Agent string
	// Limit keeps the newest Limit records (0: all).
	Limit int
}

// Tasks returns the records the query selects, newest first, how many it
// selects before the limit, and the errors of records that could not be
// read (a damaged record leaves the others listed).
func (c *Courier) Tasks(q TaskQuery) ([]*store.Record, int, []error) {
	recs, errs := c.Store.List()
	var out []*store.Record
	for _, r := range recs {
		if q.States != nil && !q.States[r.State] || q.Agent != "" && !strings.EqualFold(r.Agent, q.Agent) {
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	total := len(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total, errs
}

// summaryChars bounds a ledger row's summary.
const summaryChars = 200

// Summary is what a ledger row says of a task: the first line of its reply
// (completed), of its question (input_required) or of its reason, else
// its last problem while it runs; at most 200 characters.
func Summary(r *store.Record) string {
	text := r.Reason
	switch {
	case r.State == store.Completed || r.State == store.InputRequired:
		text = r.Reply
		if r.ReplyFile != "" {
			text, _, _ = ReadPrefix(r.ReplyFile, 4*summaryChars)
		}
	case text == "" && r.LastError != nil:
		text = "last problem: " + r.LastError.Message
	}
	return SummaryLine(text)
}

// SummaryLine is a text's first line, at most 200 characters, " …" saying
// that more lines follow.
func SummaryLine(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i]) + " …"
	}
	if utf8.RuneCountInString(text) > summaryChars {
		text = string([]rune(text)[:summaryChars-1]) + "…"
	}
	return text
}
