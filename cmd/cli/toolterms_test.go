package cli

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// Texts of the CLI that name a command say it as a step: a command line
// for people, the tool that does it for the MCP server (nextstep.Caller
// Tool), which runs no shell.
func TestTextsSayTheirStepsInToolTerms(t *testing.T) {
	people, tools := nextstep.Caller{}, nextstep.Caller{Tool: true}

	// A task recorded whose worker did not start; an unwritable state
	// directory stays its class (exit 2, its hint).
	ce := handOffErr("c-1", errors.New("boom"))
	if want := "task c-1 is recorded but the background worker did not start: boom (run `a2a-courier result c-1 --wait` to retry)"; ce.message != want || people.Text(ce.said) != want ||
		tools.Text(ce.said) != `task c-1 is recorded but the background worker did not start: boom (call the result tool with context_id "c-1" and wait_seconds to retry)` || ce.code != "unexpected" {
		t.Errorf("%+v: %q", ce, tools.Text(ce.said))
	}
	dir := filepath.Join(t.TempDir(), "state")
	ce = handOffErr("c-1", &store.UnwritableError{Dir: dir, Err: errors.New("read-only file system")})
	if ce.exit != ExitUsage || ce.code != "state_dir" || ce.hint.IsZero() || ce.message != people.Text(ce.said) ||
		tools.Text(ce.said) == ce.message {
		t.Errorf("%+v", ce)
	}

	// An answer of another context.
	ce = fromClientError(&client.Error{Kind: client.KindProtocol, Op: "send", StatusCode: 200, Err: client.ErrOtherContext})
	if got := people.Text(ce.hint); got != "the agent's answer belongs to another conversation, so it is not taken as this one's reply; `a2a-courier fetch --task <taskId>` reads a task as the agent shows it" {
		t.Errorf("people: %q", got)
	}
	if got := tools.Text(ce.hint); got != "the agent's answer belongs to another conversation, so it is not taken as this one's reply; the fetch tool with task_id <taskId> reads a task as the agent shows it" {
		t.Errorf("tools: %q", got)
	}

	// Too many arguments with --url (the send tool with url and agent).
	_, _, err := splitAgentArgs(agentFlags{url: "http://127.0.0.1:1/a2a"}, []string{"a", "b"}, 1)
	ce = classify(err)
	if got := people.Text(ce.hint); got != "with --url the agent is the URL: give only the text (or - for stdin)" {
		t.Errorf("people: %q", got)
	}
	if got := tools.Text(ce.hint); got != "with url the agent is the URL: give only the text as message" {
		t.Errorf("tools: %q", got)
	}
}

// A task sent with another profile, read where the caller's own
// connection flags name another Kibana (the MCP server's --profile, which
// it gives each command it runs): no tool takes a profile, so to the tools
// the hint is the command line to run in a terminal; to people it stays
// "run the command again with --profile lab".
func TestOtherProfileHintInToolTerms(t *testing.T) {
	t.Parallel()
	h, _, _ := twoKibanas(t, agentbuildertest.V95)
	r := h.run("send", "--profile", "lab", "elastic-ai-agent", "hi", "--json")
	r.expect(t, ExitOK)
	ctxID := decodeTask(t, r.stdout).ContextID

	r = h.run("--profile", "default", "fetch", ctxID)
	checkOneLineError(t, r, ExitUsage, "")
	if !strings.Contains(r.stderr, "hint: run the command again with --profile lab, which names that Kibana") {
		t.Errorf("people: %s", r.stderr)
	}
	h.tool = true
	r = h.run("--profile", "default", "fetch", ctxID, "--json")
	var doc struct {
		Error errorDoc `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != ExitUsage {
		t.Fatalf("tool: %d %v %q", r.code, err, r.stdout)
	}
	if want := "run `a2a-courier fetch " + ctxID + " --profile lab` in a terminal: profile lab names that Kibana"; doc.Error.Hint != want {
		t.Errorf("tool: hint %q, want %q", doc.Error.Hint, want)
	}
}
