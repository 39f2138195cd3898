// Package termui is what a2a-courier shows a person on a terminal: tables
// that fit the terminal's width (tab-separated lines when piped) and a
// spinner while a command waits. It writes to the writers it is given and
// decides nothing about when to style: the caller's renderer does.
package termui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"
)

// minFlexWidth is the narrowest the flexible column of a table is cut to
// before each row takes two lines instead.
const minFlexWidth = 20

// TSV writes rows as tab-separated lines without a header, so that cut and
// awk work: tabs and line breaks in a cell become spaces. One write for
// the whole table: a reader on the other end of a pipe wakes once, not
// once a row.
func TSV(w io.Writer, rows [][]string) {
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
	io.WriteString(w, b.String())
}

// Table writes a styled table for a terminal width columns wide (0: as
// wide as it takes). flexCol (a title, a description) gives way, cut with
// an ellipsis; the other columns, ids among them, are never cut, so that
// they can be copied. When the flexible column would be left fewer than
// minFlexWidth characters, each row takes two lines instead: the other
// columns, then the flexible one, indented, as wide as the terminal.
func Table(w io.Writer, r *lipgloss.Renderer, width int, headers []string, rows [][]string, flexCol int) {
	cells := make([][]string, len(rows))
	for i, row := range rows {
		cells[i] = make([]string, len(row))
		for j, c := range row {
			cells[i][j] = SingleLine(c)
		}
	}
	if width > 0 && flexCol >= 0 && flexCol < len(headers) {
		room, fits := flexRoom(headers, cells, flexCol, width)
		if !fits {
			twoLineRows(w, r, width, headers, cells, flexCol)
			return
		}
		for _, row := range cells {
			if flexCol < len(row) {
				row[flexCol] = Truncate(row[flexCol], room)
			}
		}
	}
	header := r.NewStyle().Bold(true).Padding(0, 1)
	cell := r.NewStyle().Padding(0, 1)
	t := table.New().
		Border(lipgloss.RoundedBorder()).
		BorderStyle(r.NewStyle().Faint(true)).
		Headers(headers...).
		Rows(cells...).
		StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return header
			}
			return cell
		})
	fmt.Fprintln(w, t.Render())
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
func twoLineRows(w io.Writer, r *lipgloss.Renderer, width int, headers []string, rows [][]string, flex int) {
	widths := columnWidths(headers, rows)
	const indent = "  "
	room := max(width-len(indent), 8)
	line := func(row []string) string {
		var b strings.Builder
		last := len(row) - 1
		if last == flex {
			last--
		}
		for i, c := range row {
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
	bold := r.NewStyle().Bold(true)
	var b strings.Builder
	b.WriteString(bold.Render(line(headers)) + "\n")
	b.WriteString(bold.Render(indent+headers[flex]) + "\n")
	for _, row := range rows {
		b.WriteString(line(row) + "\n")
		if flex < len(row) {
			b.WriteString(indent + Truncate(row[flex], room) + "\n")
		}
	}
	io.WriteString(w, b.String())
}

// SingleLine is the first line of s, with " …" when more followed, tabs
// as spaces, made fit for a terminal as Text makes it (escape sequences
// and controls out: a server's text must not redraw the line it is shown
// in): one cell of a table, one label.
func SingleLine(s string) string {
	s = Text(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return strings.ReplaceAll(s, "\t", " ")
}

// tsvCell is s on one line, as Text makes it, its tabs and line breaks
// spaces.
func tsvCell(s string) string { return Name(s) }

// Name is a name a server gave (an agent's, a skill's) as every command
// shows it: all of it on one line, as Text makes it, its tabs and line
// breaks spaces, no space around it (not its first line only: a carriage return must not hide
// what follows it in one command and show it in another).
func Name(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' {
			return ' '
		}
		return r
	}, Text(s)))
}

// ID is an id a server gave (an agent's) as it can be shown: itself when
// Name leaves it as it is; else, with ok false, quoted as Go quotes it
// ("evil\x1bid"), so that nothing is stripped out of sight: an id shown
// stripped would name another agent, or none.
func ID(s string) (shown string, ok bool) {
	if Name(s) == s {
		return s, true
	}
	return strconv.Quote(s), false
}

// Truncate cuts s to n terminal columns, the last one an ellipsis; wide
// characters (CJK, emoji) count as two.
func Truncate(s string, n int) string {
	if lipgloss.Width(s) <= n {
		return s
	}
	if n < 2 {
		return "…"
	}
	return strings.TrimRight(ansi.Truncate(s, n-1, ""), " ") + "…"
}

// Spinner shows that a wait is going on. It writes to its writer under mu,
// the lock of everything else written there.
type Spinner struct {
	w     io.Writer
	mu    sync.Locker
	label string
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// StartSpinner starts a spinner on w (a terminal) labelled label; started
// with active false it shows nothing, and Stop returns at once.
func StartSpinner(w io.Writer, mu sync.Locker, label string, start time.Time, active bool) *Spinner {
	s := &Spinner{w: w, mu: mu, label: SingleLine(label), start: start, stop: make(chan struct{}), done: make(chan struct{})}
	if !active {
		close(s.done)
		return s
	}
	go s.spin()
	return s
}

func (s *Spinner) spin() {
	defer close(s.done)
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		s.mu.Lock()
		fmt.Fprintf(s.w, "\r\033[K%s %s (%s)", frames[i%len(frames)], s.label, time.Since(s.start).Round(time.Second))
		s.mu.Unlock()
		select {
		case <-s.stop:
			s.mu.Lock()
			fmt.Fprint(s.w, "\r\033[K")
			s.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

// SetLabel changes what the spinner says (on one line, as SingleLine
// makes it).
func (s *Spinner) SetLabel(l string) {
	l = SingleLine(l)
	s.mu.Lock()
	s.label = l
	s.mu.Unlock()
}

// Stop stops the spinner and clears its line.
func (s *Spinner) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// Age is how long ago, for a person: 45s, 12m, 5h, 3d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
