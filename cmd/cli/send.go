package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// sendOptions are send's and send-async's dependencies, flags and
// arguments.
type sendOptions struct {
	Process         *Process
	Printer         func() *printer
	Settings        func() (*config.Settings, error)
	Engine          func() (*courier.Courier, error)
	WorkerTiming    func() (store.WorkerTiming, error)
	ResolveTarget   func(ctx context.Context, name string, af agentFlags) (*target, error)
	ProfileReaching func(p, url string) (*config.Settings, bool)
	Caller          func() nextstep.Caller
	Reporter        func(*taskView) *reporter
	Verbose         func() bool

	agent        string
	args         []string
	agentFlags   agentFlags
	contextID    string
	taskID       string
	async        bool
	timeout      time.Duration
	pollInterval time.Duration
	maxWait      time.Duration
	maxChars     int
	// files and data are sent beside the text; out is where the reply's
	// files are saved; progress prints the task's status updates.
	files, data []string
	out         string
	progress    bool

	pollSet, maxWaitSet, timeoutSet bool
}

// sendGuidance and sendAsyncGuidance end send's and send-async's help;
// the rule of a refused message is courier's (retry.go), its figures
// filled in by retryRule.
var sendGuidance = retryRule(`Sync or async? Look at the agent, not at the question:
  - agents that use tools heavily (search, ES|QL, analysis) take minutes even
    for a one-line question: use send-async, then result --wait;
  - light chat agents answer in seconds: send is fine;
  - when unsure, use send-async. A wrong choice loses nothing: when
    --timeout runs out the task is handed to a background worker and send
    exits 8 with the command that fetches the reply.

Nothing is ever sent twice. The contextId is generated and recorded before
the request leaves; if the connection is cut (proxy 502, Kibana's idle
timeout, a network drop) the reply is read back from the conversation
store. A task that reached "sending" is never sent again, not even when
its worker died before it knew whether the request arrived: to ask again,
send a new message.

A server that refuses the message as busy (HTTP 429, or 503 with
Retry-After) has not taken it in: it is sent again at most %d times, each
after the wait the server asks for (without one, about 1s, 2s, then 4s),
but never after a wait over %s, nor one that would leave less than %s of
the time left (--timeout, and the task's --max-wait); then exit 9, and
the hint says how long the server asked to wait.`)

var sendAsyncGuidance = retryRule(`Use send-async for agents that take minutes (tools: search, ES|QL,
analysis), and when unsure; send, which waits, suits light chat agents that
answer in seconds.

Nothing is ever sent twice. The contextId is generated and the task
recorded (its text too, until the worker sends it) before anything leaves;
if the connection is cut (proxy 502, Kibana's idle timeout, a network drop)
the worker reads the reply back from the conversation store. A task that
reached "sending" is never sent again, not even when its worker died before
it knew whether the request arrived: to ask again, send a new message.

A server that refuses the message as busy (HTTP 429, or 503 with
Retry-After) has not taken it in: the worker sends it again at most %d
times, each after the wait the server asks for (without one, about 1s,
2s, then 4s), but never after a wait over %s, nor one that would leave
less than %s of the task's --max-wait; then the task ends rejected, and
result exits 9 with a hint that says how long the server asked to wait.`)

// retryRule fills the figures of the rule of a refused message into a
// help text: how many times it is sent again, the longest wait, and the
// time a wait must leave.
func retryRule(text string) string {
	return fmt.Sprintf(text, courier.MaxSendRetries, courier.WaitText(courier.MaxSendRetryWait), courier.WaitText(courier.SendRetryReserve))
}

// newSendOptions are the Options of send (async: send-async) from f.
func newSendOptions(f *Factory, async bool) *sendOptions {
	return &sendOptions{Process: f.Process, Printer: f.Printer, Settings: f.Settings, Engine: f.Engine, WorkerTiming: f.WorkerTiming,
		ResolveTarget: f.ResolveTarget, ProfileReaching: f.ProfileReaching, Caller: f.Caller, Reporter: f.Reporter, Verbose: f.Verbose, async: async}
}

