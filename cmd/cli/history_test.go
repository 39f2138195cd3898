package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// seedHistory stores three conversations of hs and one of another user.
// The simulator lists them in random order (9.2–9.5).
func seedHistory(e *hsEnv) {
	e.srv.PutConversation("", "a2a-old", "audit-agent", "hs", "Audit of last month", hsBase,
		hsRound("audit last month", "All clear.", ""))
	e.srv.PutConversation("", "a2a-new", "elastic-ai-agent", "hs", "Errors\tyesterday", hsBase.Add(2*time.Hour),
		hsRound("errors?", "1234 errors.", ""))
	e.srv.PutConversation("", "ui-conv", "elastic-ai-agent", "hs", "Started in Kibana", hsBase.Add(time.Hour+500*time.Millisecond),
		hsRound("hello", "Hi.", ""))
	e.srv.PutConversation("", "a2a-theirs", "elastic-ai-agent", "someone-else", "Not yours", hsBase.Add(3*time.Hour))
}

func TestHistory(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V92))
	seedHistory(e)
	empty := newHSEnv(t, hsOptions(agentbuildertest.V95))
	unconfigured := newHSEnv(t, hsOptions(agentbuildertest.V95))
	delete(unconfigured.env, "KIBANA_URL")

	const tsv = "a2a-new\tErrors yesterday\telastic-ai-agent\t2026-11-03T12:00:00Z\n" +
		"ui-conv\tStarted in Kibana\telastic-ai-agent\t2026-11-03T11:00:00.5Z\n" +
		"a2a-old\tAudit of last month\taudit-agent\t2026-11-03T10:00:00Z\n"
	const table = "" +
		"╭─────────┬─────────────────────┬──────────────────┬──────────────────────╮\n" +
		"│ ID      │ TITLE               │ AGENT            │ UPDATED              │\n" +
		"├─────────┼─────────────────────┼──────────────────┼──────────────────────┤\n" +
		"│ a2a-new │ Errors yesterday    │ elastic-ai-agent │ 2026-11-03 12:00 UTC │\n" +
		"│ ui-conv │ Started in Kibana   │ elastic-ai-agent │ 2026-11-03 11:00 UTC │\n" +
		"│ a2a-old │ Audit of last month │ audit-agent      │ 2026-11-03 10:00 UTC │\n" +
		"╰─────────┴─────────────────────┴──────────────────┴──────────────────────╯\n"
	const jsonAll = `{
  "conversations": [
    {
      "id": "a2a-new",
      "context_id": "new",
      "title": "Errors\tyesterday",
      "agent_id": "elastic-ai-agent",
      "updated_at": "2026-11-03T12:00:00Z"
    },
    {
      "id": "ui-conv",
      "title": "Started in Kibana",
      "agent_id": "elastic-ai-agent",
      "updated_at": "2026-11-03T11:00:00.5Z"
    },
    {
      "id": "a2a-old",
      "context_id": "old",
      "title": "Audit of last month",
      "agent_id": "audit-agent",
      "updated_at": "2026-11-03T10:00:00Z"
    }
  ],
  "total": 3
}
`
	cases := []struct {
		name     string
		env      *hsEnv
		tty      bool
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{"piped: tab-separated, newest first, no header", e, false, []string{"history"}, tsv, "", 0},
		{"terminal: a table", e, true, []string{"history"}, table, "", 0},
		{"json", e, false, []string{"history", "--json"}, jsonAll, "", 0},
		{"json on a terminal is the same document", e, true, []string{"--json", "history"}, jsonAll, "", 0},
		{"limit", e, false, []string{"history", "--limit", "2"}, strings.Join(strings.SplitAfter(tsv, "\n")[:2], ""),
			"2 of 3 conversations, newest first; --limit 0 lists all\n", 0},
		{"limit 0 lists all", e, false, []string{"history", "--limit", "0"}, tsv, "", 0},
		{"limit with json: total says more exist, stderr stays quiet", e, false, []string{"history", "--limit", "1", "--json"},
			"{\n  \"conversations\": [\n    {\n      \"id\": \"a2a-new\",\n      \"context_id\": \"new\",\n      \"title\": \"Errors\\tyesterday\",\n      \"agent_id\": \"elastic-ai-agent\",\n      \"updated_at\": \"2026-11-03T12:00:00Z\"\n    }\n  ],\n  \"total\": 3\n}\n", "", 0},
		{"agent filter", e, false, []string{"history", "--agent", "audit-agent"}, "a2a-old\tAudit of last month\taudit-agent\t2026-11-03T10:00:00Z\n", "", 0},
		{"no conversations", empty, false, []string{"history"}, "", fmt.Sprintf("no conversations in %s (space default)\n", empty.srv.URL), 0},
		{"no conversations of an agent", empty, false, []string{"history", "--agent", "audit-agent"}, "", fmt.Sprintf("no conversations with agent audit-agent in %s (space default)\n", empty.srv.URL), 0},
		{"an agent that is none", e, false, []string{"history", "--agent", "nobody"}, "", fmt.Sprintf("a2a-courier: agent nobody is unknown in %s (space default)\n"+
			"hint: check the id; `a2a-courier discover` lists the agents of this space\n", e.srv.URL), ExitNotFound},
		{"an agent id in other letters", e, false, []string{"history", "--agent", "Audit-Agent", "--json"}, fmt.Sprintf("{\n  \"error\": {\n    \"code\": \"not_found\",\n"+
			"    \"message\": \"agent Audit-Agent is unknown in %s (space default)\",\n"+
			"    \"hint\": \"did you mean audit-agent (named \\\"Audit Analyst\\\")? `a2a-courier discover` lists the agents of this space\"\n  }\n}\n", e.srv.URL), "", ExitNotFound},
		{"no conversations, json", empty, false, []string{"history", "--json"}, "{\n  \"conversations\": [],\n  \"total\": 0\n}\n", "", 0},
		{"negative limit", e, false, []string{"history", "--limit", "-1"}, "",
			"a2a-courier: --limit must not be negative\nhint: use a positive number, or 0 to list all\n", 2},
		{"bad agent id", e, false, []string{"history", "--agent", "../x"}, "",
			"a2a-courier: invalid agent id \"../x\": use letters, digits and . _ ~ : @ + - (at most 255, not starting with '.')\nhint: agent ids are listed by `a2a-courier discover`\n", 2},
		{"an argument", e, false, []string{"history", "a2a-new"}, "",
			"a2a-courier: history takes no arguments, and 1 argument was given\nhint: usage: a2a-courier history [flags]\n", 2},
		{"bad limit, json", e, false, []string{"history", "--limit", "x", "--json"},
			"{\n  \"error\": {\n    \"code\": \"usage\",\n    \"message\": \"invalid argument \\\"x\\\" for \\\"--limit\\\" flag: strconv.ParseInt: parsing \\\"x\\\": invalid syntax\",\n    \"hint\": \"run `a2a-courier history --help` for its flags\"\n  }\n}\n", "", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hsCheck(t, tc.name, tc.env.run(t, tc.tty, tc.args...), tc.wantOut, tc.wantErr, tc.wantCode)
		})
	}
	t.Run("not configured", func(t *testing.T) {
		t.Parallel()
		r := unconfigured.run(t, false, "history")
		if r.code != ExitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "a2a-courier: not configured: KIBANA_URL not set\n") {
			t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		t.Parallel()
		bad := newHSEnv(t, hsOptions(agentbuildertest.V95))
		bad.env["KIBANA_API_KEY"] = "bm9wZTpub3Bl"
		r := bad.run(t, false, "history", "--json")
		if r.code != ExitAuth || !strings.Contains(r.stdout, `"code": "auth"`) || r.stderr != "" {
			t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// On a terminal the list fits the terminal's width: the title gives way,
// cut with an ellipsis, and ids stay whole; when too little would be left
// of the title, each conversation takes two lines, the title on the second.
func TestHistoryFitsTheTerminal(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V95))
	const long, short = "a2a-3f6c2e1a-1b2c-4d5e-8f90-123456789abc", "0193c2d4-7e1f-7a3b-9c4d-5e6f7a8b9c0d"
	e.srv.PutConversation("", long, "elastic-ai-agent", "hs", "High-risk operations report for the last thirty days, by user and index",
		hsBase, hsRound("x", "y", ""))
	e.srv.PutConversation("", short, "audit-agent", "hs", "Errors", hsBase.Add(time.Hour), hsRound("x", "y", ""))
	for _, tc := range []struct {
		width int
		want  string
	}{
		{80, "" +
			"ID                                        AGENT             UPDATED\n" +
			"  TITLE\n" +
			short + "      audit-agent       2026-11-03 11:00 UTC\n" +
			"  Errors\n" +
			long + "  elastic-ai-agent  2026-11-03 10:00 UTC\n" +
			"  High-risk operations report for the last thirty days, by user and index\n"},
		{60, "" +
			"ID                                        AGENT             UPDATED\n" +
			"  TITLE\n" +
			short + "      audit-agent       2026-11-03 11:00 UTC\n" +
			"  Errors\n" +
			long + "  elastic-ai-agent  2026-11-03 10:00 UTC\n" +
			"  High-risk operations report for the last thirty days, by…\n"},
		{120, "" +
			"╭──────────────────────────────────────────┬─────────────────────────────────┬──────────────────┬──────────────────────╮\n" +
			"│ ID                                       │ TITLE                           │ AGENT            │ UPDATED              │\n" +
			"├──────────────────────────────────────────┼─────────────────────────────────┼──────────────────┼──────────────────────┤\n" +
			"│ " + short + "     │ Errors                          │ audit-agent      │ 2026-11-03 11:00 UTC │\n" +
			"│ " + long + " │ High-risk operations report fo… │ elastic-ai-agent │ 2026-11-03 10:00 UTC │\n" +
			"╰──────────────────────────────────────────┴─────────────────────────────────┴──────────────────┴──────────────────────╯\n"},
	} {
		e.width = tc.width
		r := e.run(t, true, "history")
		if r.code != 0 || r.stdout != tc.want || r.stderr != "" {
			t.Errorf("width %d: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tc.width, r.code, r.stderr, r.stdout, tc.want)
		}
		for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			// The ids (40 columns) and the time stay whole even at 60.
			if w := len([]rune(l)); w > max(tc.width, 80) {
				t.Errorf("width %d: a line of %d columns: %q", tc.width, w, l)
			}
		}
	}
}

// TestHistoryFollowsPages lists a 9.6 server's 2500 conversations, 1000 a
// page, up to the limit.
func TestHistoryFollowsPages(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V96))
	for i := 0; i < 2500; i++ {
		e.srv.PutConversation("", fmt.Sprintf("a2a-%04d", i), "elastic-ai-agent", "hs", fmt.Sprintf("Conversation %d", i), hsBase.Add(time.Duration(i)*time.Minute))
	}
	for _, tc := range []struct {
		limit     string
		wantLines int
		wantLast  string
		wantErr   string
	}{
		{"0", 2500, "a2a-0000", ""},
		{"1500", 1500, "a2a-1000", "1500 of 2500 conversations, newest first; --limit 0 lists all\n"},
		{"20", 20, "a2a-2480", "20 of 2500 conversations, newest first; --limit 0 lists all\n"},
	} {
		r := e.run(t, false, "history", "--limit", tc.limit)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != tc.wantLines || r.stderr != tc.wantErr {
			t.Fatalf("--limit %s: exit %d, %d lines, stderr %q", tc.limit, r.code, len(lines), r.stderr)
		}
		if !strings.HasPrefix(lines[0], "a2a-2499\t") || !strings.HasPrefix(lines[len(lines)-1], tc.wantLast+"\t") {
			t.Fatalf("--limit %s: first %q last %q", tc.limit, lines[0], lines[len(lines)-1])
		}
		var doc historyDoc
		r = e.run(t, false, "history", "--limit", tc.limit, "--json")
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || r.stderr != "" {
			t.Fatalf("--limit %s --json: %v, exit %d, stderr %q", tc.limit, err, r.code, r.stderr)
		}
		if len(doc.Conversations) != tc.wantLines || doc.Total != 2500 || doc.Conversations[0].ID != "a2a-2499" {
			t.Fatalf("--limit %s --json: %d conversations, total %d", tc.limit, len(doc.Conversations), doc.Total)
		}
	}
}

// TestHistoryWarnsWhenTheUnpagedListIsFull: 9.2–9.5 return at most 1000
// conversations in no order, so the newest may be missing.
func TestHistoryWarnsWhenTheUnpagedListIsFull(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V94))
	for i := 0; i < 1001; i++ {
		e.srv.PutConversation("", fmt.Sprintf("a2a-%04d", i), "elastic-ai-agent", "hs", "t", hsBase.Add(time.Duration(i)*time.Minute))
	}
	const warning = "warning: the server returned its maximum of 1000 conversations, in no order: the newest may be missing\n"
	r := e.run(t, false, "history", "--limit", "3", "--json")
	var doc historyDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || r.stderr != warning || len(doc.Conversations) != 3 || doc.Total != 1000 {
		t.Fatalf("exit %d, stderr %q, %d conversations, total %d, %v", r.code, r.stderr, len(doc.Conversations), doc.Total, err)
	}
}
