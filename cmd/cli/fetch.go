package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// fetchOptions are fetch's dependencies, flags and arguments.
type fetchOptions struct {
	Printer         func() *printer
	Store           func() (*store.Store, error)
	Caches          func() *courier.Courier
	ResolveTarget   func(ctx context.Context, name string, af agentFlags) (*target, error)
	Peer            func(name string) (*config.Peer, bool, error)
	CredentialFor   func(store.Target) (client.Secret, error)
	KibanaForRecord func(*store.Record, *taskView) (k *client.Kibana, space string, sameKibana bool, err error)
	CallerWith      func(*taskView) nextstep.Caller
	Reporter        func(*taskView) *reporter

	// view is how fetch reads the recorded task (kibanaForRecord: with
	// the profile it was sent with, or the configured settings).
	view taskView

	contextID  string
	taskID     string
	peer       string
	agentFlags agentFlags
	timeout    time.Duration
	maxChars   int
	state      string // the task state to list (A2A 1.0 ListTasks)
	out        string // where the reply's files go
}

// newCmdFetch builds fetch; runF, when not nil, runs in place of fetchRun
// (a test's, which gets the options as parsed).
func newCmdFetch(f *Factory, runF func(context.Context, *fetchOptions) error) *cobra.Command {
	opts := &fetchOptions{Printer: f.Printer, Store: f.Store, Caches: f.Caches, ResolveTarget: f.ResolveTarget, Peer: f.Peer, CredentialFor: f.CredentialFor,
		KibanaForRecord: f.KibanaForRecord, CallerWith: f.CallerWith, Reporter: f.Reporter}
	cmd := &cobra.Command{
		Use:   "fetch <contextId> [peer]",
		Short: "Recover a task's reply from the server by contextId alone",
		Long: `Ask the server for the reply of a task, knowing only its contextId: on
another machine, after the state directory was wiped, or after a task
expired locally. It never sends anything.

Kibana Agent Builder (the default): it reads the conversation
a2a-<contextId> and prints the final reply of its round. When the server has
no reply stored yet it says so and exits 8: the run may still be going (look
again later), it may have failed (Kibana does not store failed runs), or the
contextId may be wrong. A contextId that is not a UUID (a2a-courier's are),
that Kibana does not know and this machine has no record of, exits 5.

Any other A2A agent: name it as send does, with --url or the name of a peer
of the config file; a local record of the task already names it. An A2A 1.0
agent lists the tasks of the context (ListTasks): fetch takes the task that
holds the recorded message or, with no local record, the newest task of the
context, and says so. A2A 0.3 cannot list tasks by contextId: fetch then
exits 2 and says what to do instead. --task <taskId> reads one task by its
id, in either version.

Exit codes follow the task's state, as for send: 0 completed, 6 failed,
rejected or canceled, 7 input required, 8 still running.

When a local record exists, was sent and is not final (or expired), it is
updated with the reply. A record whose message is still queued is shown as it
stands: its message is not on the server yet.`,
		Example: `  ctx=3f6c2e1a-7b4d-4e2a-9c1f-5d8e6a2b4c10   # printed by send or send-async
  a2a-courier fetch "$ctx"
  a2a-courier fetch "$ctx" --json --max-chars 4000
  a2a-courier fetch "$ctx" --url https://agents.example.com/research
  a2a-courier fetch "$ctx" research            # a peer of the config file
  a2a-courier fetch --task 0193c2d4-7e1f-7a3b-9c4d-5e6f7a8b9c0d --url https://agents.example.com/research`,
		Args: rangeArgs(0, 2, "a contextId and optionally a peer, or --task <taskId> and optionally a peer"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.taskID != "" && len(args) > 1:
				return usageSaid(nextstep.Per(plain("usage: a2a-courier fetch --task <taskId> [peer | --url <agent URL>]"), plain("give task_id <taskId> and the agent (a peer) or url <agent URL>, and no context_id")),
					say("with %s, the only argument is the agent's peer name", nextstep.Opt("--task")))
			case opts.taskID != "":
				if len(args) == 1 {
					opts.peer = args[0]
				}
			case len(args) == 0:
				return usageSaid(nextstep.Per(plain("usage: "+cmd.UseLine()+", or a2a-courier fetch --task <taskId> [peer]"), plain("give context_id <contextId>, or task_id <taskId>")),
					say("fetch needs a contextId (or %s)", nextstep.OptHole("--task", "taskId")))
			default:
				opts.contextID = args[0]
				if len(args) == 2 {
					opts.peer = args[1]
				}
			}
			if opts.peer != "" && opts.agentFlags.url != "" {
				return usageSaid(say("name the agent once: a peer of the config file, or %s", nextstep.Opt("--url")), say("both a peer (%s) and %s given", opts.peer, nextstep.Opt("--url")))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return fetchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker (a reply kept in a file of its own, over 4 MiB, is always shown cut, at 1 Mi characters at most)")
	cmd.Flags().StringVar(&opts.taskID, "task", "", "read this task of a generic A2A agent by its id (any A2A version)")
	cmd.Flags().StringVar(&opts.agentFlags.url, "url", "", "read from a generic A2A agent: its base URL (card at <url>/.well-known/agent-card.json) or its card's URL")
	cmd.Flags().StringVar(&opts.agentFlags.protocol, "protocol", "", "speak this A2A version (0.3 or 1.0) instead of the one the card offers")
	cmd.Flags().StringVar(&opts.out, "out", "", "save the files of the reply in this directory (default: beside the task record)")
	cmd.Flags().StringVar(&opts.state, "state", "", "read the context's newest task in this state (completed, failed, input-required, working, …; A2A 1.0 agents)")
	cmd.Flags().StringVar(&opts.agentFlags.binding, "binding", "", "speak this binding (jsonrpc or rest, HTTP+JSON) instead of the card's (or the record's)")
	return cmd
}

// fetchRun is fetch's run. An error met with a generic A2A agent speaks of
// the agent (asRemote); one met reading a task with the profile it was
// sent with is printed for that profile (inView).
func fetchRun(ctx context.Context, opts *fetchOptions) (err error) {
	defer func() { err = inView(&opts.view, err) }()
	if opts.maxChars < 0 {
		return usageSaid(plain("use a positive number, or 0 for the whole reply"), say("%s must not be negative", nextstep.Opt("--max-chars")))
	}
	if p := opts.agentFlags.protocol; p != "" && p != "0.3" && p != "1.0" {
		return usageErr("use 0.3 or 1.0", "unknown protocol %q", p)
	}
	if _, err := courier.OutDir(opts.out); err != nil {
		return err
	}
	if opts.taskID != "" {
		return opts.task(ctx)
	}
	if err := store.CheckContextID(opts.contextID); err != nil {
		return usageErrSay(say("pass %s; those a2a-courier makes are UUIDs, like 3f6c2e1a-5b7d-4c8e-9f01-23456789abcd", nextstep.ContextIDFrom("send or send-async")), "%s", err.Error())
	}
	// The local record, when there is one, says which round or task is ours.
	st, local := opts.local(func(st *store.Store) (*store.Record, error) { return st.Load(opts.contextID) })
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	switch {
	case opts.peer != "" || opts.agentFlags.url != "":
		src, err := opts.target(ctx)
		if err != nil {
			return err
		}
		if local != nil && !sameAgent(local.Target, src.target) {
			opts.printer().warn("the local record of context %s names another agent; reading from the one given, without the record", opts.contextID)
			local = nil
		}
		return asRemote(opts.remote(ctx, src, local, st))
	case local != nil && local.Target.Kind == store.TargetA2A:
		src, err := opts.recordSource(local)
		if err != nil {
			return err
		}
		return asRemote(opts.remote(ctx, src, local, st))
	case opts.agentFlags.protocol != "" || opts.agentFlags.binding != "" || opts.state != "":
		return usageErrSay(say("--protocol, --binding and %s are for generic A2A agents: add %s or the peer's name", nextstep.Opt("--state"), nextstep.OptHole("--url", "agent URL")), "--protocol, --binding or --state without an A2A agent")
	}
	return opts.kibana(ctx, local, st)
}

// local opens the state directory and loads a record; either may be
// nil (no state directory, no record: fetch works without both).
func (opts *fetchOptions) local(load func(*store.Store) (*store.Record, error)) (*store.Store, *store.Record) {
	st, err := opts.Store()
	if err != nil {
		return nil, nil
	}
	r, err := load(st)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			opts.printer().warn("%v", err)
		}
		return st, nil
	}
	return st, r
}

