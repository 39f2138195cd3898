package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/a2a-courier/a2a-courier/internal/courier"
)

// printer writes results to stdout and everything else to stderr. Styling
// is decided per stream: stdout styles only when stdout is a terminal,
// stderr only when stderr is one, and never when NO_COLOR is set.
type printer struct {
	out, err       io.Writer
	json           bool
	outTTY, errTTY bool
	width          int
	outR, errR     *lipgloss.Renderer
	mu             sync.Mutex
}

func newPrinter(p *Process, jsonOut bool) *printer {
	_, noColor := p.LookupEnv("NO_COLOR")
	pr := &printer{out: p.Stdout, err: p.Stderr, json: jsonOut, outTTY: p.StdoutTTY, errTTY: p.StderrTTY}
	if pr.outTTY {
		if pr.width = p.TermWidth(); pr.width <= 0 {
			pr.width = 100
		}
	}
	pr.outR = lipgloss.NewRenderer(p.Stdout)
	pr.errR = lipgloss.NewRenderer(p.Stderr)
	if noColor || !pr.outTTY {
		pr.outR.SetColorProfile(termenv.Ascii)
	}
	if noColor || !pr.errTTY {
		pr.errR.SetColorProfile(termenv.Ascii)
	}
	return pr
}

// writeJSON prints one JSON document and a newline on stdout.
func (pr *printer) writeJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // hints hold <placeholders>, not HTML
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	_, err := pr.out.Write(b.Bytes())
	return err
}

// writeRawJSON prints a JSON document as received, indented like every
// other document, with a newline.
func (pr *printer) writeRawJSON(raw []byte) error {
	var ind bytes.Buffer
	b := raw
	if json.Indent(&ind, raw, "", "  ") == nil {
		b = ind.Bytes()
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, err := pr.out.Write(b); err != nil {
		return err
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		_, err := io.WriteString(pr.out, "\n")
		return err
	}
	return nil
}

// payload prints text on stdout, ending it with a newline.
func (pr *printer) payload(s string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	io.WriteString(pr.out, s)
	if !strings.HasSuffix(s, "\n") {
		io.WriteString(pr.out, "\n")
	}
}

// info prints progress for people on stderr; silent with --json, so a
// program reading both streams gets only the document.
func (pr *printer) info(format string, args ...any) {
	if pr.json {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	fmt.Fprintf(pr.err, format+"\n", args...)
}

// logf prints a line on stderr in every mode: logs of long-running
// commands, which a program reading stdout never sees.
func (pr *printer) logf(format string, args ...any) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	fmt.Fprintf(pr.err, format+"\n", args...)
}

// warn prints a warning on stderr, in every mode.
func (pr *printer) warn(format string, args ...any) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	label := pr.errR.NewStyle().Foreground(lipgloss.Color("3")).Bold(true).Render("warning:")
	fmt.Fprintf(pr.err, label+" "+format+"\n", args...)
}

type errorDoc struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Hint    string   `json:"hint,omitempty"`
	Setup   []string `json:"setup,omitempty"`
	// RetryAfterSeconds is the wait a busy server asked for (code busy).
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

func (pr *printer) printError(e *cliError) {
	if pr.json {
		pr.writeJSON(map[string]any{"error": errorDoc{Code: e.code, Message: e.message, Hint: e.hint, Setup: e.setup,
			RetryAfterSeconds: courier.WholeSeconds(e.retryAfter)}})
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	label := pr.errR.NewStyle().Foreground(lipgloss.Color("1")).Bold(true).Render("a2a-courier:")
	fmt.Fprintf(pr.err, "%s %s\n", label, e.message)
	if e.hint != "" {
		hint := pr.errR.NewStyle().Faint(true).Render("hint:")
		fmt.Fprintf(pr.err, "%s %s\n", hint, e.hint)
	}
}

// minFlexWidth is the narrowest the flexible column of a table is cut to
// before each row takes two lines instead.
const minFlexWidth = 20

// table prints rows: a styled table on a terminal, tab-separated lines
// without a header when piped, so that cut and awk work.
//
// On a terminal the table fits its width: flexCol (a title, a
// description) gives way, cut with an ellipsis; the other columns, ids
// among them, are never cut, so that they can be copied. When the
// flexible column would be left fewer than minFlexWidth characters, each
// row takes two lines instead: the other columns, then the flexible one,
// indented, as wide as the terminal.
func (pr *printer) table(headers []string, rows [][]string, flexCol int) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.outTTY {
		// One write for the whole table: a reader on the other end of the
		// pipe wakes once, not once a row.
		var b strings.Builder
		for _, r := range rows {
			for i, c := range r {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(tsvCell(c))
			}
			b.WriteByte('\n')
		}
		io.WriteString(pr.out, b.String())
		return
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = make([]string, len(r))
		for j, c := range r {
			cells[i][j] = singleLine(c)
		}
	}
	if pr.width > 0 && flexCol >= 0 && flexCol < len(headers) {
		room, fits := flexRoom(headers, cells, flexCol, pr.width)
		if !fits {
			pr.twoLineRows(headers, cells, flexCol)
			return
		}
		for _, r := range cells {
			if flexCol < len(r) {
				r[flexCol] = truncate(r[flexCol], room)
			}
		}
	}
	header := pr.outR.NewStyle().Bold(true).Padding(0, 1)
	cell := pr.outR.NewStyle().Padding(0, 1)
	t := table.New().
		Border(lipgloss.RoundedBorder()).
		BorderStyle(pr.outR.NewStyle().Faint(true)).
		Headers(headers...).
		Rows(cells...).
		StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return header
			}
			return cell
		})
	fmt.Fprintln(pr.out, t.Render())
}

