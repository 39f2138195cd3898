package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
)

// helpExitCodes reads exitCodeTable: code → meaning, continuation lines
// joined.
func helpExitCodes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	entry := regexp.MustCompile(`^  (\d)  (.*)$`)
	last := ""
	for _, l := range strings.Split(exitCodeTable, "\n")[1:] {
		if m := entry.FindStringSubmatch(l); m != nil {
			last = m[1]
			out[last] = m[2]
			continue
		}
		if last == "" || !strings.HasPrefix(l, "     ") {
			t.Fatalf("exitCodeTable: line %q is neither an entry nor its continuation", l)
		}
		out[last] += " " + strings.TrimSpace(l)
	}
	return out
}

// markdownExitCodes reads the rows of the exit code table of a Markdown
// file: the rows "| <digit> | meaning |" after a "| code | meaning" header.
func markdownExitCodes(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "| code | meaning")
	if i < 0 {
		t.Fatalf("%s has no exit code table", path)
	}
	out := map[string]string{}
	row := regexp.MustCompile(`^\| (\d) \| (.*?) \|`)
	for _, l := range strings.Split(text[i:], "\n")[2:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			break
		}
		out[m[1]] = strings.ReplaceAll(m[2], "`", "")
	}
	return out
}

// The exit code table of --help is the source of truth: the README and
// design.md say the same, word for word, and SKILL.md has the same codes.
func TestExitCodeTablesAgree(t *testing.T) {
	t.Parallel()
	help := helpExitCodes(t)
	if len(help) != 10 {
		t.Fatalf("exitCodeTable has %d codes, want 0 to 9", len(help))
	}
	for _, path := range []string{"../../README.md", "../../docs/design.md"} {
		md := markdownExitCodes(t, path)
		for code, want := range help {
			if md[code] != want {
				t.Errorf("%s, exit %s:\n  %q\n--help says\n  %q", path, code, md[code], want)
			}
		}
		if len(md) != len(help) {
			t.Errorf("%s has %d exit codes, --help %d", path, len(md), len(help))
		}
	}
	skill := markdownExitCodes(t, "../../SKILL.md")
	for code := range help {
		if skill[code] == "" {
			t.Errorf("SKILL.md lacks exit %s", code)
		}
	}
	if len(skill) != len(help) {
		t.Errorf("SKILL.md has %d exit codes, --help %d", len(skill), len(help))
	}
	// Exit 6 and 9 carry the rules a caller branches on.
	for _, want := range []string{"rejected", "code of the refusal"} {
		if !strings.Contains(help["6"], want) {
			t.Errorf("exit 6 does not say %q", want)
		}
	}
	if !strings.Contains(help["9"], "retry_after_seconds") || !strings.Contains(skill["9"], "busy") {
		t.Errorf("exit 9: help %q, SKILL.md %q", help["9"], skill["9"])
	}
	// Exit 8 is true everywhere: on a release where a failed run leaves no
	// trace (Kibana 9.5 after a cut), something may be lost, so no table
	// says "nothing is lost"; each says nothing is sent again and that a
	// note tells when a failure would leave no trace.
	for where, text := range map[string]string{"--help": help["8"], "SKILL.md": skill["8"]} {
		if strings.Contains(text, "nothing is lost") || !strings.Contains(text, "nothing is sent again") || !strings.Contains(text, "no trace") {
			t.Errorf("exit 8 in %s: %q", where, text)
		}
	}
}

// TestEveryKindIsReported: the one table from a kind of remote failure to
// its report has a row for every kind the client knows, with a code of the
// exit code table and a hint (but for the unexpected).
func TestEveryKindIsReported(t *testing.T) {
	t.Parallel()
	for k := client.KindUnexpected; !strings.HasPrefix(k.String(), "kind("); k++ {
		row, ok := kindReports[k]
		if !ok {
			t.Errorf("no row for kind %s", k)
			continue
		}
		if row.exit < ExitUnexpected || row.exit > ExitBusy || row.hint.IsZero() && k != client.KindUnexpected && k != client.KindBadRequest {
			t.Errorf("kind %s: exit %d, hint %q", k, row.exit, row.hint)
		}
		if ce := fromClientError(&client.Error{Kind: k, Op: "op"}); ce.code == "" || ce.exit != exitFor(k, 0, 0) {
			t.Errorf("kind %s: %+v", k, ce)
		}
	}
}
