package mcpserver_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/nextstep"
)

// shellTermsIn finds, in a text said to the tools, what is said for a
// shell: a flag that a tool takes as an argument (--state, where the tool
// says state), or a command line "a2a-courier <command>" outside "run
// `…` in a terminal" (the tools' words for a command to run in a shell).
// A check of the text, no rewrite of it.
func shellTermsIn(s string) []string {
	s = inTerminal.ReplaceAllString(s, "")
	return append(toolFlagRe.FindAllString(s, -1), commandRe.FindAllString(s, -1)...)
}

var (
	inTerminal = regexp.MustCompile("run `[^`]*` in a terminal")
	toolFlagRe = regexp.MustCompile(`--(` + names(func(yield func(string)) {
		for f := range nextstep.ToolFlags {
			yield(strings.TrimPrefix(f, "--"))
		}
	}) + `)\b(?:[^-]|$)`)
	commandRe = regexp.MustCompile(`a2a-courier (` + names(func(yield func(string)) {
		for c := range nextstep.Tools {
			yield(c)
		}
		for _, c := range []string{"config", "doctor", "prune", "skill", "mcp", "version", "demo"} {
			yield(c)
		}
	}) + `)\b`)
)

// names are the words, longest first (send-async before send), as a
// regexp alternation.
func names(each func(yield func(string))) string {
	var ns []string
	each(func(n string) { ns = append(ns, regexp.QuoteMeta(n)) })
	sort.Slice(ns, func(i, j int) bool { return len(ns[i]) > len(ns[j]) })
	return strings.Join(ns, "|")
}

// saidTexts are the texts of a tool's result: its text, and each string
// of its structuredContent (message, hint, reason, note, setup steps).
func saidTexts(text string, doc any) []string {
	out := []string{text}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// Each tool's error paths (and fetch's reason of a context with no reply
// yet) say their messages, hints, reasons, notes and
// set-up steps in tool terms: no flag a tool takes as an argument, no
// command line of the CLI but one to run in a terminal.
func TestErrorTextsSayNoShellTerms(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	a := newCourier(t, sim)
	s := connect(t, a.options())
	res, doc, _ := s.call("send", map[string]any{"agent": "audit-agent", "message": "weekly", "wait_seconds": 30})
	ctxID, _ := doc["context_id"].(string)
	if res.IsError || doc["state"] != "completed" || ctxID == "" {
		t.Fatalf("send: %v %v", res.IsError, doc)
	}
	bare := newCourier(t, sim)
	delete(bare.env, "KIBANA_URL")
	delete(bare.env, "KIBANA_API_KEY")
	unset := connect(t, bare.options())
	const unknown = "3f6c2e1a-0000-4000-8000-0000000000bb"
	for _, tc := range []struct {
		s    *session
		tool string
		args map[string]any
		want string // the text holds it
	}{
		{unset, "discover", map[string]any{}, "3. Check it: run `a2a-courier doctor` in a terminal"},
		{unset, "send", map[string]any{"agent": "audit-agent", "message": "hi"}, "run `a2a-courier config set kibana-url "},
		{s, "tasks", map[string]any{"state": "bogus"}, "state: unknown state \"bogus\""},
		{s, "tasks", map[string]any{"agent": "audit-agent", "url": "http://127.0.0.1:1/a2a"}, "agent with url\nhint: agent filters the local ledger: the agent of url is the URL"},
		{s, "send", map[string]any{"agent": "audit-agent", "message": "hi", "task_id": "t-1"}, "task_id is for generic A2A agents\nhint: Agent Builder answers go in the same conversation: use context_id <contextId>"},
		{s, "show", map[string]any{"conversation": ctxID, "round": 5}, "leave round out (or use round 1)"},
		{s, "fetch", map[string]any{"context_id": unknown}, "add url <agent URL> or the peer's name"},
		// The cancel tool takes no peer: its agent is a URL.
		{s, "cancel", map[string]any{"context_id": unknown}, "canceled by its task id and the agent's URL: the cancel tool with context_id <taskId> and url <agent URL>"},
		{s, "result", map[string]any{"context_id": unknown}, `the fetch tool with context_id "` + unknown + `" asks the server`},
		{s, "get_card", map[string]any{"agent": "no-such-agent"}, "the discover tool lists the agents"},
		{s, "send", map[string]any{"agent": "audit-agent", "message": "hi", "data": []any{map[string]any{"a": 1}}}, ""},
		{s, "send", map[string]any{"url": "http://127.0.0.1:1/a2a", "message": "hi", "wait_seconds": 5}, ""},
		{s, "send", map[string]any{"agent": "audit-agent", "message": "hi", "context_id": "a2a-" + ctxID}, ""},
		{s, "fetch", map[string]any{"task_id": "t-1"}, ""},
		{s, "cancel", map[string]any{"context_id": ctxID}, ""},
		{s, "show", map[string]any{"conversation": unknown}, ""},
		{s, "result", map[string]any{"context_id": "a2a-" + ctxID}, ""},
		{s, "tasks", map[string]any{"url": "http://127.0.0.1:1/a2a", "state": "running"}, ""},
		{s, "tasks", map[string]any{"url": "http://127.0.0.1:1/a2a"}, ""},
		{s, "get_card", map[string]any{"url": "http://127.0.0.1:1/a2a"}, ""},
		{s, "history", map[string]any{"limit": -1}, ""},
	} {
		res, doc, text := tc.s.call(tc.tool, tc.args)
		t.Logf("%s %v: %s", tc.tool, tc.args, text)
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: %v %q, want it to hold %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
		for _, said := range saidTexts(text, doc) {
			if found := shellTermsIn(said); len(found) > 0 {
				t.Errorf("%s %v says %q in shell terms: %q", tc.tool, tc.args, found, said)
			}
		}
	}
}
