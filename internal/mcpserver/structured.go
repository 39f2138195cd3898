package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/nextstep"
)

// A command's --json document names its next steps as command lines
// (resume, answer). An MCP client runs no shell, so the document a tool
// returns as structuredContent keeps the command's field names, with
// resume and answer as the tool call that does it: {"tool": "result",
// "arguments": {"context_id": "…", "wait_seconds": 45}}; answer's call
// takes the user's answer as its message, which it leaves out. A command
// no tool runs (none today) would be {"run_in_terminal": "…"}.
//
// Everything else is the document as the command wrote it: the command
// ran with its caller the MCP server (nextstep.Caller.Tool), so its texts
// (message, hint, reason, note, setup) say their steps and flags in tool
// terms already, and nothing here rewrites them.

// nextCall is a tool call that does what a command line of a document
// does.
type nextCall struct {
	Tool      string         `json:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	// RunInTerminal is a command line no tool runs.
	RunInTerminal string `json:"run_in_terminal,omitempty"`
}

// structured is a command's document as a tool's structuredContent (see
// above); a document that is not a JSON object is returned as it is.
func (t *tools) structured(doc json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber() // numbers as written
	var m map[string]any
	if d.Decode(&m) != nil || m == nil {
		return doc
	}
	t.inToolTerms(m)
	if tasks, ok := m["tasks"].([]any); ok && m["source"] == nil {
		for _, task := range tasks { // result with several tasks
			if tm, ok := task.(map[string]any); ok {
				t.inToolTerms(tm)
			}
		}
	}
	return m
}

// inToolTerms makes the command lines of one document (resume, answer)
// the tool calls that do them.
func (t *tools) inToolTerms(m map[string]any) {
	for _, k := range []string{"resume", "answer"} {
		if s, ok := m[k].(string); ok && s != "" {
			m[k] = t.callOf(s)
		}
	}
}

// boolFlags are the flags that take no value.
var boolFlags = map[string]bool{"--wait": true, "--json": true, "--any": true, "--all-rounds": true, "--dry-run": true,
	"--help": true, "-h": true, "-v": true, "--verbose": true, "--progress": true, "--no-stream": true, "--force": true}

// callPositionals name the positional arguments of a command line as its
// tool's arguments: fetch's second (a peer) is agent, and after --task
// its first.
var callPositionals = map[string][]string{
	"send": {"agent"}, "send_async": {"agent"}, "result": {"context_id"}, "fetch": {"context_id", "agent"},
	"show": {"conversation"}, "cancel": {"context_id"}, "get_card": {"agent"},
}

// callFlags are the flags of a command line that are its tool's
// arguments, and the kind of value each takes: a string, a whole number,
// seconds (--timeout), or none (true). The others (--json, --progress,
// the connection flags the server's own command line sets) are left out.
var callFlags = map[string]struct{ arg, kind string }{
	"--context": {"context_id", "string"}, "--task": {"task_id", "string"}, "--url": {"url", "string"},
	"--agent": {"agent", "string"}, "--state": {"state", "string"},
	"--max-chars": {"max_chars", "int"}, "--limit": {"limit", "int"}, "--round": {"round", "int"},
	"--timeout": {"wait_seconds", "seconds"}, "--wait": {"wait_seconds", "wait"},
	"--any": {"any", "bool"}, "--all-rounds": {"all_rounds", "bool"},
}

// callOf is the tool call that does what a document's command line does:
// its tool, and its words as the tool's arguments. `--wait` alone waits
// the server's default wait. "-" (stdin) is the message, left out.
func (t *tools) callOf(command string) nextCall {
	terminal := nextCall{RunInTerminal: command}
	words := shellWords(command)
	if len(words) < 2 || words[0] != "a2a-courier" {
		return terminal
	}
	tool := nextstep.Tools[words[1]].Tool
	if tool == "" {
		return terminal
	}
	args := map[string]any{}
	var positionals []string
	for i := 2; i < len(words); i++ {
		w := words[i]
		if w == "-" || !strings.HasPrefix(w, "-") {
			if w != "-" {
				positionals = append(positionals, w)
			}
			continue
		}
		flag, v, hasValue := strings.Cut(w, "=")
		f, known := callFlags[flag]
		if !hasValue && (!known || f.kind != "bool" && f.kind != "wait") && !boolFlags[flag] && i+1 < len(words) {
			i++
			v = words[i]
		}
		if !known {
			continue
		}
		switch f.kind {
		case "string":
			args[f.arg] = v
		case "int":
			n, err := strconv.Atoi(v)
			if err != nil {
				return terminal
			}
			args[f.arg] = n
		case "seconds":
			d, err := time.ParseDuration(v)
			if err != nil {
				return terminal
			}
			args[f.arg] = d.Seconds()
		case "wait":
			if _, set := args[f.arg]; !set {
				args[f.arg] = t.o.DefaultWait.Seconds()
			}
		case "bool":
			args[f.arg] = true
		}
	}
	names := callPositionals[tool]
	if tool == "fetch" && args["task_id"] != nil {
		names = []string{"agent"} // fetch --task T <peer>
	}
	switch {
	case tool == "result" && len(positionals) > 1:
		args["context_ids"] = positionals
	case len(positionals) > len(names):
		return terminal
	default:
		for i, p := range positionals {
			args[names[i]] = p
		}
	}
	return nextCall{Tool: tool, Arguments: args}
}
