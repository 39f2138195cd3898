package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// The helpers of the history and show tests: a simulator on loopback, an
// environment and a state directory of the test's own, and cli.Run in
// process with the streams captured.

const hsKey = "aHM6dGVzdC1rZXk=" // base64 of hs:test-key

// hsBase is the base time of the conversations the tests store.
var hsBase = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

// hsOptions is a simulator with a quick agent and a "large-step" agent
// whose rounds carry reasoning, two tool calls and large tool results.
func hsOptions(v agentbuildertest.Version) agentbuildertest.Options {
	return agentbuildertest.Options{
		Version: v,
		Keys:    []agentbuildertest.Key{{APIKey: hsKey, Username: "hs"}},
		Agents: []agentbuildertest.Agent{
			{ID: "elastic-ai-agent", Name: "Elastic AI Agent", Reply: "Echo: {{input}}", RunTime: time.Millisecond},
			{ID: "audit-agent", Name: "Audit Analyst", Tools: []string{"platform.core.search", "platform.core.execute_esql", "security.audit.risk_score"},
				Reply: "Report for “{{input}}”:\n1. 14 privilege escalations.\n2. No deletions.", RunTime: time.Millisecond, ToolResultBytes: 256 << 10},
		},
	}
}

type hsEnv struct {
	srv      *agentbuildertest.Server
	stateDir string
	env      map[string]string
	// width is the terminal's width; 0 means 100.
	width int
}

func newHSEnv(t *testing.T, opts agentbuildertest.Options) *hsEnv {
	t.Helper()
	srv := agentbuildertest.NewServer(opts)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &hsEnv{srv: srv, stateDir: dir, env: map[string]string{
		"KIBANA_URL": srv.URL, "KIBANA_API_KEY": hsKey, "A2A_COURIER_STATE_DIR": dir, "HOME": dir,
	}}
}

type hsResult struct {
	stdout, stderr string
	code           int
}

// run executes one command line; tty makes stdout and stderr terminals of
// e.width (else 100) columns.
func (e *hsEnv) run(t *testing.T, tty bool, args ...string) hsResult {
	t.Helper()
	var out, errb bytes.Buffer
	width := e.width
	if width == 0 {
		width = 100
	}
	p := &Process{
		Args: args, Stdout: &out, Stderr: &errb,
		StdoutTTY: tty, StderrTTY: tty,
		TermWidth: func() int { return width },
		LookupEnv: func(k string) (string, bool) { v, ok := e.env[k]; return v, ok },
		Executable: func() (string, error) {
			t.Fatal("history and show must not start a worker")
			return "", nil
		},
	}
	code := Run(context.Background(), p)
	return hsResult{stdout: out.String(), stderr: errb.String(), code: code}
}

// hsRound builds a stored round as Kibana returns it, with a reasoning
// step and a tool call that carry the markers; reply "\x00" leaves the
// response out.
func hsRound(input, reply, status string) json.RawMessage {
	m := map[string]any{
		"id": "r-" + input, "input": map[string]string{"message": input},
		"steps": []map[string]any{
			{"type": "reasoning", "reasoning": agentbuildertest.ReasoningMarker + " thinking about " + input},
			{"type": "tool_call", "tool_call_id": "t1", "tool_id": "platform.core.search", "params": map[string]string{"query": input},
				"progression": []map[string]string{{"message": agentbuildertest.ProgressMarker + " searching"}},
				"results":     []map[string]any{{"type": "other", "data": map[string]string{"rows": agentbuildertest.ToolResultMarker + " rows"}}}},
		},
		"started_at": hsBase.Format(time.RFC3339Nano),
	}
	switch {
	case status == "awaiting_prompt":
		// As Kibana stores it: the question in pending_prompts, no reply.
		m["response"] = map[string]string{"message": ""}
		m["pending_prompts"] = []map[string]string{{"id": "p1", "type": "confirmation", "title": "Confirmation required", "message": reply}}
	case reply != "\x00":
		m["response"] = map[string]string{"message": reply}
	}
	if status != "" {
		m["status"] = status
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// sendRound runs the agent for real through the simulator's A2A endpoint,
// so the stored round is what the simulator's agents write.
func (e *hsEnv) sendRound(t *testing.T, agent, contextID, text string) {
	t.Helper()
	k, err := client.NewKibana(client.KibanaConfig{URL: e.srv.URL, APIKey: hsKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.SendMessage(context.Background(), agent, client.OutgoingMessage{Text: text, MessageID: "m-" + text, ContextID: contextID, Blocking: true}); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func hsCheck(t *testing.T, name string, got hsResult, wantOut, wantErr string, wantCode int) {
	t.Helper()
	if got.code != wantCode || got.stdout != wantOut || got.stderr != wantErr {
		t.Errorf("%s:\n exit %d, want %d\n stdout %q\n   want %q\n stderr %q\n   want %q", name, got.code, wantCode, got.stdout, wantOut, got.stderr, wantErr)
	}
}

var hsMarkers = []string{agentbuildertest.ReasoningMarker, agentbuildertest.ToolResultMarker, agentbuildertest.ProgressMarker}

func hsNoMarkers(t *testing.T, name string, r hsResult) {
	t.Helper()
	for _, m := range hsMarkers {
		if strings.Contains(r.stdout, m) || strings.Contains(r.stderr, m) {
			t.Errorf("%s: %s reached the output", name, m)
		}
	}
}