// fetchSource is the generic agent fetch reads from.
type fetchSource struct {
	target store.Target
	cred   client.Secret
	name   string
	// command names the agent in the commands fetch prints: "--url <url>"
	// or the peer's name.
	command []nextstep.Arg
}

// target resolves the agent named by a peer argument or --url, as send
// does (the card, then the credential).
func (opts *fetchOptions) target(ctx context.Context) (*fetchSource, error) {
	if opts.peer != "" {
		if _, ok, err := opts.Peer(opts.peer); err != nil {
			return nil, err
		} else if !ok {
			return nil, usageErrSay(say("fetch needs no agent for Kibana (the contextId is enough); for another A2A agent, name a peer of the config file (%s) or pass %s", nextstep.New("config").Pos("show").Quoted(), nextstep.OptHole("--url", "agent URL")),
				"no peer %q in the config file", opts.peer)
		}
	}
	tg, err := opts.ResolveTarget(ctx, opts.peer, opts.agentFlags)
	if err != nil {
		return nil, err
	}
	return &fetchSource{target: tg.Store, cred: tg.Cred, name: tg.Name, command: agentCommand(tg.Store, opts.agentFlags)}, nil
}

// recordSource reads from the agent a local record names, with the
// credential send would use for it.
func (opts *fetchOptions) recordSource(rec *store.Record) (*fetchSource, error) {
	t := rec.Target
	if p := opts.agentFlags.protocol; p != "" {
		t.Dialect = p
	}
	if b, err := client.ParseBinding(opts.agentFlags.binding); err != nil || b != "" {
		t.Binding = string(b)
		if err != nil {
			return nil, usageErr("use --binding jsonrpc or --binding rest (HTTP+JSON)", "%s", err.Error())
		}
	}
	cred, err := opts.CredentialFor(t)
	if err != nil {
		return nil, err
	}
	return &fetchSource{target: t, cred: cred, name: rec.Agent, command: agentCommand(t, opts.agentFlags)}, nil
}