// newCmdSend builds send; runF, when not nil, runs in place of sendRun (a
// test's, which gets the options as parsed).
func newCmdSend(f *Factory, runF func(context.Context, *sendOptions) error) *cobra.Command {
	opts := newSendOptions(f, false)
	cmd := &cobra.Command{
		Use:   "send <agent> [text|-]",
		Short: "Send a message and wait for the final reply",
		Long: `Send a message to an agent and print its final reply on stdout.

The message comes from the argument or, with "-" or no argument, from stdin
(a message in argv is visible to every process on the machine). With --file
or --data it may be empty: no argument and stdin a terminal (not read) or
empty send the files and data alone.

` + sendGuidance,
		Example: `  a2a-courier send elastic-ai-agent "How many errors were logged yesterday?"
  echo "Summarise today's alerts" | a2a-courier send elastic-ai-agent
  a2a-courier send audit-agent --timeout 90s --json - < question.txt
  a2a-courier send audit-agent --context 3f6c2e1a-7b4d-4e2a-9c1f-5d8e6a2b4c10 "Yes, go ahead"`,
		Args: messageArgs,
		RunE: sendRunE(opts, runF),
	}
	addSendFlags(cmd, opts)
	cmd.Flags().DurationVar(&opts.timeout, "timeout", config.DefaultSendTimeout, "how long to wait before handing the task to a background worker (exit 8) (env A2A_COURIER_SEND_TIMEOUT)")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker (a reply kept in a file of its own, over 4 MiB, is always shown cut, at 1 Mi characters at most)")
	cmd.Flags().BoolVar(&opts.progress, "progress", false, "print the task's status updates to stderr as lines (stdout stays the final reply)")
	return cmd
}

// newCmdSendAsync builds send-async; runF, when not nil, runs in place of
// sendRun.
func newCmdSendAsync(f *Factory, runF func(context.Context, *sendOptions) error) *cobra.Command {
	opts := newSendOptions(f, true)
	cmd := &cobra.Command{
		Use:   "send-async <agent> [text|-]",
		Short: "Send a message in the background and print its contextId at once",
		Long: `Send a message to an agent through a detached background worker and return
at once, exit 0: stdout carries the contextId (--json: the task document in
state "queued", with the command that waits for the reply); when stdout
cannot take it (a closed pipe), exit 1 (code output) with stderr saying the
task is recorded and how to find it. Get the reply
with "a2a-courier result <contextId> --wait". The worker survives the
caller leaving; if it dies, result revives it.

The message comes from the argument or, with "-" or no argument, from stdin
(a message in argv is visible to every process on the machine). With --file
or --data it may be empty: no argument and stdin a terminal (not read) or
empty send the files and data alone.

` + sendAsyncGuidance,
		Example: `  ctx=$(a2a-courier send-async audit-agent "Analyse the last 30 days of high-risk operations")
  a2a-courier result "$ctx" --wait --timeout 10m
  a2a-courier send-async audit-agent --json - < question.txt`,
		Args: messageArgs,
		RunE: sendRunE(opts, runF),
	}
	addSendFlags(cmd, opts)
	return cmd
}

// sendRunE is the run function of send and send-async: the arguments
// checked and the flags given noted, runF or sendRun.
func sendRunE(opts *sendOptions, runF func(context.Context, *sendOptions) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var err error
		if opts.agent, opts.args, err = splitAgentArgs(opts.agentFlags, args, 1); err != nil {
			return err
		}
		opts.pollSet = cmd.Flags().Changed("poll-interval")
		opts.maxWaitSet = cmd.Flags().Changed("max-wait")
		opts.timeoutSet = cmd.Flags().Changed("timeout")
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return sendRun(cmd.Context(), opts)
	}
}

