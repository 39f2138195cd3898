package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// instructions is what the server tells an assistant once, at connection.
const instructions = `a2a-courier hands work to remote AI agents over A2A (Elastic Kibana Agent Builder agents first) and brings back the final reply only.

Sync or async: look at the agent, not at the question. Agents that use tools heavily (search, ES|QL, log or audit analysis) take minutes even for a one-line question: use send_async, then result with wait_seconds, repeated while its state is not final. Light chat agents answer in seconds: send is fine. When unsure, use send_async. A wrong choice loses nothing: when send's wait runs out it returns state "working" and the context_id, and the task goes on in a background worker.

Never send the same request again after a timeout or a "working" state: call result (or fetch) with the context_id. Sending again runs the whole analysis twice. Keep the context_id of every task you start: it is the only handle on the reply.`

// agentRef is how a tool names the agent: an id or a peer's name, or a URL.
type agentRef struct {
	Agent string `json:"agent,omitempty" jsonschema:"the agent: a Kibana Agent Builder agent id (listed by discover) or the name of a peer of the config file; leave empty when url is given"`
	URL   string `json:"url,omitempty" jsonschema:"a generic A2A agent's base URL (its card at <url>/.well-known/agent-card.json) or its card's URL, instead of agent"`
}

func (a agentRef) args() ([]string, *argError) {
	switch {
	case a.Agent != "" && a.URL != "":
		return nil, refuse("agent names a Kibana agent or a peer of the config file, url a generic A2A agent: give one of them", "give agent or url, not both")
	case a.Agent == "" && a.URL == "":
		return nil, refuse("call discover to list the agents", "name the agent (agent, as listed by discover) or give its url")
	}
	if err := positional("agent", a.Agent); err != nil {
		return nil, err
	}
	return agentArgs(a.Agent, a.URL), nil
}

// argError is a tool argument refused before anything runs: a tool error
// with its message and a hint, as the command line's usage errors.
type argError struct{ message, hint string }

func refuse(hint, format string, a ...any) *argError {
	return &argError{message: fmt.Sprintf(format, a...), hint: hint}
}

func (e *argError) result() (*mcp.CallToolResult, any, error) {
	return toolError("usage", e.message, e.hint)
}

// positional checks a tool argument that becomes a word of the command
// line on its own: one starting with '-' would be read as a flag (say
// --api-key-file, or --kibana-url of another server), so it is refused.
func positional(what string, values ...string) *argError {
	for _, v := range values {
		if strings.HasPrefix(v, "-") {
			return refuse("give the id or name as discover, tasks or an earlier result gave it: the command line's flags are not tool arguments",
				"%s %q starts with '-': ids and names never do", what, v)
		}
	}
	return nil
}

// counts checks the counting arguments (limit, max_chars): 0 or left out
// is the default, and a negative one is refused, not ignored.
func counts(limit, maxChars int) *argError {
	switch {
	case limit < 0:
		return refuse("limit counts rows, newest first: leave it out for the default (20)", "limit must be 1 or more, not %d", limit)
	case maxChars < 0:
		return refuse(fmt.Sprintf("leave it out for the default (%d characters; the whole reply stays in the file reply_file names)", DefaultMaxChars),
			"max_chars must be 1 or more, not %d", maxChars)
	}
	return nil
}

// waitSeconds refuses a negative wait_seconds (its default, def, is
// named in the hint).
func waitSeconds(w float64, def string) *argError {
	if w < 0 {
		return refuse(fmt.Sprintf("give the seconds to wait, at most 600, or leave it out for the default (%s)", def),
			"wait_seconds must not be negative, not %g", w)
	}
	return nil
}

// DefaultMaxChars is where send, result, fetch and show cut a reply by
// default (max_chars): a reply may be up to 32 MiB, and an assistant's
// context is not. The whole reply stays in the file the document names
// (reply_file), as with --max-chars.
const DefaultMaxChars = 20000

// maxChars is a tool's max_chars, or the default.
func maxChars(n int) int {
	if n == 0 {
		return DefaultMaxChars
	}
	return n
}

// noID refuses a call that names no task.
func noID(what string) *argError {
	return refuse("the context_id that send or send_async returned; the tasks tool lists the tasks started here", "give %s", what)
}

// noMessage refuses an empty message.
var noMessage = refuse("put the text for the agent in message (or send files or data with it)", "the message is empty")

