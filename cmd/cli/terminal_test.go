package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// evil is a server's text carrying what a terminal acts on: OSC 52 (a
// clipboard write), OSC 0 (the window title), OSC 8 (a hyperlink), a
// carriage return that overwrites the line, C1 CSI and OSC, a bidi
// override and isolate, a line separator, a CSI screen clear, DEL and a
// backspace, and invisible format characters (a zero-width space, a word
// joiner, a BOM, tag characters) that make two names look the same.
const evil = "\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;owned\x07\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\" +
	"\rOVER\u009b2J\u009d0;t\u009c\u202eexe.txt\u2066x\u2069\u2028\x1b[2J\x7f\x08\u200b\u2060\ufeff\U000E0041\U000E007F"

// spinnerClear is the spinner's own erasing of its line (and that of a
// progress line written over it): the one sequence the program itself
// writes on stderr.
const spinnerClear = "\r\x1b[K"

var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// terminalSafe fails the test when out, written to a terminal, holds an
// ESC (but for allowed, the sequences the program writes itself), a C0
// control other than tab and line feed (a CR among them), DEL, a C1
// control, a format character (Unicode's Cf: bidirectional controls,
// zero-width characters, tags), a line separator or bytes that are not
// UTF-8.
func terminalSafe(t *testing.T, what, out string, allowed ...string) {
	t.Helper()
	for _, a := range allowed {
		out = strings.ReplaceAll(out, a, "")
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %q", what, out)
	}
	for _, r := range out {
		bad := r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 ||
			unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
		if bad {
			t.Errorf("%s: %U reached the terminal: %q", what, r, out)
			return
		}
	}
}

