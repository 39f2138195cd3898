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
	"github.com/muesli/termenv"

	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// printer writes results to stdout and everything else to stderr. Styling
// is decided per stream: stdout styles only when stdout is a terminal,
// stderr only when stderr is one, and never when NO_COLOR is set.
//
// Every line of text it writes on stderr passes through termui.Text (no
// escape sequence, control character or bidirectional control of a
// server's text reaches the terminal; its own styling is added after), and
// so does the text written on a terminal's stdout, where a reply keeps its
// colours (termui.Reply); a pipe gets stdout's text byte for byte, and
// --json is JSON (on a terminal with DEL, C1 and format characters as \u
// escapes: termui.JSON).
type printer struct {
	*streams
	// caller is what the steps and settings the printed texts name keep
	// of the caller's command line (App.caller); nil: nothing.
	caller func() nextstep.Caller
}

// streams are what every printer of a command line shares: the streams,
// how they are styled, and the lock of their writes.
type streams struct {
	out, err       io.Writer
	json           bool
	outTTY, errTTY bool
	width          int
	outR, errR     *lipgloss.Renderer
	mu             sync.Mutex
	// stdout is out, remembering its first failed write.
	stdout *failedWriter
}

// withCaller is pr rendering texts for caller (a command that reads a
// recorded task with the profile it was sent with: taskView), on the same
// streams.
func (pr *printer) withCaller(caller func() nextstep.Caller) *printer {
	return &printer{streams: pr.streams, caller: caller}
}

// say renders a text for the caller: the steps (nextstep.Step) and
// settings it names as they apply to the caller's command line.
func (pr *printer) say(t nextstep.Text) string {
	if pr.caller == nil {
		return t.String()
	}
	return pr.caller().Text(t)
}

// sayAll is texts as say says them; nil for none.
func sayAll(say func(nextstep.Text) string, texts []nextstep.Text) []string {
	var said []string
	for _, t := range texts {
		said = append(said, say(t))
	}
	return said
}

func newPrinter(p *Process, jsonOut bool) *printer {
	_, noColor := p.LookupEnv("NO_COLOR")
	pr := &printer{streams: &streams{stdout: &failedWriter{w: p.Stdout}, err: p.Stderr, json: jsonOut, outTTY: p.StdoutTTY, errTTY: p.StderrTTY}}
	pr.out = pr.stdout
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

// failedWriter remembers the first error a write to its stream met (a
// pipe its reader closed: EPIPE, now that SIGPIPE no longer kills the
// process): a command whose result did not reach its reader says so
// instead of exiting 0. Its writes are made under the printer's lock.
type failedWriter struct {
	w   io.Writer
	err error
}

func (f *failedWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// outErr is the first error a write to stdout met, if any.
func (pr *printer) outErr() error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.stdout.err
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
	_, err := pr.out.Write(pr.jsonOut(b.Bytes()))
	return err
}

// jsonOut is a document as stdout gets it: on a terminal, what it would
// act on and encoding/json leaves raw (DEL, C1 controls, format
// characters) as \u escapes, the same JSON value (termui.JSON); piped,
// unchanged.
func (pr *printer) jsonOut(b []byte) []byte {
	if pr.outTTY {
		return termui.JSON(b)
	}
	return b
}

// writeRawJSON prints a JSON document as received, indented like every
// other document, with a newline; on a terminal through termui.JSON, even
// when it is not JSON.
func (pr *printer) writeRawJSON(raw []byte) error {
	var ind bytes.Buffer
	b := raw
	if json.Indent(&ind, raw, "", "  ") == nil {
		b = ind.Bytes()
	}
	b = pr.jsonOut(b)
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

// payload prints text on stdout, ending it with a newline: byte for byte
// to a pipe or a file (a reply is data); on a terminal with its lines,
// tabs and colours, nothing else a terminal would act on (termui.Reply).
func (pr *printer) payload(s string) {
	if pr.outTTY {
		s = termui.Reply(s)
	}
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
	fmt.Fprintln(pr.err, termui.Text(pr.say(nextstep.Say(format, args...))))
}

// logf prints a line on stderr in every mode: logs of long-running
// commands, which a program reading stdout never sees.
func (pr *printer) logf(format string, args ...any) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	fmt.Fprintln(pr.err, termui.Text(fmt.Sprintf(format, args...)))
}

// overSpinner is logf for a line that may be written while the spinner
// draws: the spinner's line is cleared first.
func (pr *printer) overSpinner(format string, args ...any) {
	line := termui.Text(fmt.Sprintf(format, args...))
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.errTTY && !pr.json {
		io.WriteString(pr.err, "\r\033[K")
	}
	fmt.Fprintln(pr.err, line)
}

// warn prints a warning on stderr, in every mode.
func (pr *printer) warn(format string, args ...any) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	label := pr.errR.NewStyle().Foreground(lipgloss.Color("3")).Bold(true).Render("warning:")
	fmt.Fprintln(pr.err, label+" "+termui.Text(pr.say(nextstep.Say(format, args...))))
}

type errorDoc struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Hint    string   `json:"hint,omitempty"`
	Setup   []string `json:"setup,omitempty"`
	// hint is Hint as a text, which a command renders for its caller.
	hint nextstep.Text
	// why is Message without the task it names (cliError.why).
	why string
	// RetryAfterSeconds is the wait a busy server asked for (code busy).
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
}

// message is e's message as said to the caller (cliError.said).
func (pr *printer) message(e *cliError) string {
	if e.said.IsZero() {
		return e.message
	}
	return pr.say(e.said)
}

func (pr *printer) printError(e *cliError) {
	if pr.json {
		pr.writeJSON(map[string]any{"error": errorDoc{Code: e.code, Message: pr.message(e), Hint: pr.say(e.hint), Setup: sayAll(pr.say, e.setup),
			RetryAfterSeconds: courier.WholeSeconds(e.retryAfter)}})
		if pr.outErr() == nil {
			return
		}
		// stdout is gone (a closed pipe): the error document never reached
		// the caller, so it gets one line on stderr instead.
		line := pr.message(e)
		if !e.hint.IsZero() {
			line += " (" + pr.say(e.hint) + ")"
		}
		pr.mu.Lock()
		defer pr.mu.Unlock()
		fmt.Fprintf(pr.err, "a2a-courier: %s\n", termui.Text(line))
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	label := pr.errR.NewStyle().Foreground(lipgloss.Color("1")).Bold(true).Render("a2a-courier:")
	fmt.Fprintf(pr.err, "%s %s\n", label, termui.Text(pr.message(e)))
	if !e.hint.IsZero() {
		hint := pr.errR.NewStyle().Faint(true).Render("hint:")
		fmt.Fprintf(pr.err, "%s %s\n", hint, termui.Text(pr.say(e.hint)))
	}
}

// table prints rows: a styled table on a terminal, as wide as it is
// (termui.Table: ids never cut), tab-separated lines without a header when
// piped, so that cut and awk work.
func (pr *printer) table(headers []string, rows [][]string, flexCol int) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.outTTY {
		termui.TSV(pr.out, rows)
		return
	}
	termui.Table(pr.out, pr.outR, pr.width, headers, rows, flexCol)
}

func singleLine(s string) string { return termui.SingleLine(s) }

// startSpinner shows that a wait is going on, on stderr, only when stderr
// is a terminal and only in text mode.
func (pr *printer) startSpinner(label string, now func() time.Time) *termui.Spinner {
	return termui.StartSpinner(pr.err, &pr.mu, label, now(), !pr.json && pr.errTTY)
}