type discoverIn struct {
	URL string `json:"url,omitempty" jsonschema:"list the agent at this URL instead of Kibana's agents"`
}

type getCardIn struct{ agentRef }

// parts are the files and data a message carries beside its text, as
// --file and --data give them.
type parts struct {
	Files []string          `json:"files,omitempty" jsonschema:"files of this machine to send beside the message, by absolute path (as --file: at most 10 MiB each; generic A2A agents only, not Kibana's); only from the directories the user listed in A2A_COURIER_MCP_FILES (no file without it), never a2a-courier's own configuration, keys or state"`
	Data  []json.RawMessage `json:"data,omitempty" jsonschema:"JSON values to send beside the message as data parts, one part each (as --data); generic A2A agents only"`
}

// args are the command line's flags of the parts, checked as far as the
// command line cannot: a path relative to the server's working directory,
// which the assistant does not know, is refused. The command checks the
// rest (a file that is not there or too large, an agent that takes no
// parts) and says so as a tool error.
func (p parts) args() ([]string, *argError) {
	var args []string
	for _, f := range p.Files {
		if !filepath.IsAbs(f) {
			return nil, refuse("give each file's absolute path: the server's working directory is not the assistant's", "files: %q is not an absolute path", f)
		}
		args = append(args, "--file="+f)
	}
	for _, d := range p.Data {
		args = append(args, "--data="+string(bytes.TrimSpace(d)))
	}
	return args, nil
}

func (p parts) empty() bool { return len(p.Files) == 0 && len(p.Data) == 0 }

// asSent is p with data as the client wrote it: the SDK checks the
// arguments against the schema through a map[string]any, and hands on
// numbers as float64 (12345678901234567890 would be sent as
// 12345678901234567000); --data sends a value digit for digit, and so does
// the tool.
func (p parts) asSent(req *mcp.CallToolRequest) parts {
	if len(p.Data) == 0 || req == nil || req.Params == nil {
		return p
	}
	var raw struct {
		Data []json.RawMessage `json:"data"`
	}
	if json.Unmarshal(req.Params.Arguments, &raw) == nil && len(raw.Data) == len(p.Data) {
		p.Data = raw.Data
	}
	return p
}

// schemaOf is the input schema of a tool's arguments, as the SDK infers
// it but for data's values: any JSON value (a json.RawMessage, which
// keeps the value as the client wrote it, numbers and all, would
// otherwise be an array of bytes).
func schemaOf[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}})
	if err != nil {
		panic(err) // the types of this file
	}
	return s
}

type sendIn struct {
	agentRef
	parts
	Message     string  `json:"message" jsonschema:"the message to send (it never appears in a process list); may be empty with files or data"`
	ContextID   string  `json:"context_id,omitempty" jsonschema:"continue this conversation (the context_id of an earlier task), for example to answer a Kibana agent's question"`
	TaskID      string  `json:"task_id,omitempty" jsonschema:"answer this task of a generic A2A agent that asked a question (state input_required)"`
	WaitSeconds float64 `json:"wait_seconds,omitempty" jsonschema:"how long to wait for the reply before returning state working (default 45, at most 600); the task goes on either way"`
	MaxChars    int     `json:"max_chars,omitempty" jsonschema:"cut the reply at this many characters (default 20000); the whole reply is saved to the file named in reply_file"`
}

type sendAsyncIn struct {
	agentRef
	parts
	Message   string `json:"message" jsonschema:"the message to send; may be empty with files or data"`
	ContextID string `json:"context_id,omitempty" jsonschema:"continue this conversation (the context_id of an earlier task)"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"answer this task of a generic A2A agent that asked a question"`
}

type resultIn struct {
	ContextID   string   `json:"context_id,omitempty" jsonschema:"the task's context_id"`
	ContextIDs  []string `json:"context_ids,omitempty" jsonschema:"several tasks' context_ids: with any, wait for the first to finish"`
	Any         bool     `json:"any,omitempty" jsonschema:"with context_ids: return as soon as one of them is final"`
	WaitSeconds float64  `json:"wait_seconds,omitempty" jsonschema:"wait this long for a final state (default 0: answer at once; at most 600)"`
	MaxChars    int      `json:"max_chars,omitempty" jsonschema:"cut the reply at this many characters (default 20000); the whole reply is saved to the file named in reply_file"`
}

