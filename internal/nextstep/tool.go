package nextstep

import (
	"strconv"
	"time"
)

// ToolCommand is the MCP tool that does what a command does, and the
// tool's names of the command's positional arguments.
type ToolCommand struct {
	Tool        string
	Positionals []string
}

// Tools are the commands the MCP server serves as tools (internal/mcpserver),
// by command.
var Tools = map[string]ToolCommand{
	"send":       {"send", []string{"agent", "message"}},
	"send-async": {"send_async", []string{"agent", "message"}},
	"result":     {"result", []string{"context_id"}},
	"fetch":      {"fetch", []string{"context_id", "agent"}},
	"show":       {"show", []string{"conversation"}},
	"cancel":     {"cancel", []string{"context_id", "url"}},
	"get-card":   {"get_card", []string{"agent"}},
	"discover":   {"discover", nil},
	"history":    {"history", nil},
	"tasks":      {"tasks", nil},
}

// ToolFlags are the tool's names of the flags that are tool arguments;
// the others (--json, the connection flags, which the server's own command
// line sets) are no tool's.
var ToolFlags = map[string]string{
	"--context": "context_id", "--task": "task_id", "--url": "url", "--max-chars": "max_chars",
	"--wait": "wait_seconds", "--timeout": "wait_seconds", "--limit": "limit", "--agent": "agent",
	"--state": "state", "--any": "any", "--all-rounds": "all_rounds", "--round": "round",
	"--file": "files", "--data": "data",
}

// Call is a step in MCP tool terms: the tool and its arguments as a call
// gives them. Args holds strings, but for the numbers (wait_seconds,
// max_chars, limit, round), the booleans (any, all_rounds) and the list
// of context_ids of a result of several tasks. Stdin is a step whose
// message the tool takes as its message argument.
type Call struct {
	Tool  string
	Args  map[string]any
	Stdin bool
}

// Tool is s as the MCP tool call that does the same; ok false for a
// command no tool serves (run it in a terminal).
func (s Step) Tool() (Call, bool) {
	cmd, ok := Tools[s.Command]
	if !ok {
		return Call{}, false
	}
	c := Call{Tool: cmd.Tool, Args: map[string]any{}, Stdin: s.Stdin}
	names := cmd.Positionals
	if s.Command == "fetch" && s.Names("--task") {
		names = []string{"agent"} // fetch --task T <peer>
	}
	var ids []string
	positional := 0
	for _, a := range s.Args {
		switch {
		case a.Flag == "" && s.Command == "result" && positional > 0:
			ids = append(ids, a.Value)
		case a.Flag == "":
			if positional < len(names) && !a.Hole {
				c.Args[names[positional]] = a.Value
			}
			positional++
		case a.Hole:
		default:
			if name := ToolFlags[a.Flag]; name != "" && a.Flag != "--wait" {
				// --wait is the tools' way: they wait by wait_seconds.
				c.Args[name] = toolValue(a)
			}
		}
	}
	if len(ids) > 0 {
		c.Args["context_ids"] = append([]string{c.Args["context_id"].(string)}, ids...)
		delete(c.Args, "context_id")
	}
	if _, ok := c.Args["wait_seconds"]; ok && s.Command != "result" && s.Command != "send" {
		delete(c.Args, "wait_seconds")
	}
	return c, true
}

// toolValue is a flag's value as a tool argument.
func toolValue(a Arg) any {
	switch a.Flag {
	case "--any", "--all-rounds":
		return true
	case "--timeout":
		if d, err := time.ParseDuration(a.Value); err == nil {
			return d.Seconds()
		}
	case "--max-chars", "--limit", "--round":
		if n, err := strconv.Atoi(a.Value); err == nil {
			return n
		}
	}
	return a.Value
}