// agentCommand names a generic agent on a command line.
func agentCommand(t store.Target, af agentFlags) []nextstep.Arg {
	s := nextstep.New("").Flag("--url", t.URL)
	if t.Peer != "" {
		s = nextstep.New("").Pos(t.Peer)
	}
	if af.protocol != "" {
		s = s.Flag("--protocol", af.protocol)
	}
	if af.binding != "" {
		s = s.Flag("--binding", af.binding)
	}
	return s.Args
}

// sendTarget names a task's agent as send takes it: the Agent Builder
// agent's id, or a generic agent's peer name or --url.
func sendTarget(agent string, t store.Target) []nextstep.Arg {
	if t.Kind == store.TargetA2A {
		return agentCommand(t, agentFlags{})
	}
	return nextstep.New("").Pos(agent).Args
}

// sameAgent reports whether a record was sent to the agent t names.
func sameAgent(rec, t store.Target) bool {
	return rec.Kind == store.TargetA2A && strings.TrimRight(rec.Endpoint, "/") == strings.TrimRight(t.Endpoint, "/")
}

// errNoTaskList explains why a context cannot be read from an agent.
func errNoTaskList(src *fetchSource, contextID string, err error) *cliError {
	ce := &cliError{exit: ExitUsage, code: "unsupported", err: err,
		hint: say("%s where the task was sent, or pass the task id: %s", resultStep(contextID).Run(), nextstep.New("fetch").Hole("--task", "taskId").Words(src.command))}
	// Without a contextId (tasks --url), the listing was not by one.
	by := map[bool]string{true: " by contextId"}[contextID != ""]
	ce.message = "this agent speaks A2A 0.3, which cannot list tasks" + by
	var rerr *client.Error
	if client.Dialect(src.target.Dialect) == client.V10 && errors.As(err, &rerr) {
		answer := fmt.Sprintf("HTTP %d", rerr.StatusCode)
		if rerr.Kind == client.KindRPC {
			answer = fmt.Sprintf("JSON-RPC error %d", rerr.RPCCode)
		}
		ce.message = "this agent's server cannot list tasks" + by + " (ListTasks answered " + answer + ")"
	}
	return ce
}