type fetchIn struct {
	ContextID string `json:"context_id,omitempty" jsonschema:"the task's context_id: the reply is read from the server, on any machine"`
	URL       string `json:"url,omitempty" jsonschema:"a generic A2A agent's URL, for a task not sent to Kibana"`
	Agent     string `json:"agent,omitempty" jsonschema:"a peer of the config file, instead of url"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"read this task of a generic A2A agent by its id (with url or agent), instead of context_id"`
	MaxChars  int    `json:"max_chars,omitempty" jsonschema:"cut the reply at this many characters (default 20000); the whole reply is saved to the file named in reply_file"`
}

type historyIn struct {
	Agent string `json:"agent,omitempty" jsonschema:"only this agent's conversations"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 20)"`
}

type showIn struct {
	Conversation string `json:"conversation" jsonschema:"a conversation id from history, or a task's context_id"`
	Round        int    `json:"round,omitempty" jsonschema:"this round (from 1) instead of the last"`
	AllRounds    bool   `json:"all_rounds,omitempty" jsonschema:"every round's question and reply"`
	MaxChars     int    `json:"max_chars,omitempty" jsonschema:"cut each text at this many characters (default 20000); the whole text is saved to the file the cut names"`
}

type cancelIn struct {
	ID  string `json:"context_id" jsonschema:"the task's context_id (or a generic agent's task id, with url)"`
	URL string `json:"url,omitempty" jsonschema:"the generic A2A agent of a task id"`
}

type tasksIn struct {
	State string `json:"state,omitempty" jsonschema:"only tasks in this state: running (queued, sending, working), or a state name (completed, failed, input_required, …)"`
	Agent string `json:"agent,omitempty" jsonschema:"only this agent's tasks"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 20)"`
	URL   string `json:"url,omitempty" jsonschema:"list this generic A2A 1.0 agent's own tasks instead (started anywhere), by context_id and one state"`
	// ContextID keeps one context's tasks (with URL).
	ContextID string `json:"context_id,omitempty" jsonschema:"with url: only this context's tasks"`
}

func readOnly(title string) *mcp.ToolAnnotations {
	open := true
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &open}
}

func (t *tools) add(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{Name: "discover", Annotations: readOnly("List agents"),
		Description: "List the agents one can hand work to: id, name, one-line description. Start here to choose an agent."},
		func(ctx context.Context, req *mcp.CallToolRequest, in discoverIn) (*mcp.CallToolResult, any, error) {
			args := []string{"discover", "--json"}
			if in.URL != "" {
				args = append(args, "--url", in.URL)
			}
			return t.call(ctx, req, args, "", "discover")
		})
	addTool(t, s, &mcp.Tool{Name: "get_card", Annotations: readOnly("Agent card"),
		Description: "An agent's card: what it does, its skills (tools), its capabilities. Use it to judge whether a task suits the agent, and whether it is tool-heavy (then use send_async)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in getCardIn) (*mcp.CallToolResult, any, error) {
			a, aerr := in.args()
			if aerr != nil {
				return aerr.result()
			}
			return t.call(ctx, req, append(append([]string{"get-card"}, a...), "--json"), "", "get-card")
		})
	t.addTasks(s)
	t.addResult(s)
	t.addReads(s)
}

// sendArgs is the command line of send and send-async, or why not.
func sendArgs(command string, ref agentRef, p parts, message, contextID, taskID string) ([]string, *argError) {
	a, aerr := ref.args()
	if aerr != nil {
		return nil, aerr
	}
	if strings.TrimSpace(message) == "" && p.empty() {
		return nil, noMessage
	}
	flags, aerr := p.args()
	if aerr != nil {
		return nil, aerr
	}
	args := append(append(append([]string{command}, a...), "-", "--json"), flags...)
	args = appendOpt(args, "--context", contextID)
	return appendOpt(args, "--task", taskID), nil
}

