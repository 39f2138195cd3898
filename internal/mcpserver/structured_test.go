package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// plainJSON is v as JSON without HTML escapes (<url> as is).
func plainJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return string(bytes.TrimSpace(b.Bytes()))
}

// The command lines of documents as the tool calls that do the same: the
// forms the CLI writes in resume and answer (with the flags a tool's
// command line has, --json, --progress, --timeout), and a command no tool
// runs.
func TestCallOf(t *testing.T) {
	tl := &tools{o: Options{DefaultWait: 45 * time.Second}}
	for command, want := range map[string]string{
		"a2a-courier result c-1 --wait --timeout 45s --progress --json":            `{"tool":"result","arguments":{"context_id":"c-1","wait_seconds":45}}`,
		"a2a-courier result c-1 --wait":                                            `{"tool":"result","arguments":{"context_id":"c-1","wait_seconds":45}}`,
		"a2a-courier result c-1 --timeout 1m30s --wait --json":                     `{"tool":"result","arguments":{"context_id":"c-1","wait_seconds":90}}`,
		"a2a-courier result a b --wait --any --timeout 2s --progress --json":       `{"tool":"result","arguments":{"any":true,"context_ids":["a","b"],"wait_seconds":2}}`,
		"a2a-courier fetch c-1 --json":                                             `{"tool":"fetch","arguments":{"context_id":"c-1"}}`,
		"a2a-courier fetch c-1 --url 'http://h/it'\\''s' --json":                   `{"tool":"fetch","arguments":{"context_id":"c-1","url":"http://h/it's"}}`,
		"a2a-courier fetch c-1 lab --json":                                         `{"tool":"fetch","arguments":{"agent":"lab","context_id":"c-1"}}`,
		"a2a-courier fetch --task t-1 lab --json":                                  `{"tool":"fetch","arguments":{"agent":"lab","task_id":"t-1"}}`,
		"a2a-courier show a2a-c-1 --round 3 --json":                                `{"tool":"show","arguments":{"conversation":"a2a-c-1","round":3}}`,
		"a2a-courier send audit-agent --context c-1 --timeout 30s --json -":        `{"tool":"send","arguments":{"agent":"audit-agent","context_id":"c-1","wait_seconds":30}}`,
		"a2a-courier send --url http://a/x --task t-1 --progress --json -":         `{"tool":"send","arguments":{"task_id":"t-1","url":"http://a/x"}}`,
		"a2a-courier send lab --task 't 1' --profile prod --kibana-url http://k -": `{"tool":"send","arguments":{"agent":"lab","task_id":"t 1"}}`,
		"a2a-courier doctor":                                                       `{"run_in_terminal":"a2a-courier doctor"}`,
		"a2a-courier show a b":                                                     `{"run_in_terminal":"a2a-courier show a b"}`,
		"a2a-courier result c-1 --timeout soon":                                    `{"run_in_terminal":"a2a-courier result c-1 --timeout soon"}`,
	} {
		if b := plainJSON(tl.callOf(command)); b != want {
			t.Errorf("%s\n got %s\nwant %s", command, b, want)
		}
	}
}

// structuredContent keeps the document's fields, with resume and answer
// as tool calls; its texts are as the command said them to the server
// (nextstep.Caller.Tool: in tool terms already), never rewritten, even
// where they look like a shell's: the reply, the ledger's rows and the
// numbers are as they were.
func TestStructuredInToolTerms(t *testing.T) {
	tl := &tools{o: Options{DefaultWait: 45 * time.Second}}
	for doc, want := range map[string]string{
		`{"context_id":"c-1","state":"working","resume":"a2a-courier result c-1 --wait --timeout 45s --progress --json","reply_chars":12345678901234567890}`:                                `{"context_id":"c-1","reply_chars":12345678901234567890,"resume":{"tool":"result","arguments":{"context_id":"c-1","wait_seconds":45}},"state":"working"}`,
		`{"context_id":"c-1","state":"input_required","reply":"run a2a-courier doctor?","answer":"a2a-courier send asks --context c-1 --json -"}`:                                           `{"answer":{"tool":"send","arguments":{"agent":"asks","context_id":"c-1"}},"context_id":"c-1","reply":"run a2a-courier doctor?","state":"input_required"}`,
		`{"error":{"code":"not_found","message":"no agent x","hint":"check the id; the discover tool lists the agents of this space","setup":["a2a-courier config set kibana-url <url>"]}}`: `{"error":{"code":"not_found","hint":"check the id; the discover tool lists the agents of this space","message":"no agent x","setup":["a2a-courier config set kibana-url <url>"]}}`,
		`{"context_id":"c-1","state":"working","reason":"leave out --context","note":"see a2a-courier tasks","last_error":{"code":"x","message":"--url","hint":"a2a-courier fetch c-1"}}`:   `{"context_id":"c-1","last_error":{"code":"x","hint":"a2a-courier fetch c-1","message":"--url"},"note":"see a2a-courier tasks","reason":"leave out --context","state":"working"}`,
		`{"tasks":[{"context_id":"a","state":"working","resume":"a2a-courier result a --wait"}],"pending":["a"],"resume":"a2a-courier result a --wait --any"}`:                              `{"pending":["a"],"resume":{"tool":"result","arguments":{"any":true,"context_id":"a","wait_seconds":45}},"tasks":[{"context_id":"a","resume":{"tool":"result","arguments":{"context_id":"a","wait_seconds":45}},"state":"working"}]}`,
		`{"source":"local","tasks":[{"context_id":"a","summary":"a2a-courier result a","reason":"--context"}]}`:                                                                             `{"source":"local","tasks":[{"context_id":"a","reason":"--context","summary":"a2a-courier result a"}]}`,
	} {
		if b := plainJSON(tl.structured(json.RawMessage(doc))); b != want {
			t.Errorf("%s\n got %s\nwant %s", doc, b, want)
		}
	}
	if got := tl.structured(json.RawMessage(`[1]`)); string(got.(json.RawMessage)) != `[1]` {
		t.Errorf("not an object: %v", got)
	}
}