func addSendFlags(cmd *cobra.Command, opts *sendOptions) {
	cmd.Flags().StringVar(&opts.contextID, "context", "", "continue the conversation of this contextId (e.g. to answer an agent's question)")
	cmd.Flags().StringVar(&opts.taskID, "task", "", "answer this task of a generic A2A agent that asked for input (exit 7)")
	addAgentFlags(cmd, &opts.agentFlags)
	cmd.Flags().DurationVar(&opts.pollInterval, "poll-interval", config.DefaultPollInterval, "how often to read the conversation while waiting (env A2A_COURIER_POLL_INTERVAL)")
	cmd.Flags().DurationVar(&opts.maxWait, "max-wait", config.DefaultMaxWait, "how long the task is followed before it is marked expired (env A2A_COURIER_MAX_WAIT)")
	cmd.Flags().StringArrayVar(&opts.files, "file", nil, "send this file beside the text (repeatable; at most 10 MiB each; not to Agent Builder agents)")
	cmd.Flags().StringArrayVar(&opts.data, "data", nil, "send this JSON value as a data part beside the text, or @FILE for a file of one (repeatable)")
	cmd.Flags().StringVar(&opts.out, "out", "", "save the files of the reply in this directory (default: beside the task record)")
}

// readMessage takes the message from the argument or stdin, trimmed,
// valid UTF-8 (courier.CheckText). With files or data (parts), the text
// may be empty, and a terminal on stdin is not asked for one.
func (opts *sendOptions) readMessage(ctx context.Context, args []string, parts bool) (text string, err error) {
	defer func() {
		if parts && errors.Is(err, courier.ErrEmptyMessage) {
			text, err = "", nil
		}
	}()
	if len(args) == 0 && parts && opts.Process.StdinTTY {
		return "", nil
	}
	if len(args) == 1 && args[0] != "-" {
		if strings.TrimSpace(args[0]) == answerPlaceholder {
			return "", usageErr("give the answer itself as the argument, or pass - and the answer on stdin", "the message is the placeholder %s; nothing was sent", answerPlaceholder)
		}
		return courier.CheckText(args[0])
	}
	if opts.Process.StdinTTY {
		opts.Printer().info("type the message, then Ctrl-D on a line of its own")
	}
	text, err = courier.ReadMessage(ctx, opts.Process.Stdin)
	if errors.Is(err, courier.ErrReadInterrupted) {
		return "", &cliError{exit: ExitUnexpected, code: "interrupted", message: err.Error()}
	}
	return text, err
}

// sendRun is send's and send-async's run. An error met with a generic A2A
// agent speaks of the agent (asRemote).
func sendRun(ctx context.Context, opts *sendOptions) error {
	m, err := opts.message(ctx)
	if err != nil {
		return err
	}
	err = opts.submit(ctx, m)
	if m.Target.Kind == store.TargetA2A {
		return asRemote(err)
	}
	return err
}

// submit records the task of m and sends it: in this process (send), or
// through a background worker (send-async).
func (opts *sendOptions) submit(ctx context.Context, m *courier.Message) error {
	c, err := opts.Engine()
	if err != nil {
		return err
	}
	command := "send"
	if opts.async {
		command = "send-async"
	}
	task, err := c.Submit(ctx, *m, command)
	if err != nil {
		return opts.submitError(err)
	}
	defer task.Release()
	rec := task.Record()
	// Said before anything leaves, in every mode: a caller that its own
	// timeout stops still has the contextId (the MCP server is told it as
	// a value: Process.Events).
	// The command in it runs as the caller ran this one (App.caller: --json,
	// --timeout, the connection flags), as resume does.
	if started := opts.Process.Events.Started; started != nil {
		started(rec.ContextID)
	}
	opts.Printer().logf("task %s started; its reply: %s", rec.ContextID, opts.Caller().Resume(waitStep(rec.ContextID)))
	if !opts.async {
		return opts.foreground(ctx, c, task)
	}
	if err := task.HandOff(); err != nil {
		return handOffErr(rec.ContextID, err)
	}
	opts.workerLogNote(c, rec)
	pr := opts.Printer()
	doc := recordDoc(rec)
	if pr.json {
		doc.Resume = opts.Caller().Resume(doc.resume)
		pr.writeJSON(doc)
	} else {
		pr.payload(rec.ContextID)
	}
	if werr := pr.outErr(); werr != nil {
		// The caller closed stdout: the task goes on, recorded; it is
		// found by what the caller can still run.
		return &cliError{exit: ExitUnexpected, code: "output", err: werr,
			message: fmt.Sprintf("task %s is recorded and goes on in the background, but its contextId could not be written to stdout: %v", rec.ContextID, werr),
			hint:    say("%s lists it; %s waits for its reply", nextstep.New("tasks").Quoted(), waitStep(rec.ContextID).Quoted())}
	}
	return nil
}