// remote reads a context's reply from a generic A2A agent: the task
// the local record names, or the one holding its message, or with no
// record the newest task of the context (v1.0 ListTasks).
func (opts *fetchOptions) remote(ctx context.Context, src *fetchSource, local *store.Record, st *store.Store) error {
	ctxID := opts.contextID
	f, err := opts.Caches().Fetch(ctx, courier.FetchQuery{Target: src.target, Key: src.cred, Agent: src.name,
		ContextID: ctxID, State: opts.state, Local: local, OutDir: opts.out})
	var none *courier.NoTaskError
	switch {
	case errors.Is(err, client.ErrNoTaskList):
		return errNoTaskList(src, ctxID, err)
	case errors.As(err, &none):
		return &cliError{exit: ExitNotFound, code: "not_found", message: none.Error(), hint: none.Hint(resultStep(ctxID))}
	case err != nil:
		return err
	case f.FromRecord:
		// Never sent, or final with nothing to read: the record says
		// where it stands (and result revives its worker).
		return opts.Reporter(&opts.view).reportRecord(f.Local, opts.maxChars, st)
	}
	var resume nextstep.Step
	switch {
	case f.Local == nil:
		resume = fetchStep(ctxID).Words(src.command)
	case f.Local.State.Terminal():
		// An expired record has no worker left: fetch looks again.
		resume = fetchStep(ctxID)
	}
	return opts.reportTask(f, st, resume)
}

// task reads one task of a generic agent by its id.
func (opts *fetchOptions) task(ctx context.Context) error {
	if err := client.CheckID("task id", opts.taskID); err != nil {
		return usageErr("pass the task id printed with the task (task_id)", "%s", err.Error())
	}
	st, local := opts.local(func(st *store.Store) (*store.Record, error) {
		// A queued answer to the task (send --task) carries its id too; a
		// record that followed the task comes first.
		a2a := func(r *store.Record) bool { return r.Target.Kind == store.TargetA2A }
		if r, err := store.FindTask(st, opts.taskID, func(r *store.Record) bool { return a2a(r) && r.State != store.Queued }); err == nil {
			return r, nil
		}
		return store.FindTask(st, opts.taskID, a2a)
	})
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	var src *fetchSource
	var err error
	switch {
	case opts.peer != "" || opts.agentFlags.url != "":
		if src, err = opts.target(ctx); err != nil {
			return err
		}
		if local != nil && !sameAgent(local.Target, src.target) {
			local = nil
		}
	case local != nil:
		if src, err = opts.recordSource(local); err != nil {
			return err
		}
	default:
		return &cliError{exit: ExitNotFound, code: "not_found", message: "no local record of task " + opts.taskID,
			hint: say("for a task started elsewhere, name the agent: %s, or %s", nextstep.New("fetch").Flag("--task", opts.taskID).Hole("", "peer"), nextstep.OptHole("--url", "agent URL"))}
	}
	return asRemote(opts.readTask(ctx, src, local, st))
}

