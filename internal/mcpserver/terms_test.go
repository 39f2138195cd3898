package mcpserver

import "testing"

// The commands' hints, as the CLI writes them, in tool terms.
func TestToolTerms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"that is a conversation id: its contextId is c-1 (a2a-courier result c-1)",
			`that is a conversation id: its contextId is c-1 (the result tool with context_id "c-1")`},
		{"`a2a-courier history` lists the conversations (the contextId is the id after \"a2a-\"); to start a new conversation, leave out --context",
			`the history tool lists the conversations (the contextId is the id after "a2a-"); to start a new conversation, leave out context_id`},
		{"that is a conversation id: its contextId is c-1 (--context c-1)", "that is a conversation id: its contextId is c-1 (context_id c-1)"},
		{"`a2a-courier send audit-agent --context c-1` goes on with that conversation; leave out --context to start a new one with other",
			`the send tool with agent "audit-agent" and context_id "c-1" goes on with that conversation; leave out context_id to start a new one with other`},
		{"`a2a-courier result c-1` shows its outcome; to ask something new, send a new message",
			`the result tool with context_id "c-1" shows its outcome; to ask something new, send a new message`},
		{"wait for it: a2a-courier result c-1 --wait", `wait for it: the result tool with context_id "c-1" and wait_seconds`},
		{"resume with: a2a-courier result c-1 --wait --timeout 30s --profile sim --json",
			`resume with: the result tool with context_id "c-1" and wait_seconds 30`},
		{"task c-1 is recorded but the background worker did not start: boom (run `a2a-courier result c-1 --wait` to retry)",
			`task c-1 is recorded but the background worker did not start: boom (call the result tool with context_id "c-1" and wait_seconds to retry)`},
		{"answer in the same conversation (the answer on stdin): a2a-courier send audit-agent --context c-1 -",
			`answer in the same conversation (the answer as message): the send tool with agent "audit-agent", context_id "c-1" and the text as message`},
		{"fetch reads Kibana's conversation store; for a task sent to another A2A agent, add --url <agent URL> or the peer's name",
			"fetch reads Kibana's conversation store; for a task sent to another A2A agent, add url <agent URL> or the peer's name"},
		{"for a task started elsewhere, name the agent: a2a-courier fetch --task t-1 <peer>, or --url <agent URL>",
			`for a task started elsewhere, name the agent: the fetch tool with task_id "t-1" and agent <peer>, or url <agent URL>`},
		{"Agent Builder cannot stop a run: it may go on, and `a2a-courier fetch c-1` can still read its reply",
			`Agent Builder cannot stop a run: it may go on, and the fetch tool with context_id "c-1" can still read its reply`},
		{"conversation a2a-empty has no round yet; a2a-courier result empty tells which, on the machine that sent it; look again later: a2a-courier show a2a-empty.",
			`conversation a2a-empty has no round yet; the result tool with context_id "empty" tells which, on the machine that sent it; look again later: the show tool with conversation "a2a-empty".`},
		{"if they are right, run `a2a-courier doctor` to check that KIBANA_URL is a Kibana with Agent Builder",
			"if they are right, run `a2a-courier doctor` in a terminal to check that KIBANA_URL is a Kibana with Agent Builder"},
		{"set it from stdin: a2a-courier config set api-key < key-file --profile prod",
			"set it from stdin: run `a2a-courier config set api-key < key-file --profile prod` in a terminal"},
		{"check the id; `a2a-courier discover` lists the agents of this space", "check the id; the discover tool lists the agents of this space"},
		{"wait for them: a2a-courier result a b --wait --any", `wait for them: the result tool with context_ids ["a", "b"], wait_seconds and any`},
		{"a2a-courier stopped following it; --wait-timeout stays", "a2a-courier stopped following it; --wait-timeout stays"},
		{"`a2a-courier tasks` (without --url) lists the tasks sent from this machine", "the tasks tool (without url) lists the tasks sent from this machine"},
		{"show it: a2a-courier show 'it'\\''s' --all-rounds, then", `show it: the show tool with conversation "it's" and all_rounds, then`},
		{"`a2a-courier tasks` lists this machine's tasks; a task started elsewhere is canceled by its task id and agent: a2a-courier cancel <taskId> lab, or --url <agent URL>",
			`the tasks tool lists this machine's tasks; a task started elsewhere is canceled by its task id and agent: the cancel tool with context_id <taskId> and url (the URL of peer "lab"), or url <agent URL>`},
		{"a finished task cannot be canceled; `a2a-courier result c-1` shows it", `a finished task cannot be canceled; the result tool with context_id "c-1" shows it`},
		{"Agent Builder agents take text only: --file and --data cannot be sent to them; nothing was sent",
			"Agent Builder agents take text only: files and data cannot be sent to them; nothing was sent"},
		{"no reply yet; on this release a failed run leaves no trace (Kibana 9.5.1 stores no failed run, and the connection that would have carried its failure ended): it is followed for 38.5s more (--max-wait 40s), then it ends expired",
			"no reply yet; on this release a failed run leaves no trace (Kibana 9.5.1 stores no failed run, and the connection that would have carried its failure ended): it is followed for 38.5s more " +
				"(its maximum wait of 40s, set on the command line (--max-wait) or in the config file (max_wait)), then it ends expired"},
		{"its --max-wait (2h) has run out: it ends expired at the next look",
			"its maximum wait (2h, set on the command line (--max-wait) or in the config file (max_wait)) has run out: it ends expired at the next look"},
		{"refused 3 times; past the task's maximum wait (--max-wait)", "refused 3 times; past the task's maximum wait (set on the command line (--max-wait) or in the config file (max_wait))"},
		{"less than 5s of the task's --max-wait; then the task ends rejected",
			"less than 5s of the task's maximum wait (set on the command line (--max-wait) or in the config file (max_wait)); then the task ends rejected"},
		{"--poll-interval, --max-wait and --timeout must be positive",
			"--poll-interval, the maximum wait (set on the command line (--max-wait) or in the config file (max_wait)) and wait_seconds must be positive"},
		{"pass the contextId printed by send-async", "pass the context_id that the send or send_async tool returned"},
		{"pass the contextId printed by send-async, or a task id", "pass the context_id that the send or send_async tool returned, or a task id"},
		{"no command here: 14 escalations", "no command here: 14 escalations"},
	} {
		if got := toolTerms(tc.in); got != tc.want {
			t.Errorf("%q\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// The summary says the command's texts in tool terms, never the agent's
// reply, which is as the agent wrote it.
func TestSummaryInToolTerms(t *testing.T) {
	reply := `{"context_id":"c-1","state":"completed","reply":"run a2a-courier result c-1 --wait, then leave out --context"}`
	if got := (&tools{}).summary([]byte(reply), exitOK, "result"); got != "run a2a-courier result c-1 --wait, then leave out --context" {
		t.Errorf("reply: %q", got)
	}
	failed := `{"context_id":"c-1","state":"failed","error":{"code":"not_cancelable","message":"task c-1 finished before the cancel took effect: it is completed","hint":"a finished task cannot be canceled; ` +
		"`a2a-courier result c-1`" + ` shows it"}}`
	if got := (&tools{}).summary([]byte(failed), 6, "cancel"); got != "task c-1 finished before the cancel took effect: it is completed\nhint: a finished task cannot be canceled; the result tool with context_id \"c-1\" shows it" {
		t.Errorf("error: %q", got)
	}
	canceled := `{"context_id":"c-1","state":"canceled","reason":"canceled on request; Agent Builder cannot stop a run: it may go on, and ` + "`a2a-courier fetch c-1`" + ` can still read its reply"}`
	if got := (&tools{}).summary([]byte(canceled), exitOK, "cancel"); got != `task c-1: canceled: canceled on request; Agent Builder cannot stop a run: it may go on, and the fetch tool with context_id "c-1" can still read its reply` {
		t.Errorf("reason: %q", got)
	}
}