// message checks send's options and resolves them into the message the
// engine submits: the settings, the agent and its card, the text.
func (opts *sendOptions) message(ctx context.Context) (*courier.Message, error) {
	if opts.contextID != "" {
		if err := store.CheckContextID(opts.contextID); err != nil {
			return nil, usageErrSay(say("pass %s", nextstep.ContextIDFrom("send or send-async")), "%s", err.Error())
		}
	}
	if opts.taskID != "" {
		// A task id is the agent's (up to 255 characters): it names no file.
		if err := client.CheckID("task id", opts.taskID); err != nil {
			return nil, usageErr("pass the task id printed with the agent's question", "%s", err.Error())
		}
	}
	if opts.maxChars < 0 {
		return nil, usageSaid(plain("use a positive number, or 0 for the whole reply"), say("%s must not be negative", nextstep.Opt("--max-chars")))
	}
	s, err := opts.Settings()
	if err != nil {
		return nil, err
	}
	// A worker may take over any task (send-async's at once, send's when
	// --timeout runs out): a timing it could not run with is refused
	// before anything is recorded, not once the task waits for a worker.
	if _, err := opts.WorkerTiming(); err != nil {
		return nil, err
	}
	poll := durationFlag(opts.pollInterval, opts.pollSet, s.PollInterval)
	maxWait := durationFlag(opts.maxWait, opts.maxWaitSet, s.MaxWait)
	opts.timeout = durationFlag(opts.timeout, opts.timeoutSet, s.SendTimeout)
	if poll <= 0 || maxWait <= 0 || opts.timeout <= 0 {
		return nil, usageErr("use positive durations such as 20s and 2h", "--poll-interval, --max-wait and --timeout must be positive")
	}
	tg, err := opts.ResolveTarget(ctx, opts.agent, opts.agentFlags)
	if err != nil {
		return nil, err
	}
	m, err := opts.messageTo(ctx, tg, poll, maxWait)
	if tg.Kind == store.TargetA2A {
		return m, asRemote(err)
	}
	return m, err
}

// messageTo is the message to target tg: its parts, its text.
func (opts *sendOptions) messageTo(ctx context.Context, tg *target, poll, maxWait time.Duration) (*courier.Message, error) {
	if opts.taskID != "" && tg.Kind == store.TargetKibana {
		return nil, usageSaid(say("Agent Builder answers go in the same conversation: use %s", nextstep.OptHole("--context", "contextId")), say("%s is for generic A2A agents", nextstep.Opt("--task")))
	}
	parts, err := courier.Attach(opts.files, opts.data)
	if err == nil {
		err = courier.CheckParts(tg.Store, parts)
	}
	out, oerr := courier.OutDir(opts.out)
	if err = errors.Join(err, oerr); err != nil {
		return nil, err
	}
	text, err := opts.readMessage(ctx, opts.args, len(parts) > 0)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, &cliError{exit: ExitUnexpected, code: "interrupted", message: "interrupted before the task was recorded; nothing was sent"}
	}
	return &courier.Message{Agent: tg.Name, Target: tg.Store, Key: tg.Cred, Path: tg.Path, Text: text,
		PollInterval: poll, MaxWait: maxWait, ContextID: opts.contextID, TaskID: opts.taskID, Parts: parts, OutDir: out,
		Verbose: opts.Verbose()}, nil
}