// readTask reads task --task of src (local: its record, or nil).
func (opts *fetchOptions) readTask(ctx context.Context, src *fetchSource, local *store.Record, st *store.Store) error {
	f, err := opts.Caches().Fetch(ctx, courier.FetchQuery{Target: src.target, Key: src.cred, Agent: src.name,
		TaskID: opts.taskID, Local: local, OutDir: opts.out})
	switch {
	case err != nil:
		return err
	case f.FromRecord:
		// An answer to the task not sent yet (what the server shows is the
		// task before it: fetch never writes it), or a final record whose
		// task cannot be read: the record says where it stands.
		return opts.Reporter(&opts.view).reportRecord(f.Local, opts.maxChars, st)
	}
	resume := nextstep.New("fetch").Flag("--task", opts.taskID).Words(src.command)
	if f.Local != nil && !f.Local.State.Terminal() {
		resume = nextstep.Step{} // its worker follows it: result --wait
	}
	return opts.reportTask(f, st, resume)
}

// reportTask reports a task read from a generic agent (its final outcome
// written into the local record by the engine when it is not final yet).
func (opts *fetchOptions) reportTask(f *courier.Fetched, st *store.Store, resume nextstep.Step) error {
	if !f.Task.Final {
		return opts.Reporter(&opts.view).reportRecordWith(f.Task.Record, opts.maxChars, st, docExtra{resume: resume, note: f.Note})
	}
	opts.warnNotWritten(f.Local, f.Task.WriteErr)
	return opts.Reporter(&opts.view).reportRecordWith(f.Task.Record, opts.maxChars, st, docExtra{note: f.Note})
}

// kibana reads a context's reply from Kibana's conversation store
// (courier.FetchKibana) and reports it. Read in the space the local record
// was sent to (sameKibana), its hints name that space (inTaskSpace).
func (opts *fetchOptions) kibana(ctx context.Context, local *store.Record, st *store.Store) error {
	k, space, sameKibana, err := opts.KibanaForRecord(local, &opts.view)
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) && ce.code == "not_configured" {
			cp := *ce
			said := cp.said
			if said.IsZero() {
				said = plain(cp.message)
			}
			cp.said = said.Append(say(" (fetch reads Kibana's conversation store; for a task sent to another A2A agent, add %s or the peer's name)", nextstep.OptHole("--url", "agent URL")))
			cp.message = cp.said.String()
			return &cp
		}
		return err
	}
	err = opts.readKibana(ctx, k, space, local, st, sameKibana)
	if sameKibana {
		return inTaskSpaceErr(local, err)
	}
	return err
}

// readKibana reads the context's reply with k, in space.
func (opts *fetchOptions) readKibana(ctx context.Context, k *client.Kibana, space string, local *store.Record, st *store.Store, sameKibana bool) error {
	read, err := opts.Caches().FetchKibana(ctx, k, opts.contextID, local, sameKibana)
	var unknown *courier.UnknownContextError
	var unreadable *courier.UnreadableRoundError
	switch {
	case errors.As(err, &unknown):
		hint := plain("contextIds made by a2a-courier (and by Kibana) are UUIDs, like 3f6c2e1a-5b7d-4c8e-9f01-23456789abcd: check the id")
		if rest := unknown.ConversationOf; rest != "" {
			hint = say("that is a conversation id: its contextId is %s (%s), or read it with %s", rest, fetchStep(rest), nextstep.New("show").Pos(opts.contextID))
		}
		return &cliError{exit: ExitNotFound, code: "not_found", err: unknown.Err,
			message: unknown.Error() + " in space " + space + ", and this machine no record of it",
			hint:    hint.Then("; for a task sent to another A2A agent, add %s or the peer's name", nextstep.OptHole("--url", "agent URL"))}
	case errors.As(err, &unreadable):
		return &cliError{exit: ExitTaskFailed, code: "task_lost", message: unreadable.Error(),
			hint: plain("open the conversation in Kibana; no reply can be read from it")}
	case err != nil:
		return err
	case !read.Found:
		return opts.reportNotStored(read.Record, local, read.Conv, space, read.TaskNote, st, sameKibana)
	}
	opts.warnNotWritten(local, read.WriteErr)
	return opts.Reporter(&opts.view).reportRecordWith(read.Record, opts.maxChars, st, docExtra{taskSpace: sameKibana})
}

