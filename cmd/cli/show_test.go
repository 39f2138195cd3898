package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/store"
)

const showCtx = "3f6c2e1a-0b7d-4c59-9d0e-2a1b3c4d5e6f"

// seedShow stores the conversations the show tests read.
func seedShow(e *hsEnv) {
	e.srv.PutConversation("", "a2a-"+showCtx, "elastic-ai-agent", "hs", "Errors", hsBase,
		hsRound("How many errors?", "1234 errors.", "completed"),
		hsRound("And warnings?", "56 warnings.\nMostly disk space.", "completed"))
	e.srv.PutConversation("", "ui-conv", "elastic-ai-agent", "hs", "From the UI", hsBase, hsRound("hello", "Hi there.", ""))
	e.srv.PutConversation("", "a2a-running", "audit-agent", "hs", "Running", hsBase,
		hsRound("first", "First answer.", "completed"), hsRound("second", "\x00", "in_progress"))
	e.srv.PutConversation("", "a2a-awaiting", "audit-agent", "hs", "Awaiting", hsBase,
		hsRound("delete the index?", "Confirm the deletion of index logs-1?", "awaiting_prompt"))
	e.srv.PutConversation("", "a2a-answered", "audit-agent", "hs", "Answered", hsBase,
		hsRound("delete the index?", "Confirm the deletion of index logs-1?", "awaiting_prompt"),
		hsRound("confirm", "Deleted logs-1.", "completed"))
	e.srv.PutConversation("", "a2a-failed", "audit-agent", "hs", "Failed", hsBase, hsRound("boom", "\x00", "failed"))
	e.srv.PutConversation("", "a2a-noreply", "audit-agent", "hs", "No reply", hsBase, hsRound("quiet", "\x00", "completed"))
	e.srv.PutConversation("", "a2a-empty", "elastic-ai-agent", "hs", "[A2A] a2a-empty", hsBase)
	e.srv.PutConversation("", "a2a-emptyreply", "elastic-ai-agent", "hs", "Empty reply", hsBase, hsRound("say nothing", "", ""))
}