// submitError reports a message the engine would not submit.
func (opts *sendOptions) submitError(err error) error {
	var inFlight *courier.InFlightError
	var finished *courier.FinishedTaskError
	var unknown *courier.NoConversationError
	var other *courier.OtherAgentError
	switch {
	case errors.As(err, &unknown):
		hint := say("%s lists the conversations (the contextId is the id after \"a2a-\"); to start a new conversation, leave out %s", nextstep.New("history").Quoted(), nextstep.Opt("--context"))
		if rest, ok := courier.ContextOfConversationID(unknown.ContextID); ok {
			hint = say("that is a conversation id: its contextId is %s (%s)", rest, nextstep.Arg{Flag: "--context", Value: rest})
		} else if !courier.IsUUID(unknown.ContextID) {
			hint = plain("contextIds made by a2a-courier (and by Kibana) are UUIDs; ").Append(hint)
		}
		return &cliError{exit: ExitNotFound, code: "not_found", message: unknown.Error(), hint: hint}
	case errors.As(err, &other):
		cmd := nextstep.New("send").Words(sendTarget(other.ConversationAgent, other.ConversationTarget)).Flag("--context", other.ContextID)
		if t := other.ConversationTarget; t.Kind == store.TargetKibana && strings.EqualFold(other.Agent, other.ConversationAgent) {
			// The same agent of another Kibana or space: name that one, by
			// the profile the task was sent with while it still names it.
			if _, ok := opts.ProfileReaching(t.Profile, t.URL); t.Profile != "" && ok {
				cmd = nextstep.New("send").Flag("--profile", t.Profile).Words(sendTarget(other.ConversationAgent, t)).Flag("--context", other.ContextID)
			} else {
				cmd = cmd.Flag("--kibana-url", t.URL).Flag("--space", nonEmptyStr(t.Space, "default"))
			}
		}
		return usageErrSay(say("%s goes on with that conversation; leave out %s to start a new one with %s", cmd.Quoted(), nextstep.Opt("--context"), other.Agent), "%s", other.Error())
	case errors.As(err, &inFlight):
		return usageErrSay(say("wait for it: %s", waitStep(inFlight.ContextID)), "%s", inFlight.Error())
	case errors.As(err, &finished):
		// Answering a task that asks nothing any more: the agent would
		// refuse it, and a refused answer must not stand in for the
		// outcome the context already has.
		return &cliError{exit: ExitUsage, code: "usage", message: finished.Error(),
			hint: say("%s shows its outcome; to ask something new, send a new message", resultStep(finished.Record.ContextID).Quoted())}
	}
	return err
}