// addTasks adds the tools that start and stop tasks.
func (t *tools) addTasks(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{Name: "send", InputSchema: schemaOf[sendIn](),
		Description: "Send a message and wait for the final reply, at most wait_seconds (default 45). For light chat agents that answer in seconds. " +
			"If the wait runs out the result has state \"working\" and the context_id: the task goes on in the background; call result with that context_id later. " +
			"Never call send again for the same request: that runs it twice. State input_required: the agent asks a question; answer with send, the same agent, its context_id (Kibana) or task_id (other agents) and the user's answer. " +
			"The reply is cut at max_chars (default 20000 characters); the whole reply is in the file reply_file names."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sendIn) (*mcp.CallToolResult, any, error) {
			args, aerr := sendArgs("send", in.agentRef, in.parts.asSent(req), in.Message, in.ContextID, in.TaskID)
			if aerr == nil {
				aerr = t.checkFiles(in.Files)
			}
			if aerr == nil {
				aerr = counts(0, in.MaxChars)
			}
			if aerr == nil {
				aerr = waitSeconds(in.WaitSeconds, "45")
			}
			if aerr != nil {
				return aerr.result()
			}
			args = append(args, "--timeout", t.waitFlag(in.WaitSeconds), "--progress")
			args = appendInt(args, "--max-chars", maxChars(in.MaxChars))
			return t.call(ctx, req, args, in.Message, "send")
		})
	addTool(t, s, &mcp.Tool{Name: "send_async", InputSchema: schemaOf[sendAsyncIn](),
		Description: "Send a message in the background and return its context_id at once (state queued). For agents that use tools heavily (search, ES|QL, analysis: minutes even for a one-line question), and when unsure. " +
			"Then call result with the context_id and wait_seconds, repeated while the state is not final. The task survives this conversation, a closed assistant and a dropped connection."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sendAsyncIn) (*mcp.CallToolResult, any, error) {
			args, aerr := sendArgs("send-async", in.agentRef, in.parts.asSent(req), in.Message, in.ContextID, in.TaskID)
			if aerr == nil {
				aerr = t.checkFiles(in.Files)
			}
			if aerr != nil {
				return aerr.result()
			}
			return t.call(ctx, req, args, in.Message, "send-async")
		})
	addTool(t, s, &mcp.Tool{Name: "cancel",
		Description: "Cancel a task: ask the agent to stop it and stop following it. Kibana's agents cannot be stopped over A2A: the run may still finish, and fetch can read it."},
		func(ctx context.Context, req *mcp.CallToolRequest, in cancelIn) (*mcp.CallToolResult, any, error) {
			if in.ID == "" {
				return noID("context_id").result()
			}
			if aerr := positional("context_id", in.ID); aerr != nil {
				return aerr.result()
			}
			args := appendOpt([]string{"cancel", in.ID, "--json"}, "--url", in.URL)
			return t.call(ctx, req, args, "", "cancel")
		})
}

// addResult adds the tool that follows tasks started here.
func (t *tools) addResult(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{Name: "result",
		Description: "The outcome of a task started here (send or send_async), by context_id: the reply once completed; with wait_seconds, wait for it (at most 600 s), then return state working if it is still running (it is still followed and nothing is sent again: call again later; a note says when a failed run would leave no trace). " +
			"With context_ids and any: wait for the first of several tasks to finish. The reply is cut at max_chars (default 20000 characters); the whole reply is in the file reply_file names."},
		func(ctx context.Context, req *mcp.CallToolRequest, in resultIn) (*mcp.CallToolResult, any, error) {
			ids := in.ContextIDs
			if in.ContextID != "" {
				ids = append([]string{in.ContextID}, ids...)
			}
			aerr := counts(0, in.MaxChars)
			if aerr == nil {
				aerr = waitSeconds(in.WaitSeconds, "0: answer at once")
			}
			switch {
			case len(ids) == 0:
				aerr = noID("context_id (or context_ids)")
			case aerr == nil:
				aerr = positional("context_id", ids...)
			}
			if aerr != nil {
				return aerr.result()
			}
			args := append(append([]string{"result"}, ids...), "--json")
			if in.WaitSeconds > 0 {
				args = append(args, "--wait", "--timeout", t.waitFlag(in.WaitSeconds), "--progress")
			}
			if in.Any {
				args = append(args, "--any")
			}
			args = appendInt(args, "--max-chars", maxChars(in.MaxChars))
			return t.call(ctx, req, args, "", "result")
		})
}