func TestShow(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V95))
	seedShow(e)
	conv := "a2a-" + showCtx
	const notFoundHint = "hint: `a2a-courier history` lists your conversations in this space; Kibana stores a conversation only once its first round completes, and only for the API key's user\n"
	allRoundsText := "[round 1 of 2: input]\nHow many errors?\n[round 1 of 2: reply]\n1234 errors.\n" +
		"[round 2 of 2: input]\nAnd warnings?\n[round 2 of 2: reply]\n56 warnings.\nMostly disk space.\n"
	allRoundsJSON := fmt.Sprintf(`{
  "conversation_id": %q,
  "agent_id": "elastic-ai-agent",
  "title": "Errors",
  "round_count": 2,
  "rounds": [
    {
      "round": 1,
      "input": "How many errors?",
      "reply": "1234 errors.",
      "status": "completed"
    },
    {
      "round": 2,
      "input": "And warnings?",
      "reply": "56 warnings.\nMostly disk space.",
      "status": "completed"
    }
  ]
}
`, conv)
	cases := []struct {
		name     string
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{"contextId: the last round's reply", []string{"show", showCtx}, "56 warnings.\nMostly disk space.\n", "", 0},
		{"conversation id", []string{"show", conv}, "56 warnings.\nMostly disk space.\n", "", 0},
		{"round 1", []string{"show", showCtx, "--round", "1"}, "1234 errors.\n", "", 0},
		{"a conversation started in Kibana", []string{"show", "ui-conv"}, "Hi there.\n", "", 0},
		{"json", []string{"show", showCtx, "--json"},
			fmt.Sprintf("{\n  \"conversation_id\": %q,\n  \"agent_id\": \"elastic-ai-agent\",\n  \"title\": \"Errors\",\n  \"round\": 2,\n  \"reply\": \"56 warnings.\\nMostly disk space.\",\n  \"status\": \"completed\",\n  \"round_count\": 2\n}\n", conv), "", 0},
		{"json, round 1", []string{"show", conv, "--json", "--round=1"},
			fmt.Sprintf("{\n  \"conversation_id\": %q,\n  \"agent_id\": \"elastic-ai-agent\",\n  \"title\": \"Errors\",\n  \"round\": 1,\n  \"reply\": \"1234 errors.\",\n  \"status\": \"completed\",\n  \"round_count\": 2\n}\n", conv), "", 0},
		{"json, a round without status (9.2)", []string{"show", "ui-conv", "--json"},
			"{\n  \"conversation_id\": \"ui-conv\",\n  \"agent_id\": \"elastic-ai-agent\",\n  \"title\": \"From the UI\",\n  \"round\": 1,\n  \"reply\": \"Hi there.\",\n  \"round_count\": 1\n}\n", "", 0},
		{"all rounds", []string{"show", showCtx, "--all-rounds"}, allRoundsText, "", 0},
		{"all rounds, json", []string{"show", showCtx, "--all-rounds", "--json"}, allRoundsJSON, "", 0},
		{"round out of range", []string{"show", showCtx, "--round", "3"}, "",
			fmt.Sprintf("a2a-courier: conversation %s has 2 rounds; there is no round 3\nhint: use --round 1 to 2, or leave --round out for the last round\n", conv), 5},
		{"round out of range, json", []string{"show", showCtx, "--round", "7", "--json"},
			fmt.Sprintf("{\n  \"error\": {\n    \"code\": \"not_found\",\n    \"message\": \"conversation %s has 2 rounds; there is no round 7\",\n    \"hint\": \"use --round 1 to 2, or leave --round out for the last round\"\n  }\n}\n", conv), "", 5},
		{"round out of range, one round", []string{"show", "ui-conv", "--round", "5"}, "",
			"a2a-courier: conversation ui-conv has 1 round; there is no round 5\nhint: the conversation has 1 round: leave --round out (or use --round 1) to show it\n", 5},
		{"no such conversation", []string{"show", "0000-nope"}, "",
			"a2a-courier: conversation not found in space default: neither a2a-0000-nope (contextId 0000-nope) nor 0000-nope exists\n" + notFoundHint, 5},
		{"no such conversation id", []string{"show", "a2a-nope"}, "", "a2a-courier: conversation a2a-nope not found in space default\n" + notFoundHint, 5},
		{"round still in progress", []string{"show", "a2a-running"}, "",
			"round 2 of conversation a2a-running is still in progress: no reply yet; look again later: a2a-courier show a2a-running\n", 8},
		{"round still in progress, json", []string{"show", "a2a-running", "--json"},
			"{\n  \"conversation_id\": \"a2a-running\",\n  \"agent_id\": \"audit-agent\",\n  \"title\": \"Running\",\n  \"round\": 2,\n  \"status\": \"in_progress\",\n  \"round_count\": 2,\n" +
				"  \"reason\": \"round 2 of conversation a2a-running is still in progress: no reply yet\",\n  \"resume\": \"a2a-courier show a2a-running --json\"\n}\n", "", 8},
		{"an earlier round of a running conversation", []string{"show", "a2a-running", "--round", "1"}, "First answer.\n", "", 0},
		{"all rounds of a running conversation", []string{"show", "a2a-running", "--all-rounds"},
			"[round 1 of 2: input]\nfirst\n[round 1 of 2: reply]\nFirst answer.\n[round 2 of 2: input]\nsecond\n[round 2 of 2: no reply yet, still in progress]\n",
			"the last round is still in progress; look again later: a2a-courier show a2a-running --all-rounds\n", 8},
		{"awaiting a prompt", []string{"show", "a2a-awaiting"}, "Confirm the deletion of index logs-1?\n",
			"the agent awaits an answer or a confirmation (round 1 of conversation a2a-awaiting).\n" +
				"answer in the same conversation (the answer on stdin): a2a-courier send audit-agent --context awaiting -\n", 7},
		{"awaiting a prompt, json", []string{"show", "a2a-awaiting", "--json"},
			"{\n  \"conversation_id\": \"a2a-awaiting\",\n  \"agent_id\": \"audit-agent\",\n  \"title\": \"Awaiting\",\n  \"round\": 1,\n  \"reply\": \"Confirm the deletion of index logs-1?\",\n  \"status\": \"awaiting_prompt\",\n  \"round_count\": 1\n}\n", "", 7},
		{"awaiting a prompt, all rounds", []string{"show", "a2a-awaiting", "--all-rounds"},
			"[round 1 of 1: input]\ndelete the index?\n[round 1 of 1: reply, awaiting an answer or a confirmation]\nConfirm the deletion of index logs-1?\n",
			"the agent awaits an answer or a confirmation (round 1 of conversation a2a-awaiting).\n" +
				"answer in the same conversation (the answer on stdin): a2a-courier send audit-agent --context awaiting -\n", 7},
		{"a prompt a later round answered", []string{"show", "a2a-answered", "--round", "1"}, "Confirm the deletion of index logs-1?\n",
			"the agent asked this, and round 2 answered it\n", 0},
		{"failed round", []string{"show", "a2a-failed"}, "",
			"a2a-courier: round 1 of conversation a2a-failed failed (status failed) and holds no reply\nhint: a failed run keeps no reply; sending the message again starts a new run\n", 6},
		{"finished round without a reply", []string{"show", "a2a-noreply"}, "",
			"a2a-courier: round 1 of conversation a2a-noreply holds no reply (status completed)\nhint: the server stored the round without a final reply; open the conversation in Kibana to see what happened\n", 1},
		{"no round yet", []string{"show", "a2a-empty"}, "",
			"conversation a2a-empty has no round yet: its first run may still be going, or it failed (Kibana 9.6 keeps no round of a failed run); a2a-courier result empty tells which, on the machine that sent it; look again later: a2a-courier show a2a-empty\n", 8},
		{"no round yet, all rounds, json", []string{"show", "a2a-empty", "--all-rounds", "--json"},
			"{\n  \"conversation_id\": \"a2a-empty\",\n  \"agent_id\": \"elastic-ai-agent\",\n  \"title\": \"[A2A] a2a-empty\",\n  \"round_count\": 0,\n  \"rounds\": []\n}\n", "", 8},
		{"an empty reply is a reply", []string{"show", "a2a-emptyreply"}, "", "warning: the agent's reply is empty\n", 0},
		{"invalid argument", []string{"show", "../etc/passwd"}, "",
			"a2a-courier: invalid conversation id or contextId \"../etc/passwd\": use letters, digits and . _ ~ : @ + - (at most 255, not starting with '.')\n" +
				"hint: pass a conversation id listed by `a2a-courier history`, or a contextId printed by send\n", 2},
		{"invalid argument, json", []string{"show", "a b", "--json"},
			"{\n  \"error\": {\n    \"code\": \"usage\",\n    \"message\": \"invalid conversation id or contextId \\\"a b\\\": use letters, digits and . _ ~ : @ + - (at most 255, not starting with '.')\",\n" +
				"    \"hint\": \"pass a conversation id listed by `a2a-courier history`, or a contextId printed by send\"\n  }\n}\n", "", 2},
		{"round 0", []string{"show", showCtx, "--round", "0"}, "",
			"a2a-courier: --round must be 1 or more\nhint: rounds count from 1; leave --round out for the last round\n", 2},
		{"round and all rounds", []string{"show", showCtx, "--round", "1", "--all-rounds"}, "",
			"a2a-courier: --round and --all-rounds exclude each other\nhint: use one of them\n", 2},
		{"negative max-chars", []string{"show", showCtx, "--max-chars", "-3"}, "",
			"a2a-courier: --max-chars must not be negative\nhint: use a positive number, or 0 for the whole reply\n", 2},
		{"no argument", []string{"show"}, "",
			"a2a-courier: show needs a conversation id (see `a2a-courier history`) or a contextId\nhint: usage: a2a-courier show <conversationId|contextId> [flags]\n", 2},
	}
	for _, tc := range cases {
		for _, tty := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tty=%v", tc.name, tty), func(t *testing.T) {
				t.Parallel()
				hsCheck(t, tc.name, e.run(t, tty, tc.args...), tc.wantOut, tc.wantErr, tc.wantCode)
			})
		}
	}
}