// inTaskSpaceErr is err, the error of a command that read recorded task
// rec in the space it was sent to, its hint naming that space
// (inTaskSpace). An exit code of a result already printed stays as it is.
func inTaskSpaceErr(rec *store.Record, err error) error {
	var ex *exitError
	if err == nil || errors.As(err, &ex) {
		return err
	}
	ce := *classify(err)
	ce.hint = inTaskSpace(rec, ce.hint)
	return &ce
}

// reportNotStored reports a context whose reply Kibana does not have (yet):
// exit 8, with what may be going on, or the local record of a task not
// sent or final.
func (opts *fetchOptions) reportNotStored(rec, local *store.Record, conv *client.Conversation, space, taskNote string, st *store.Store, taskSpace bool) error {
	if rec.State.Terminal() && rec.State != store.Expired || rec.State == store.Queued {
		// A task never sent has nothing on the server, and one that ended
		// has its outcome here: its record says where it stands (and
		// result revives its worker), and where that came from.
		note := "the server has no reply stored for this context in space " + space + ": this is the outcome recorded on this machine"
		if rec.State == store.Queued {
			note = ""
		}
		return opts.Reporter(&opts.view).reportRecordWith(rec, opts.maxChars, st, docExtra{note: plain(note), taskSpace: taskSpace})
	}
	shown := *rec
	if shown.State == store.Expired {
		shown = rec.As(store.Working)
	}
	reason := plain("the server has no reply stored for this context in space " + space + " yet: the run may still be going, it may have failed (only Serverless keeps the round of a failed run), or the contextId may be wrong")
	if local == nil {
		reason = reason.Append(nextstep.Per(plain(" or belong to another space (KIBANA_SPACE_ID)"),
			plain(" or belong to another space (the MCP server reads the space it was started with: its KIBANA_SPACE_ID or --space)")))
	}
	if conv != nil && local != nil && local.FreshContext && (local.Target.NonBlocking || courier.ReleaseAborts(local.Target)) {
		// Kibana 9.6 creates the conversation of a new context when the
		// message arrives: it has this one.
		reason = plain("Kibana has the message (the conversation was created when it arrived) but no reply stored yet: the run may still be going, or it failed (Kibana 9.6 keeps no failed run in the conversation)")
	}
	if taskNote != "" {
		reason = reason.Append(plain("; " + taskNote))
	}
	if local == nil {
		reason = reason.Append(say("; for a task sent to another A2A agent, add %s or the peer's name", nextstep.OptHole("--url", "agent URL")))
	}
	pr := opts.printer()
	shown.Reason = pr.say(reason)
	if pr.json {
		doc := recordDoc(&shown)
		doc.Resume, doc.Note = opts.caller().Resume(fetchStep(opts.contextID)), opts.Reporter(&opts.view).withRecordNote(rec, "")
		pr.writeJSON(doc)
		return exitWith(ExitStillRunning)
	}
	pr.info("%s.", shown.Reason)
	pr.info("look again later: %s", fetchStep(opts.contextID))
	return exitWith(ExitStillRunning)
}

// printer is the command line's printer, rendering for the view of the
// task fetch reads (caller).
func (opts *fetchOptions) printer() *printer { return opts.Printer().withCaller(opts.caller) }

// caller is the command line's caller, as the view of the task fetch
// reads has it (with the profile the task was sent with).
func (opts *fetchOptions) caller() nextstep.Caller { return opts.CallerWith(&opts.view) }

// warnNotWritten says that an outcome fetch read could not be written into
// the local record.
func (opts *fetchOptions) warnNotWritten(local *store.Record, err error) {
	if err != nil {
		opts.printer().warn("the reply was read, but the local record of task %s could not be updated: %v", local.ContextID, err)
	}
}