// fetchArgs is fetch's command line, or why not.
func fetchArgs(in fetchIn) ([]string, *argError) {
	if aerr := counts(0, in.MaxChars); aerr != nil {
		return nil, aerr
	}
	var args []string
	switch {
	case in.TaskID != "" && in.ContextID != "":
		return nil, refuse("task_id (with url) reads a generic agent's task by its id; context_id reads a task by its context: give one of them",
			"give context_id or task_id, not both")
	case in.TaskID != "":
		args = []string{"fetch", "--task", in.TaskID}
	case in.ContextID == "":
		return nil, noID("context_id (or task_id with url)")
	default:
		if aerr := positional("context_id", in.ContextID); aerr != nil {
			return nil, aerr
		}
		args = []string{"fetch", in.ContextID}
	}
	switch {
	case in.Agent != "" && in.URL != "":
		return nil, refuse("agent names a peer of the config file, url a generic A2A agent: give one of them", "give agent or url, not both")
	case in.Agent != "":
		if aerr := positional("agent", in.Agent); aerr != nil {
			return nil, aerr
		}
		args = append(args, in.Agent)
	}
	args = append(args, "--json")
	args = appendOpt(args, "--url", in.URL)
	return appendInt(args, "--max-chars", maxChars(in.MaxChars)), nil
}

// addReads adds the tools that only read: the server's conversations and
// tasks, and the local ledger.
func (t *tools) addReads(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{Name: "fetch", Annotations: readOnly("Fetch a reply"),
		Description: "Read a task's reply from the server by context_id alone: on another machine, after local state was lost, or after a task expired. It never sends anything. State working means the server has no reply yet (look again later, a few times, then tell the user). " +
			"The reply is cut at max_chars (default 20000 characters); the whole reply is in the file reply_file names."},
		func(ctx context.Context, req *mcp.CallToolRequest, in fetchIn) (*mcp.CallToolResult, any, error) {
			args, aerr := fetchArgs(in)
			if aerr != nil {
				return aerr.result()
			}
			return t.call(ctx, req, args, "", "fetch")
		})
	addTool(t, s, &mcp.Tool{Name: "history", Annotations: readOnly("Past conversations"),
		Description: "Past conversations: id, title, agent, time, newest first; no content. Cheap: look here first, then show the one you need."},
		func(ctx context.Context, req *mcp.CallToolRequest, in historyIn) (*mcp.CallToolResult, any, error) {
			if aerr := counts(in.Limit, 0); aerr != nil {
				return aerr.result()
			}
			args := appendInt([]string{"history", "--json"}, "--limit", in.Limit)
			args = appendOpt(args, "--agent", in.Agent)
			return t.call(ctx, req, args, "", "history")
		})
	addTool(t, s, &mcp.Tool{Name: "show", Annotations: readOnly("Show a reply"),
		Description: "The final reply of one past conversation (the last round by default); never reasoning or tool output. all_rounds gives every round's question and reply. " +
			"Each text is cut at max_chars (default 20000 characters); the whole text is in the file the cut names."},
		func(ctx context.Context, req *mcp.CallToolRequest, in showIn) (*mcp.CallToolResult, any, error) {
			aerr := counts(0, in.MaxChars)
			switch {
			case in.Conversation == "":
				aerr = refuse("history lists the conversations; a task's context_id works too", "give conversation (an id from history, or a context_id)")
			case aerr == nil:
				aerr = positional("conversation", in.Conversation)
			}
			if aerr != nil {
				return aerr.result()
			}
			args := []string{"show", in.Conversation, "--json"}
			args = appendInt(args, "--round", in.Round)
			if in.AllRounds {
				args = append(args, "--all-rounds")
			}
			args = appendInt(args, "--max-chars", maxChars(in.MaxChars))
			return t.call(ctx, req, args, "", "show")
		})
	addTool(t, s, &mcp.Tool{Name: "tasks", Annotations: readOnly("Local tasks"),
		Description: "The tasks started from this machine, newest first: context_id, agent, state, age and the first line of the reply or reason. Use it to find a context_id you lost. With url, a generic A2A 1.0 agent's own tasks instead."},
		func(ctx context.Context, req *mcp.CallToolRequest, in tasksIn) (*mcp.CallToolResult, any, error) {
			if aerr := counts(in.Limit, 0); aerr != nil {
				return aerr.result()
			}
			args := []string{"tasks", "--json"}
			args = appendOpt(args, "--state", in.State)
			args = appendOpt(args, "--agent", in.Agent)
			args = appendInt(args, "--limit", in.Limit)
			args = appendOpt(args, "--url", in.URL)
			args = appendOpt(args, "--context", in.ContextID)
			return t.call(ctx, req, args, "", "tasks")
		})
}

func appendOpt(args []string, flag, v string) []string {
	if v == "" {
		return args
	}
	return append(args, flag, v)
}

func appendInt(args []string, flag string, v int) []string {
	if v == 0 {
		return args
	}
	return append(args, flag, strconv.Itoa(v))
}