// TestShowMaxChars: a cut reply ends with a marker naming a private file
// in the state directory that holds the whole reply.
func TestShowMaxChars(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V95))
	reply := "Ünïcode first: " + strings.Repeat("0123456789", 20)
	e.srv.PutConversation("", "a2a-long", "elastic-ai-agent", "hs", "Long", hsBase,
		hsRound("short question", "Round one.", "completed"), hsRound(strings.Repeat("q", 30), reply, "completed"))
	replies := filepath.Join(e.stateDir, "replies")
	file := filepath.Join(replies, "a2a-long.round-2.txt")
	total := len([]rune(reply))

	r := e.run(t, false, "show", "long", "--max-chars", "12")
	hsCheck(t, "text", r, fmt.Sprintf("Ünïcode firs\n[… reply cut at 12 of %d characters; the whole reply is in %s]\n", total, file), "", 0)
	checkPrivateFile(t, file, reply)

	r = e.run(t, true, "show", "a2a-long", "--max-chars", "12", "--json")
	want := fmt.Sprintf("{\n  \"conversation_id\": \"a2a-long\",\n  \"agent_id\": \"elastic-ai-agent\",\n  \"title\": \"Long\",\n  \"round\": 2,\n  \"reply\": \"Ünïcode firs\\n[… reply cut at 12 of %d characters; the whole reply is in %s]\",\n"+
		"  \"reply_truncated\": true,\n  \"reply_chars\": %d,\n  \"reply_file\": %q,\n  \"status\": \"completed\",\n  \"round_count\": 2\n}\n", total, strings.Trim(fmt.Sprintf("%q", file), `"`), total, file)
	hsCheck(t, "json", r, want, "", 0)

	// Not cut: no marker, no file.
	hsCheck(t, "short enough", e.run(t, false, "show", "long", "--round", "1", "--max-chars", "10"), "Round one.\n", "", 0)
	if _, err := os.Stat(filepath.Join(replies, "a2a-long.round-1.txt")); !os.IsNotExist(err) {
		t.Errorf("a reply that was not cut was saved: %v", err)
	}

	// All rounds: each input and reply is cut on its own.
	r = e.run(t, false, "show", "long", "--all-rounds", "--max-chars", "12")
	inputFile := filepath.Join(replies, "a2a-long.round-2.input.txt")
	hsCheck(t, "all rounds", r, "[round 1 of 2: input]\nshort questi\n"+
		fmt.Sprintf("[… input cut at 12 of 14 characters; the whole input is in %s]\n", filepath.Join(replies, "a2a-long.round-1.input.txt"))+
		"[round 1 of 2: reply]\nRound one.\n"+
		"[round 2 of 2: input]\nqqqqqqqqqqqq\n"+
		fmt.Sprintf("[… input cut at 12 of 30 characters; the whole input is in %s]\n", inputFile)+
		"[round 2 of 2: reply]\nÜnïcode firs\n"+
		fmt.Sprintf("[… reply cut at 12 of %d characters; the whole reply is in %s]\n", total, file), "", 0)
	checkPrivateFile(t, inputFile, strings.Repeat("q", 30))

	var doc showAllDoc
	r = e.run(t, false, "show", "long", "--all-rounds", "--max-chars", "12", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("all rounds json: %v, exit %d", err, r.code)
	}
	if rd := doc.Rounds[1]; !rd.ReplyTruncated || rd.ReplyFile != file || rd.ReplyChars != total || !rd.InputTruncated || rd.InputFile != inputFile || rd.InputChars != 30 {
		t.Errorf("round 2 = %+v", rd)
	}
	if rd := doc.Rounds[0]; rd.ReplyTruncated || rd.ReplyFile != "" || *rd.Reply != "Round one." {
		t.Errorf("round 1 = %+v", rd)
	}
	if p := ownfiletest.DirProblem(replies); p != "" {
		t.Errorf("replies directory: %s", p)
	}
}