// foreground works on the task in this process, with a spinner, until
// it is final or the caller's wait runs out; then a worker takes over (the
// engine's rules: Task.Foreground).
func (opts *sendOptions) foreground(ctx context.Context, c *courier.Courier, task *courier.Task) error {
	pr := opts.Printer()
	rec := task.Record()
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	spin := pr.startSpinner("waiting for "+rec.Agent, opts.Process.Now)
	quietPath(opts.Process, pr, opts.progress, rec)
	end := task.Foreground(ctx, courier.Work{Command: "send", Interrupted: userInterrupted,
		OnEvent: func(e client.Event) {
			switch e.Kind {
			case client.EventConnectionLost:
				spin.SetLabel(fmt.Sprintf("connection lost; reading the reply back every %s", time.Duration(rec.PollInterval)))
			case client.EventBusy:
				spin.SetLabel(e.Message)
				if !pr.errTTY {
					pr.info("%s", e.Message)
				}
			case client.EventSent:
				spin.SetLabel("waiting for " + rec.Agent)
			case client.EventProgress:
				spin.SetLabel(progressed(opts.Process, pr, "waiting for "+rec.Agent, "", e, opts.progress))
			}
		}})
	spin.Stop()
	if end.Record == nil {
		return end.Err
	}
	var rwe *courier.RecordWriteError
	var ce *client.Error
	switch {
	case errors.As(end.Err, &rwe):
		// The reply is here but the record lags: show the reply all the
		// same, and say so.
		pr.warn("%v", rwe)
		return opts.Reporter(nil).reportRecord(end.Record, opts.maxChars, nil)
	case end.Err != nil && !errors.Is(end.Err, courier.ErrHandedOff) && !errors.As(end.Err, &ce):
		return end.Err
	case end.HandOffErr != nil:
		pr.warn("the background worker did not start (%v); `%s` retries", end.HandOffErr, waitStep(rec.ContextID))
	case end.HandedOff:
		opts.workerLogNote(c, rec)
		if userInterrupted(ctx) {
			// Ctrl-C after the message left: the task goes on; someone
			// who meant to stop it is told how.
			pr.info("the task goes on in the background; to cancel it instead: %s (it says whether the agent can stop the run)", nextstep.New("cancel").Pos(rec.ContextID))
		}
	}
	return opts.Reporter(nil).reportRecord(end.Record, opts.maxChars, c.Store)
}

// workerLogNote says, with -v, where the requests a worker makes for a
// task are shown: the worker makes them, and logs them (Record.Verbose).
func (opts *sendOptions) workerLogNote(c *courier.Courier, rec *store.Record) {
	if opts.Verbose() {
		opts.Printer().logf("the background worker makes the requests of task %s; it logs each (never a credential) to %s", rec.ContextID, c.Store.LogPath())
	}
}

// progressed shows a status update of a task ("Calling tool X…"): it
// returns the spinner's label, label and the text cut to the terminal's
// width, and with --progress prints it as a line on stderr (stdout stays
// the final reply), which names the task when one of several (task, its
// contextId) sent it. The MCP server running the command is told it as a
// value (p.Events) instead.
func progressed(p *Process, pr *printer, label, task string, e client.Event, lines bool) string {
	text, width := singleLine(e.Message), p.TermWidth()
	if width <= 0 {
		width = 80
	}
	if lines {
		if task != "" {
			task += ": "
		}
		update := task + singleLine(nonEmptyStr(e.State, "working")) + ": " + text
		if told := p.Events.Progress; told != nil {
			told(update) // the MCP server's, as a value
		} else {
			pr.overSpinner("progress: %s", update)
		}
	}
	return ansi.Truncate(label+": "+text, max(width-15, 20), "…")
}

// quietPath says, with --progress, that a task Kibana runs on Task
// Manager (9.6, Serverless: blocking:false, followed with tasks/get) has
// no status updates to show: tasks/get carries the text only at the end.
func quietPath(p *Process, pr *printer, lines bool, recs ...*store.Record) {
	for _, r := range recs {
		if t := r.Target; lines && t.Kind == store.TargetKibana && t.NonBlocking && !t.Streaming {
			progressed(p, pr, "", "", client.Event{Message: "Kibana's task path (tasks/get) reports no status updates; the reply comes when the run ends"}, true)
			return
		}
	}
}

// messageArgs accepts an agent id and the text (or -); words beyond them
// are a message that was not quoted.
func messageArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 2 {
		return usageErr(fmt.Sprintf("quote the message so that it is one argument: a2a-courier %s <agent> \"your message\" (or give it on stdin with -)", commandName(cmd)),
			"%s takes an agent id and one text argument, not %d: the words after the agent id look like a message that was not quoted", commandName(cmd), len(args)-1)
	}
	return nil
}
