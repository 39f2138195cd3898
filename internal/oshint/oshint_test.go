package oshint

import (
	"os"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/store"
)

// Every hint names commands of the system it runs on, and none of another
// (hintCases, and unixOnly, per system).
func TestHintsNameTheSystemsCommands(t *testing.T) {
	for _, c := range hintCases {
		ue := &store.UnwritableError{Dir: c.dir, Err: &os.PathError{Op: "open", Path: c.dir, Err: c.errno}}
		if got := Unwritable(ue); got != c.hint {
			t.Errorf("%s %v:\n got %q\nwant %q", c.dir, c.errno, got, c.hint)
		}
	}
	var texts []string
	for _, c := range hintCases {
		texts = append(texts, Unwritable(&store.UnwritableError{Dir: c.dir, Err: c.errno}))
	}
	for _, s := range texts {
		for _, word := range foreign {
			if strings.Contains(s, word) {
				t.Errorf("%q names %q, not a command of this system", s, word)
			}
		}
	}
}