func checkPrivateFile(t *testing.T, path, want string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the whole text was not saved: %v", err)
	}
	if p := ownfiletest.FileProblem(path); p != "" {
		t.Errorf("%s is not private: %s", path, p)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("%s holds %q, want %q", path, b, want)
	}
}

// TestResultAndFetchMaxChars: --max-chars on result and fetch cuts the
// reply the same way.
func TestResultAndFetchMaxChars(t *testing.T) {
	t.Parallel()
	e := newHSEnv(t, hsOptions(agentbuildertest.V95))
	reply := strings.Repeat("abcdefghij", 10)
	e.srv.PutConversation("", "a2a-"+showCtx, "elastic-ai-agent", "hs", "Fetched", hsBase, hsRound("q", reply, "completed"))
	file := filepath.Join(e.stateDir, "replies", showCtx+".txt")
	want := fmt.Sprintf("abcdefg\n[… reply cut at 7 of 100 characters; the whole reply is in %s]\n", file)
	hsCheck(t, "fetch", e.run(t, false, "fetch", showCtx, "--max-chars", "7"), want, "", 0)
	checkPrivateFile(t, file, reply)
	os.Remove(file)

	const local = "9e1f0c2a-1111-4222-8333-944455556666"
	st, err := store.Open(e.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	plantRecord(t, st, &store.Record{ContextID: local, Agent: "elastic-ai-agent", State: store.Completed, Reply: reply, FinishedAt: &now})
	file = filepath.Join(e.stateDir, "replies", local+".txt")
	want = fmt.Sprintf("abcdefg\n[… reply cut at 7 of 100 characters; the whole reply is in %s]\n", file)
	hsCheck(t, "result", e.run(t, false, "result", local, "--max-chars", "7"), want, "", 0)
	checkPrivateFile(t, file, reply)
	r := e.run(t, false, "result", local, "--max-chars", "7", "--json")
	var doc taskDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !doc.ReplyTruncated || doc.ReplyFile != file || doc.ReplyChars != 100 || *doc.Reply != strings.TrimSuffix(want, "\n") {
		t.Errorf("result --json: %v %+v", err, doc)
	}
}

// TestNoReasoningOrToolOutput runs the simulator's large-step agent for
// real (reasoning, three tool calls with 256 KiB results each, progression
// messages) and seeds a 4 MB conversation, then checks that no marker of
// those steps reaches stdout or stderr of history and show, in any mode.
func TestNoReasoningOrToolOutput(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V92, agentbuildertest.V96} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			opts := hsOptions(v)
			opts.Seed = []agentbuildertest.SeedConversation{{ID: "a2a-seeded", AgentID: "audit-agent", Rounds: 8, Bytes: 4 << 20, Title: "Seeded"}}
			e := newHSEnv(t, opts)
			e.sendRound(t, "audit-agent", showCtx, "high-risk operations this week")
			e.sendRound(t, "audit-agent", showCtx, "and last week")
			for _, id := range []string{"a2a-" + showCtx, "a2a-seeded"} {
				doc, _ := e.srv.ConversationJSON("", id)
				for _, m := range hsMarkers {
					if !strings.Contains(string(doc), m) {
						t.Fatalf("%s does not hold %s: the test would prove nothing", id, m)
					}
				}
			}
			wantReply := "Report for “and last week”:\n1. 14 privilege escalations.\n2. No deletions.\n"
			cases := []struct {
				args []string
				want string // a part stdout must hold
			}{
				{[]string{"history"}, "a2a-seeded"},
				{[]string{"history", "--json"}, `"a2a-seeded"`},
				{[]string{"history", "--agent", "audit-agent", "--limit", "0"}, "a2a-" + showCtx},
				{[]string{"show", showCtx}, wantReply},
				{[]string{"show", showCtx, "--json"}, `"round": 2`},
				{[]string{"show", showCtx, "--round", "1"}, "Report for “high-risk operations this week”"},
				{[]string{"show", showCtx, "--all-rounds"}, "[round 2 of 2: reply]\n" + wantReply},
				{[]string{"show", showCtx, "--all-rounds", "--json"}, `"input": "and last week"`},
				{[]string{"show", "a2a-seeded"}, "Answer to question 8.\n"},
				{[]string{"show", "seeded", "--json", "--max-chars", "5"}, `"reply_truncated": true`},
				{[]string{"show", "seeded", "--all-rounds"}, "[round 8 of 8: reply]\nAnswer to question 8.\n"},
				{[]string{"show", "seeded", "--all-rounds", "--json"}, `"round_count": 8`},
			}
			for _, tc := range cases {
				for _, tty := range []bool{false, true} {
					name := fmt.Sprintf("%s tty=%v", strings.Join(tc.args, " "), tty)
					r := e.run(t, tty, tc.args...)
					if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
						t.Errorf("%s: exit %d, stdout %q lacks %q (stderr %q)", name, r.code, r.stdout, tc.want, r.stderr)
					}
					hsNoMarkers(t, name, r)
				}
			}
			if r := e.run(t, false, "show", showCtx); r.stdout != wantReply || r.stderr != "" {
				t.Errorf("show: stdout %q stderr %q: text mode prints the reply and a newline, nothing else", r.stdout, r.stderr)
			}
		})
	}
}

