package termui

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestTSVKeepsOneRowALine(t *testing.T) {
	var b bytes.Buffer
	TSV(&b, [][]string{{"id-1", "a\ttitle\nwith lines", "x\x01"}, {"id-2", "", "y"}})
	if got, want := b.String(), "id-1\ta title with lines\tx\nid-2\t\ty\n"; got != want {
		t.Errorf("TSV = %q, want %q", got, want)
	}
}

func TestTableFitsItsWidth(t *testing.T) {
	r := lipgloss.NewRenderer(&bytes.Buffer{})
	r.SetColorProfile(termenv.Ascii)
	long := strings.Repeat("word ", 40)
	for _, width := range []int{60, 30} {
		var b bytes.Buffer
		Table(&b, r, width, []string{"ID", "TITLE"}, [][]string{{"3f6c2e1a-7b4d-4e2a", long}}, 1)
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if lipgloss.Width(line) > width {
				t.Errorf("width %d: line %q is %d wide", width, line, lipgloss.Width(line))
			}
		}
		if !strings.Contains(b.String(), "3f6c2e1a-7b4d-4e2a") || !strings.Contains(b.String(), "…") {
			t.Errorf("width %d: the id must stay whole and the title be cut:\n%s", width, b.String())
		}
	}
	if got := Truncate("日本語のタイトル", 7); lipgloss.Width(got) > 7 || !strings.HasSuffix(got, "…") {
		t.Errorf("Truncate of wide characters = %q", got)
	}
}

func TestSpinnerInactiveWritesNothing(t *testing.T) {
	var b bytes.Buffer
	var mu sync.Mutex
	s := StartSpinner(&b, &mu, "waiting", time.Now(), false)
	s.SetLabel("still waiting")
	s.Stop()
	if b.Len() != 0 {
		t.Errorf("an inactive spinner wrote %q", b.String())
	}
}

// SingleLine and the TSV cells drop every control character and escape
// sequence, whole, the C1 ones (U+0080–U+009F: U+009B starts a terminal
// escape sequence) and the bidirectional ones (a right-to-left override)
// too; Unicode's line and paragraph separators end a line.
func TestCellsDropControls(t *testing.T) {
	in := "a\x1b[31mred\u009b31m\u0085b\x7f\tc\u202eevil\u2066x\u200f\nsecond line"
	if got, want := SingleLine(in), "aredb cevilx …"; got != want {
		t.Errorf("SingleLine = %q, want %q", got, want)
	}
	if got, want := tsvCell(in), "aredb cevilx second line"; got != want {
		t.Errorf("tsvCell = %q, want %q", got, want)
	}
	if got, want := SingleLine("one\u2028two"), "one …"; got != want {
		t.Errorf("SingleLine = %q, want %q", got, want)
	}
	if got, want := tsvCell("one\u2029two"), "one two"; got != want {
		t.Errorf("tsvCell = %q, want %q", got, want)
	}
}