// columnWidths is the width of each column: its widest cell or header.
func columnWidths(headers []string, rows [][]string) []int {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = lipgloss.Width(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if w := lipgloss.Width(c); i < len(widths) && w > widths[i] {
				widths[i] = w
			}
		}
	}
	return widths
}

// flexRoom is the width the flexible column may have for the bordered
// table to fit the terminal, and whether that is at least minFlexWidth
// (or all the column needs).
func flexRoom(headers []string, rows [][]string, flex, width int) (int, bool) {
	widths := columnWidths(headers, rows)
	used := 1 // the left border
	for i, w := range widths {
		if i != flex {
			used += w + 3 // padding and the border after the cell
		}
	}
	room := width - used - 3
	return room, room >= widths[flex] || room >= minFlexWidth
}

// twoLineRows prints a table too wide for the terminal as two lines a
// row: the columns other than flex, aligned, then the flex column
// indented and cut to the terminal's width. Headers likewise, in bold.
func (pr *printer) twoLineRows(headers []string, rows [][]string, flex int) {
	widths := columnWidths(headers, rows)
	const indent = "  "
	room := pr.width - len(indent)
	if room < 8 {
		room = 8
	}
	line := func(r []string) string {
		var b strings.Builder
		last := len(r) - 1
		if last == flex {
			last--
		}
		for i, c := range r {
			if i == flex {
				continue
			}
			b.WriteString(c)
			if i < last {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2))
			}
		}
		return b.String()
	}
	bold := pr.outR.NewStyle().Bold(true)
	var b strings.Builder
	b.WriteString(bold.Render(line(headers)) + "\n")
	b.WriteString(bold.Render(indent+headers[flex]) + "\n")
	for _, r := range rows {
		b.WriteString(line(r) + "\n")
		if flex < len(r) {
			b.WriteString(indent + truncate(r[flex], room) + "\n")
		}
	}
	io.WriteString(pr.out, b.String())
}

func singleLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func tsvCell(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// truncate cuts s to n terminal columns, the last one an ellipsis; wide
// characters (CJK, emoji) count as two.
func truncate(s string, n int) string {
	if lipgloss.Width(s) <= n {
		return s
	}
	if n < 2 {
		return "…"
	}
	return strings.TrimRight(ansi.Truncate(s, n-1, ""), " ") + "…"
}

// spinner shows that a wait is going on, on stderr, only when stderr is a
// terminal and only in text mode.
type spinner struct {
	pr    *printer
	label string
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

func (pr *printer) startSpinner(label string, now func() time.Time) *spinner {
	s := &spinner{pr: pr, label: label, start: now(), stop: make(chan struct{}), done: make(chan struct{})}
	if pr.json || !pr.errTTY {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(120 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			s.pr.mu.Lock()
			label := s.label
			fmt.Fprintf(s.pr.err, "\r\033[K%s %s (%s)", frames[i%len(frames)], label, time.Since(s.start).Round(time.Second))
			s.pr.mu.Unlock()
			select {
			case <-s.stop:
				s.pr.mu.Lock()
				fmt.Fprint(s.pr.err, "\r\033[K")
				s.pr.mu.Unlock()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *spinner) setLabel(l string) {
	s.pr.mu.Lock()
	s.label = l
	s.pr.mu.Unlock()
}

func (s *spinner) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}