// TestShowOfALocalTask: show of a task this machine sent says "still
// running" (exit 8) while Kibana has not stored its conversation, and
// points a generic agent's task to result.
func TestShowOfALocalTask(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Agents[1].RunTime = 3 * time.Second })
	p := newProc(t, sim)
	defer p.waitWorkersExit()
	r := p.run("send-async", "audit-agent", "a long one", "--poll-interval", "100ms")
	r.expect(t, ExitOK)
	ctxID := strings.TrimSpace(r.stdout)
	r = p.run("show", ctxID, "--json")
	r.expect(t, ExitStillRunning)
	var doc showDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Status != "in_progress" ||
		!strings.Contains(doc.Reason, "still") || doc.Resume != "a2a-courier result "+ctxID+" --wait --json" {
		t.Fatalf("%v %+v", err, doc)
	}
	r = p.run("result", ctxID, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	r = p.run("show", ctxID)
	r.expect(t, ExitOK)
	if r.stdout != "Report for a long one: 14 escalations.\n" {
		t.Fatalf("stdout %q", r.stdout)
	}

	st := p.store()
	now := time.Now().UTC()
	plantRecord(t, st, &store.Record{ContextID: "5b0e7c1e-7f3a-4c55-9d5e-2f0c3c8e9a11", Agent: "research", State: store.Completed,
		Target: store.Target{Kind: "a2a", URL: "http://127.0.0.1:9/a2a"}, Reply: "r", FinishedAt: &now})
	r = p.run("show", "5b0e7c1e-7f3a-4c55-9d5e-2f0c3c8e9a11")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "generic A2A agent") || !strings.Contains(r.stderr, "a2a-courier result 5b0e7c1e") {
		t.Fatalf("stderr %q", r.stderr)
	}
}
