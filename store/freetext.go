package store

import (
	"fmt"

	"github.com/a2a-courier/a2a-courier/internal/textcut"
)

// MaxFreeText bounds each text a server controls that a record keeps
// beside the reply: why a task failed, was rejected or canceled (the
// agent's status text, Kibana's error), the message of its error and of
// its last error, its latest status update, the agent's name (a card's)
// and the release a Kibana named. An agent that fails with 30 MiB of
// text would otherwise make a 30 MiB record that every listing reads
// again. The reply itself has its own caps (the answer's, and a reply
// over 4 MiB is kept in a file of its own).
const MaxFreeText = 4 << 10

// CutText returns s when it is at most max bytes, else its start, cut at
// a rune's start, followed by a marker that says it was cut and how long
// it was ("… [cut: 31457280 bytes in all]"), max bytes in all. A text
// cut so is not cut again.
func CutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := fmt.Sprintf("… [cut: %d bytes in all]", len(s))
	cut := max - len(marker)
	if cut < 0 {
		return marker
	}
	return textcut.Prefix(s, cut) + marker
}

// BoundFreeText cuts the texts of MaxFreeText in r. Create and Update do
// it to every record they write (settle); a writer that shows a record it
// could not write does it too.
func BoundFreeText(r *Record) {
	r.Reason = CutText(r.Reason, MaxFreeText)
	r.Agent = CutText(r.Agent, MaxFreeText)
	r.Target.KibanaVersion = CutText(r.Target.KibanaVersion, MaxFreeText)
	r.Target.KibanaFlavor = CutText(r.Target.KibanaFlavor, MaxFreeText)
	for _, e := range []*ErrorInfo{r.Error, r.LastError} {
		if e != nil {
			e.Message = CutText(e.Message, MaxFreeText)
		}
	}
	if r.Progress != nil {
		r.Progress.State = CutText(r.Progress.State, MaxFreeText)
		r.Progress.Text = CutText(r.Progress.Text, MaxFreeText)
	}
}