// TestTerminalGetsNoServerEscapes drives the commands that show a
// Kibana's texts (an agent's name and description, its tools as the
// card's skill ids, a conversation's title, a status message, a reply, a
// failure's reason) with every one of them carrying escape sequences and
// controls, stdout and stderr terminals: none reaches them, but for the
// reply's colours on stdout. Piped, the reply is byte for byte what the
// agent sent.
func TestTerminalGetsNoServerEscapes(t *testing.T) {
	t.Parallel()
	reply := "\x1b[1;31mred\x1b[0m reply " + evil
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Streaming = on()
		o.Agents = append(o.Agents,
			agentbuildertest.Agent{ID: "evil", Name: "Evil " + evil, Description: "desc " + evil, Tools: []string{"tool" + evil},
				Reply: reply, RunTime: 300 * time.Millisecond},
			agentbuildertest.Agent{ID: "evil-fails", Name: "Fails " + evil, Description: "fails", Fail: "broken " + evil, RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	h.tty, h.errTTY = true, true
	both := func(what string, r result) {
		t.Helper()
		terminalSafe(t, what+" stdout", r.stdout)
		terminalSafe(t, what+" stderr", r.stderr, spinnerClear)
	}

	r := h.run("get-card", "evil")
	r.expect(t, ExitOK)
	both("get-card", r)
	for _, want := range []string{"Name:", "Evil link", "  - toollink"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("get-card lost %q:\n%s", want, r.stdout)
		}
	}
	r = h.run("discover")
	r.expect(t, ExitOK)
	both("discover", r)
	if !strings.Contains(r.stdout, "evil") {
		t.Errorf("discover: %s", r.stdout)
	}

	// The spinner and the progress lines show the tool's name ("Calling
	// tool …"); the reply keeps its colours only.
	r = h.run("send", "evil", "title "+evil, "--progress")
	r.expect(t, ExitOK)
	terminalSafe(t, "send stdout", r.stdout, sgr.FindAllString(r.stdout, -1)...)
	terminalSafe(t, "send stderr", r.stderr, spinnerClear)
	if !strings.Contains(r.stdout, "\x1b[1;31mred\x1b[0m reply link") || !strings.Contains(r.stderr, "progress: working: Calling tool toollink") {
		t.Errorf("send: stdout %q\nstderr %q", r.stdout, r.stderr)
	}
	first, _, _ := strings.Cut(r.stderr, "\n")
	ctxID := startedContext(strings.TrimPrefix(first, spinnerClear))
	if ctxID == "" {
		t.Fatalf("no started line: %q", r.stderr)
	}

	for _, args := range [][]string{{"history"}, {"tasks"}} {
		r = h.run(args...)
		r.expect(t, ExitOK)
		both(args[0], r)
	}
	r = h.run("result", ctxID)
	r.expect(t, ExitOK)
	terminalSafe(t, "result stdout", r.stdout, sgr.FindAllString(r.stdout, -1)...)
	terminalSafe(t, "result stderr", r.stderr)

	r = h.run("send", "evil-fails", "go")
	r.expect(t, ExitTaskFailed)
	both("failed send", r)
	if !strings.Contains(r.stderr, "broken link") {
		t.Errorf("the failure's reason is lost: %q", r.stderr)
	}

	// Piped, the reply is data: byte for byte.
	h.tty = false
	r = h.run("result", ctxID)
	r.expect(t, ExitOK)
	if r.stdout != reply+"\n" {
		t.Errorf("piped reply\n got %q\nwant %q", r.stdout, reply+"\n")
	}
}

// TestTerminalGetsNoCardEscapes: a generic agent's card (its name, version,
// skill ids, modes, URL) reaches neither get-card's stdout nor the
// spinner of send --url, which names the agent, with its escapes.
func TestTerminalGetsNoCardEscapes(t *testing.T) {
	t.Parallel()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":%s,"version":%s,"description":%s,"protocolVersion":"0.3.0","url":"%s/","capabilities":{},`+
				`"defaultInputModes":[%s],"skills":[{"id":%s,"name":"s","description":%s}]}`,
				q("Evil "+evil), q("1.0"+evil), q("d"+evil), srv.URL, q("text/plain"+evil), q("skill"+evil), q("does"+evil))
			return
		}
		body, _ := io.ReadAll(r.Body)
		time.Sleep(200 * time.Millisecond) // long enough for the spinner to be worth drawing; it draws at once anyway
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"ok"},`+
			`{"kind":"file","file":{"name":%s,"mimeType":%s,"bytes":"aGk="}}]}}`,
			gjson.GetBytes(body, "id").Raw, q("\u202etxt.exe"+evil), q("text/plain"+evil))
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, nil)
	h.tty, h.errTTY = true, true
	r := h.run("get-card", "--url", srv.URL)
	r.expect(t, ExitOK)
	terminalSafe(t, "get-card stdout", r.stdout)
	terminalSafe(t, "get-card stderr", r.stderr)
	for _, want := range []string{"Name:         Evil link OVERexe.txtx\n", "1.0link …", "  - skilllink OVERexe.txtx: doeslink …", "text/plainlink …"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("get-card lost %q:\n%s", want, r.stdout)
		}
	}
	// The spinner names the agent; the reply's file is saved under a name
	// with no bidi control (it would show "\u202etxt.exe" as "exe.txt"),
	// and the line that says so quotes its name scrubbed (a media type that
	// is no RFC 6838 type is not kept: "unknown type").
	out := t.TempDir()
	r = h.run("send", "--url", srv.URL, "hi", "--out", out)
	r.expect(t, ExitOK)
	terminalSafe(t, "send stdout", r.stdout)
	terminalSafe(t, "send stderr", r.stderr, spinnerClear)
	if !strings.Contains(r.stderr, "waiting for Evil link") || !strings.Contains(r.stderr, "file txt.exelink … (unknown type, 2 bytes) saved to "+out) {
		t.Errorf("the spinner did not name the agent, or the file's line is wrong: %q", r.stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Fatalf("saved %v", entries)
	}
	terminalSafe(t, "saved file name", entries[0].Name())
}

// TestJSONOnATerminalLeavesNoControlRaw: --json on a terminal is the
// document a pipe gets, the same JSON value, with what a terminal acts on
// and encoding/json leaves raw (DEL, C1 controls such as U+009B CSI and
// U+009D OSC, bidi, zero-width and tag characters) written as \u escapes;
// get-card's raw card too. Piped, the document is unchanged.
func TestJSONOnATerminalLeavesNoControlRaw(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "evil", Name: "Evil " + evil, Description: "desc " + evil,
			Tools: []string{"tool" + evil}, Reply: "reply " + evil, RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	r := h.run("send", "evil", "hi", "--json")
	r.expect(t, ExitOK)
	ctxID := gjson.Get(r.stdout, "context_id").String()
	if ctxID == "" {
		t.Fatalf("no context_id: %s", r.stdout)
	}
	for _, args := range [][]string{{"get-card", "evil"}, {"discover"}, {"result", ctxID}} {
		args = append(args, "--json")
		h.tty = false
		piped := h.run(args...)
		piped.expect(t, ExitOK)
		if !strings.ContainsRune(piped.stdout, '\u009b') && !strings.Contains(piped.stdout, `\u009b`) {
			t.Fatalf("%v: the evil text is not in the document: %s", args, piped.stdout)
		}
		h.tty = true
		tty := h.run(args...)
		tty.expect(t, ExitOK)
		jsonTerminalSafe(t, strings.Join(args, " "), tty.stdout)
		var a, b any
		if err := json.Unmarshal([]byte(piped.stdout), &a); err != nil {
			t.Fatalf("%v piped: %v", args, err)
		}
		if err := json.Unmarshal([]byte(tty.stdout), &b); err != nil {
			t.Fatalf("%v on a terminal: %v: %q", args, err, tty.stdout)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: another value on a terminal:\n%s\n%s", args, piped.stdout, tty.stdout)
		}
	}
}

// jsonTerminalSafe fails the test when a JSON document written to a
// terminal holds, raw, a control other than LF, DEL, a C1 control, a
// format character (Cf), a line separator or bytes that are not UTF-8.
func jsonTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %q", what, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			t.Errorf("%s: %U reached the terminal raw: %q", what, r, out)
			return
		}
	}
}

// One rule for an agent's name wherever it is shown: get-card's Name and
// discover's NAME (on a terminal and piped) are the same text, all of it
// on one line, its controls out. An agent id with a control or an
// invisible character is not shown stripped (that would name another
// agent, or none): it is shown with visible escapes, as Go quotes it, and
// a note says it cannot be used as shown.
func TestNamesAndIDsShownByOneRule(t *testing.T) {
	t.Parallel()
	const name = "EvilName\rlink\x1b[2J OVER\u202etxt.exe"
	const id = "evil\x1bid\u200b"
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents,
			agentbuildertest.Agent{ID: "evil", Name: name, Description: "d", RunTime: 10 * time.Millisecond},
			agentbuildertest.Agent{ID: id, Name: "Hidden", Description: "h", RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	r := h.run("get-card", "evil")
	r.expect(t, ExitOK)
	var card string
	for _, l := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "Name:"); ok {
			card = strings.TrimSpace(v)
		}
	}
	if card != "EvilName link OVERtxt.exe" {
		t.Errorf("get-card's name: %q", card)
	}
	for _, tty := range []bool{false, true} {
		h.tty = tty
		r = h.run("discover")
		r.expect(t, ExitOK)
		terminalSafe(t, "discover", r.stdout)
		var evilLine, idLine string
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.Contains(l, "Hidden") {
				idLine = l
			}
			if strings.Contains(l, "EvilName") {
				evilLine = l
			}
		}
		if !strings.Contains(evilLine, card) {
			t.Errorf("tty %v: discover's name is not get-card's %q: %q", tty, card, evilLine)
		}
		if quoted := `"evil\x1bid\u200b"`; !strings.Contains(idLine, quoted) || !strings.Contains(r.stderr, quoted) || !strings.Contains(r.stderr, "cannot be") {
			t.Errorf("tty %v: the id with controls: %q\nstderr %q", tty, idLine, r.stderr)
		}
	}
}
