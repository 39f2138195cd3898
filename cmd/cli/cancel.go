package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// cancelOptions are cancel's dependencies, flags and arguments.
type cancelOptions struct {
	Printer       func() *printer
	Engine        func() (*courier.Courier, error)
	ResolveTarget func(ctx context.Context, name string, af agentFlags) (*target, error)
	// RecordSettings, RecordCredential and KibanaForRecord reach a
	// recorded task's server as the command's view says (which they may
	// switch to the profile the task was sent with); Reporter prints the
	// outcome for that view.
	RecordSettings   func(*store.Record, *taskView) (*config.Settings, error)
	RecordCredential func(*store.Record, *taskView) (client.Secret, error)
	KibanaForRecord  func(*store.Record, *taskView) (k *client.Kibana, space string, sameKibana bool, err error)
	Reporter         func(*taskView) *reporter
	CallerWith       func(*taskView) nextstep.Caller

	view       taskView
	id         string
	agentFlags agentFlags
	agent      string
	timeout    time.Duration
}

// newCmdCancel builds cancel; runF, when not nil, runs in place of
// cancelRun (a test's, which gets the options as parsed).
func newCmdCancel(f *Factory, runF func(context.Context, *cancelOptions) error) *cobra.Command {
	opts := &cancelOptions{Printer: f.Printer, Engine: f.Engine, ResolveTarget: f.ResolveTarget, RecordSettings: f.RecordSettings,
		RecordCredential: f.RecordCredential, KibanaForRecord: f.KibanaForRecord, Reporter: f.Reporter, CallerWith: f.CallerWith}
	cmd := &cobra.Command{
		Use:   "cancel <contextId|taskId> [peer]",
		Short: "Cancel a task: ask the agent to stop it, and stop following it",
		Long: `Cancel a task started with send or send-async, by its contextId or its task
id: the agent is asked to cancel it (tasks/cancel, CancelTask) and the local
record ends as canceled, so no worker follows it any more. A task not sent
yet (queued) is canceled locally only: the agent has nothing of it, and the
task an unsent answer (send --task) answers is left alone.

Kibana Agent Builder cannot stop a run over A2A. 9.2 to 9.5 offer no way
to. On 9.6 and Serverless a task sent blocking:false (the default there) is
asked with tasks/cancel, which Kibana's newest code answers "task not
cancelable": its Task Manager run goes on (read from Kibana's source, not
checked against a release). The task is then canceled locally only (a task
not sent yet is dropped, nothing sent), and fetch can still read its reply.
A blocking send on 9.6 (non_blocking false) is the exception: closing its
connection stops the run.

A task id of a task started elsewhere needs the agent: a peer name as second
argument, or --url.`,
		Example: `  a2a-courier cancel 3f6c2e1a-7b4d-4e2a-9c1f-5d8e6a2b4c10
  a2a-courier cancel 0193c2d4-7e1f-7a3b-9c4d-5e6f7a8b9c0d --url https://agents.example.com/research`,
		Args: rangeArgs(1, 2, "a contextId or task id, and optionally the agent"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.id = args[0]
			if len(args) == 2 {
				opts.agent = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return cancelRun(cmd.Context(), opts)
		},
	}
	addAgentFlags(cmd, &opts.agentFlags)
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	return cmd
}

// cancelRun cancels the task. An error met with a generic agent speaks of
// the agent (asRemote); one met reaching a task with the profile it was
// sent with is printed for that profile (inView).
func cancelRun(ctx context.Context, opts *cancelOptions) (err error) {
	defer func() { err = inView(&opts.view, err) }()
	if err := client.CheckID("contextId or task id", opts.id); err != nil {
		return usageErrSay(say("pass %s, or a task id", nextstep.ContextIDFrom("send-async")), "%s", err.Error())
	}
	c, err := opts.Engine()
	if err != nil {
		return err
	}
	rec, err := cancelRecord(ctx, c, opts.id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	if rec == nil {
		return opts.cancelRemoteTask(ctx, c)
	}
	if rec.Target.Kind == store.TargetA2A {
		return asRemote(opts.cancelLocal(ctx, c, rec))
	}
	if err := kibanaSpeaks(opts.agentFlags); err != nil {
		return err
	}
	return opts.cancelLocal(ctx, c, rec)
}

// cancelLocal cancels the task of local record rec.
func (opts *cancelOptions) cancelLocal(ctx context.Context, c *courier.Courier, rec *store.Record) error {
	if rec.State.Terminal() {
		return alreadyFinished(rec, "is already")
	}
	stopped, err := opts.askToCancel(ctx, c, rec)
	if err != nil {
		return err
	}
	// The worker holding the record marks it canceled; with no worker,
	// this process does.
	canceled, err := c.Cancel(ctx, rec, stopped)
	switch {
	case errors.Is(err, courier.ErrCancelPending):
		return &cliError{exit: ExitStillRunning, code: "cancel_pending",
			message: "task " + rec.ContextID + " is held by a worker that has not confirmed the cancel yet",
			hint:    say("the cancel marker stays: the worker stops following the task when it next looks; %s shows it then", resultStep(rec.ContextID).Quoted())}
	case errors.Is(err, courier.ErrCancelReplaced):
		return &cliError{exit: ExitUnexpected, code: "unexpected",
			message: "task " + rec.ContextID + " got a new message while it was being canceled, and the canceled message's record is not in the archive",
			hint:    say("%s shows the context's newest message", resultStep(rec.ContextID).Quoted())}
	case err != nil:
		return err
	case canceled.State != store.Canceled:
		// It finished (or a follow-up's exchange did) before the cancel
		// reached whoever held it: nothing was canceled.
		return alreadyFinished(canceled, "finished before the cancel took effect: it is")
	}
	return opts.Reporter(&opts.view).reportCanceled(canceled, c.Store)
}

// printer is the command line's printer, rendering for the view of the
// task cancel reaches (with the profile it was sent with).
func (opts *cancelOptions) printer() *printer {
	return opts.Printer().withCaller(func() nextstep.Caller { return opts.CallerWith(&opts.view) })
}

// alreadyFinished refuses to cancel a task that has ended (exit 6).
func alreadyFinished(rec *store.Record, says string) error {
	return &cliError{exit: ExitTaskFailed, code: "not_cancelable", message: "task " + rec.ContextID + " " + says + " " + string(rec.State),
		hint: say("a finished task cannot be canceled; %s shows it", resultStep(rec.ContextID).Quoted())}
}

// cancelRecord finds the local record of a contextId or task id; nil when
// there is none. Longer than a contextId may be, the id can only be a task
// id (the agent's, up to 255 characters): no record file bears its name.
func cancelRecord(ctx context.Context, c *courier.Courier, id string) (*store.Record, error) {
	rec, err := (*store.Record)(nil), error(store.ErrNotFound)
	if store.CheckContextID(id) == nil {
		rec, err = c.LoadSettled(ctx, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		if rec, err := store.FindTask(c.Store, id, nil); err == nil {
			return rec, nil
		}
		return nil, nil
	}
	return rec, err
}

// cancelRemoteTask cancels a task this machine has no record of, by its id,
// on the agent named.
func (opts *cancelOptions) cancelRemoteTask(ctx context.Context, c *courier.Courier) error {
	if opts.agent == "" && opts.agentFlags.url == "" {
		// The cancel tool takes no peer: its agent is a URL.
		agent := nextstep.Per(say("agent: %s, or %s", nextstep.New("cancel").Hole("", "taskId").Hole("", "peer"), nextstep.OptHole("--url", "agent URL")),
			say("the agent's URL: %s", nextstep.New("cancel").Hole("", "taskId").Hole("--url", "agent URL")))
		hint := say("%s lists this machine's tasks; a task started elsewhere is canceled by its task id and %s", nextstep.New("tasks").Quoted(), agent)
		if rest, ok := courier.ContextOfConversationID(opts.id); ok {
			hint = say("that is a conversation id: its contextId is %s (%s)", rest, nextstep.New("cancel").Pos(rest))
		}
		return &cliError{exit: ExitNotFound, code: "not_found", message: "no local record of task or context " + opts.id, hint: hint}
	}
	tg, err := opts.ResolveTarget(ctx, opts.agent, opts.agentFlags)
	if err != nil {
		return err
	}
	if tg.Kind != store.TargetA2A {
		return usageErr("Agent Builder cannot stop a run; cancel its task by contextId to stop following it", "cancel by task id needs a generic A2A agent")
	}
	rec, err := c.CancelRemote(ctx, tg.Store, tg.Cred, tg.Name, opts.id)
	if err != nil {
		return asRemote(cancelError(err))
	}
	return opts.Reporter(&opts.view).reportCanceled(rec, c.Store)
}

// askToCancel asks the agent to cancel a task that was sent, as far as it
// can be asked (courier.StopWayOf), and says what it cannot do. stopped
// reports a Kibana that stopped the run.
func (opts *cancelOptions) askToCancel(ctx context.Context, c *courier.Courier, rec *store.Record) (stopped bool, _ error) {
	switch courier.StopWayOf(rec) {
	case courier.StopNothing:
	case courier.StopAgent:
		cred, err := opts.RecordCredential(rec, &opts.view)
		if err != nil {
			return false, err
		}
		if err := c.StopAgentTask(ctx, rec, cred); err != nil {
			return false, cancelError(err)
		}
	case courier.StopTaskManager:
		if _, err := opts.RecordSettings(rec, &opts.view); err != nil {
			// Another Kibana than the task's, or none: nothing is canceled
			// before the command reaches the one that runs it.
			return false, err
		}
		return opts.cancelKibanaTask(ctx, rec), nil
	case courier.StopKibanaUnnamed:
		opts.printer().warn("Kibana has not named the run's task yet, so it cannot be asked to stop: it may go on, and `%s` can still read its reply", fetchStep(rec.ContextID))
	case courier.StopByClosing:
		opts.printer().warn("the run's connection will be closed, and this Kibana release stops a blocking run when that happens")
	case courier.StopCannot:
		opts.printer().warn("Agent Builder cannot stop a run: it may go on, and `%s` can still read its reply", fetchStep(rec.ContextID))
	case courier.StopUnnamed:
		opts.printer().warn("the agent has not named the task yet, so it cannot be canceled on the server: it may go on; a2a-courier stops following it")
	}
	return false, nil
}

// cancelKibanaTask asks Kibana to cancel a Task Manager run
// (courier.StopKibanaTask) and reports whether it did. Kibana 9.6 cannot
// (not cancelable): the run goes on, and the user is told so.
func (opts *cancelOptions) cancelKibanaTask(ctx context.Context, rec *store.Record) bool {
	k, _, sameKibana, err := opts.KibanaForRecord(rec, &opts.view)
	if err != nil || !sameKibana {
		why := "the configured Kibana is not the one it was sent to"
		if err != nil {
			why = courier.OneLine(err)
		}
		opts.printer().warn("Kibana was not asked to stop the run (%s): it may go on, and `%s` can still read its reply", why, fetchStep(rec.ContextID))
		return false
	}
	switch ks := courier.StopKibanaTask(ctx, k, rec); {
	case ks.Stopped:
		return true
	case ks.NotCancelable:
		opts.printer().warn("Kibana cannot stop a Task Manager run over A2A (tasks/cancel: not cancelable): it goes on, and `%s` can still read its reply", fetchStep(rec.ContextID))
	case ks.Err != nil:
		opts.printer().warn("Kibana did not cancel the run (%v): it may go on, and `%s` can still read its reply", courier.OneLine(ks.Err), fetchStep(rec.ContextID))
	default:
		opts.printer().warn("Kibana answered tasks/cancel with the task %s: the run goes on, and `%s` can still read its reply", ks.State, fetchStep(rec.ContextID))
	}
	return false
}

func cancelError(err error) error {
	var rerr *client.Error
	if errors.As(err, &rerr) && rerr.RPCCode != 0 {
		// By its JSON-RPC code, whether it came in an HTTP 200 or a 4xx.
		ce := fromClientError(rerr)
		switch rpcCodeOf(err) {
		case -32002:
			ce.exit, ce.code, ce.hint = ExitTaskFailed, "not_cancelable", plain("the agent says the task can no longer be canceled (it has finished)")
		case -32001:
			ce.exit, ce.code, ce.hint = ExitNotFound, "not_found", plain("the agent does not know that task")
		}
		return ce
	}
	return err
}

func rpcCodeOf(err error) int {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.RPCCode
	}
	return 0
}
