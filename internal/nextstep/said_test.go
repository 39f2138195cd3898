package nextstep

import "testing"

// A text says its steps and flags to people as command lines and flags,
// and to the MCP server's tools (Caller.Tool) as the tools and arguments
// that do the same: one value, rendered per caller, nothing rewritten.
func TestSaidToTools(t *testing.T) {
	result := New("result").Pos("c-1")
	for _, tc := range []struct {
		text          Text
		people, tools string
	}{
		{Say("that is a conversation id: its contextId is c-1 (%s)", result),
			"that is a conversation id: its contextId is c-1 (a2a-courier result c-1)",
			`that is a conversation id: its contextId is c-1 (the result tool with context_id "c-1")`},
		{Say("%s lists the conversations; to start a new conversation, leave out %s", New("history").Quoted(), Opt("--context")),
			"`a2a-courier history` lists the conversations; to start a new conversation, leave out --context",
			"the history tool lists the conversations; to start a new conversation, leave out context_id"},
		{Say("%s goes on with that conversation", New("send").Pos("audit-agent").Flag("--context", "c-1").Quoted()),
			"`a2a-courier send audit-agent --context c-1` goes on with that conversation",
			`the send tool with agent "audit-agent" and context_id "c-1" goes on with that conversation`},
		{Say("wait for it: %s", result.Bool("--wait")), "wait for it: a2a-courier result c-1 --wait",
			`wait for it: the result tool with context_id "c-1" and wait_seconds`},
		{Say("resume with: %s", result.Bool("--wait").Flag("--timeout", "30s").Flag("--profile", "sim").Bool("--json")),
			"resume with: a2a-courier result c-1 --wait --timeout 30s --profile sim --json",
			`resume with: the result tool with context_id "c-1" and wait_seconds 30`},
		{Say("the worker did not start: boom (%s to retry)", result.Bool("--wait").Run()),
			"the worker did not start: boom (run `a2a-courier result c-1 --wait` to retry)",
			`the worker did not start: boom (call the result tool with context_id "c-1" and wait_seconds to retry)`},
		{Say("answer: %s", New("send").Pos("audit-agent").Flag("--context", "c-1").ReadsStdin()),
			"answer: a2a-courier send audit-agent --context c-1 -",
			`answer: the send tool with agent "audit-agent", context_id "c-1" and the text as message`},
		{Say("add %s or the peer's name", OptHole("--url", "agent URL")), "add --url <agent URL> or the peer's name",
			"add url <agent URL> or the peer's name"},
		{Say("name the agent: %s, or %s", New("fetch").Flag("--task", "t-1").Hole("", "peer"), OptHole("--url", "agent URL")),
			"name the agent: a2a-courier fetch --task t-1 <peer>, or --url <agent URL>",
			`name the agent: the fetch tool with task_id "t-1" and agent <peer>, or url <agent URL>`},
		{Say("if they are right, %s to check", New("doctor").Run()), "if they are right, run `a2a-courier doctor` to check",
			"if they are right, run `a2a-courier doctor` in a terminal to check"},
		{Say("see %s", New("config").Pos("show").Quoted()), "see `a2a-courier config show`", "see run `a2a-courier config show` in a terminal"},
		{Say("wait for them: %s", New("result").Pos("a").Pos("b").Bool("--wait").Bool("--any")),
			"wait for them: a2a-courier result a b --wait --any", `wait for them: the result tool with context_ids ["a", "b"], wait_seconds and any`},
		{Say("%s (without %s) lists them", New("tasks").Quoted(), Opt("--url")), "`a2a-courier tasks` (without --url) lists them",
			"the tasks tool (without url) lists them"},
		{Say("show it: %s, then", New("show").Pos("it's").Bool("--all-rounds")), `show it: a2a-courier show 'it'\''s' --all-rounds, then`,
			`show it: the show tool with conversation "it's" and all_rounds, then`},
		{Say("canceled by its task id and agent: %s", New("cancel").Hole("", "taskId").Pos("lab")),
			"canceled by its task id and agent: a2a-courier cancel <taskId> lab",
			`canceled by its task id and agent: the cancel tool with context_id <taskId> and url (the URL of peer "lab")`},
		{Say("%s and %s cannot be sent", Opt("--file"), Opt("--data")), "--file and --data cannot be sent", "files and data cannot be sent"},
		{Say("pass %s", ContextIDFrom("send-async")), "pass the contextId printed by send-async", "pass the context_id that the send or send_async tool returned"},
		{Say("followed for 38.5s more (%s), then", MaxWait("40s")), "followed for 38.5s more (--max-wait 40s), then",
			"followed for 38.5s more (its maximum wait of 40s, set on the command line (--max-wait) or in the config file (max_wait)), then"},
		{Say("%s has run out", ItsMaxWait("2h")), "its --max-wait (2h) has run out",
			"its maximum wait (2h, set on the command line (--max-wait) or in the config file (max_wait)) has run out"},
		{Plain("no command here: --wait-timeout stays"), "no command here: --wait-timeout stays", "no command here: --wait-timeout stays"},
	} {
		if got := (Caller{}).Text(tc.text); got != tc.people {
			t.Errorf("to people\n got %q\nwant %q", got, tc.people)
		}
		if got := (Caller{Tool: true}).Text(tc.text); got != tc.tools {
			t.Errorf("to the tools\n got %q\nwant %q", got, tc.tools)
		}
	}
}
