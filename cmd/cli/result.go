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

// resultOptions are result's dependencies, flags and arguments.
type resultOptions struct {
	Process          *Process
	Printer          func() *printer
	Settings         func() (*config.Settings, error)
	Engine           func() (*courier.Courier, error)
	RecordCredential func(*store.Record, *taskView) (client.Secret, error)
	CallerWith       func(*taskView) nextstep.Caller
	Reporter         func(*taskView) *reporter

	// view is how result reads the recorded tasks (recordCredential: a
	// task with the profile it was sent with, or the configured settings).
	view taskView

	contextIDs []string
	wait, any  bool
	progress   bool // status updates as lines (--wait)
	timeout    time.Duration
	timeoutSet bool
	maxChars   int
}

// newCmdResult builds result; runF, when not nil, runs in place of
// resultRun (a test's, which gets the options as parsed).
func newCmdResult(f *Factory, runF func(context.Context, *resultOptions) error) *cobra.Command {
	opts := &resultOptions{Process: f.Process, Printer: f.Printer, Settings: f.Settings, Engine: f.Engine, RecordCredential: f.RecordCredential,
		CallerWith: f.CallerWith, Reporter: f.Reporter}
	cmd := &cobra.Command{
		Use:   "result <contextId> [contextId...]",
		Short: "Print the outcome recorded for a task (or several), waiting for it with --wait",
		Long: `Print the outcome recorded locally for a task started by send or send-async:
the final reply on stdout (exit 0), or the state it is in.

A task whose worker died (its lock is free, its state not final) is revived:
a new worker reads the reply back from the server, never sending the
message again. With --wait, result waits until the task is final or
--timeout runs out (exit 8: still running, nothing lost), showing the latest
status update its worker recorded beside the spinner on a terminal
("Calling tool X…"); --progress prints them to stderr as lines
(` + "`progress: <state>: <text>`" + `; with several tasks,
` + "`progress: <contextId>: <state>: <text>`" + `).

Several contextIds: with --wait, result waits for all of them (exit 8 while
one is still running when --timeout ends, else the exit code of the first,
in the order given, that did not complete, else 0); with --any, for the
first to finish, and exits with its code (8 when none finished). Each
task's reply follows a line "[task <contextId> (<agent>): <state>]", with
the reason after the state for one that did not complete. A contextId with
no local record is reported in its place, "[task <contextId>: not_found:
…]" (state not_found in --json), and counts as a task whose exit code is 5;
it keeps no other from being reported or waited for. --json prints
{"tasks":[<task document>...],"first","pending","resume"}: first is the
task that finished first (--any), pending the tasks still running, and
resume the command that waits for them.

No local record (another machine, a wiped disk)? Use fetch.`,
		Example: `  ctx=$(a2a-courier send-async audit-agent "Analyse last week's failed logins")
  a2a-courier result "$ctx"
  a2a-courier result "$ctx" --wait --timeout 10m --json
  a2a-courier result "$ctx" --max-chars 2000
  a2a-courier result "$ctx1" "$ctx2" "$ctx3" --wait --any --timeout 90s --json`,
		Args: rangeArgs(1, 100, "one or more contextIds (printed by send-async), at most 100"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.contextIDs = args
			opts.timeoutSet = cmd.Flags().Changed("timeout")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resultRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.wait, "wait", false, "wait until the task is final (with several: all of them)")
	cmd.Flags().BoolVar(&opts.any, "any", false, "with several tasks, report the first to finish")
	cmd.Flags().BoolVar(&opts.progress, "progress", false, "with --wait, print the tasks' status updates to stderr as lines (stdout stays the final reply)")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", config.DefaultWaitTimeout, "with --wait, how long to wait (exit 8 when it runs out) (env A2A_COURIER_WAIT_TIMEOUT)")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker (a reply kept in a file of its own, over 4 MiB, is always shown cut, at 1 Mi characters at most)")
	return cmd
}

// resultRun is result's run. An error met once a task of a generic A2A
// agent is followed speaks of the agent (asRemote); one met once a task is
// read with the profile it was sent with is printed for that profile
// (inView).
func resultRun(ctx context.Context, opts *resultOptions) (err error) {
	defer func() { err = inView(&opts.view, err) }()
	if opts.maxChars < 0 {
		return usageSaid(plain("use a positive number, or 0 for the whole reply"), say("%s must not be negative", nextstep.Opt("--max-chars")))
	}
	if !opts.wait && (opts.timeoutSet || opts.progress) {
		opts.printer().warn("--timeout and --progress apply to --wait: without it, result looks once")
	}
	c, err := opts.Engine()
	if err != nil {
		return err
	}
	remote := false
	err = opts.run(ctx, c, &remote)
	if remote {
		return asRemote(err)
	}
	return err
}

// run loads the tasks, revives those nobody works on, and reports them;
// remote is set once a task of a generic agent is revived.
func (opts *resultOptions) run(ctx context.Context, c *courier.Courier, remote *bool) error {
	var recs []*store.Record
	keys := courier.Keys{}
	opts.contextIDs = distinct(opts.contextIDs)
	for _, id := range opts.contextIDs {
		if err := store.CheckContextID(id); err != nil {
			return usageErrSay(say("pass %s", nextstep.ContextIDFrom("send-async")), "%s", err.Error())
		}
		rec, err := c.Store.Load(id)
		if errors.Is(err, store.ErrNotFound) {
			if len(opts.contextIDs) == 1 && !opts.any {
				return noLocalRecord(id)
			}
			recs = append(recs, nil) // reported in its place (waitResults)
			continue
		}
		if err != nil {
			return err
		}
		*remote = *remote || !rec.State.Terminal() && rec.Target.Kind == store.TargetA2A
		opts.revive(c, rec, keys)
		recs = append(recs, rec)
	}
	if opts.wait && !opts.timeoutSet {
		if s, err := opts.Settings(); err == nil {
			opts.timeout = opts.view.inUse(s).WaitTimeout
		}
	}
	if len(recs) > 1 || opts.any {
		return opts.waitResults(ctx, c, recs, keys)
	}
	return opts.waitOne(ctx, c, recs[0], keys)
}

// waitOne reports one task, waiting for it with --wait.
func (opts *resultOptions) waitOne(ctx context.Context, c *courier.Courier, rec *store.Record, keys courier.Keys) error {
	rp, pr, waited := opts.Reporter(&opts.view), opts.printer(), false
	if opts.wait && !rec.State.Terminal() {
		if w, ok := c.StalledHolder(rec); ok {
			pr.warn("%s; waiting in case it goes on", rp.stalledText(rec, w))
		}
		ctx, cancel := context.WithTimeout(ctx, opts.timeout)
		defer cancel()
		agent := rec.Agent // rec is the waited one's below
		spin := pr.startSpinner("waiting for "+agent, opts.Process.Now)
		quietPath(opts.Process, pr, opts.progress, rec)
		stopProgress := c.WatchProgress(ctx, []string{rec.ContextID}, func(_ string, p store.Progress) {
			spin.SetLabel(progressed(opts.Process, pr, "waiting for "+agent, "", client.Event{Message: p.Text, State: p.State}, opts.progress))
		})
		var err error
		rec, err = c.Wait(ctx, rec, keys)
		stopProgress()
		spin.Stop()
		if err != nil {
			return err
		}
		// Wait returned before the timeout: it found the task done, which
		// is the answer even if its lock is taken since.
		waited = ctx.Err() == nil
	}
	if w, ok := c.StalledHolder(rec); ok {
		return rp.reportStalled(rec, w)
	}
	return rp.reportRecordWith(rec, opts.maxChars, c.Store, docExtra{waited: waited})
}

// noLocalRecord is the error of a contextId this machine has no record of.
func noLocalRecord(id string) *cliError {
	hint := say("started on another machine or with another state directory? %s asks the server", fetchStep(id).Quoted())
	if rest, ok := courier.ContextOfConversationID(id); ok {
		hint = say("that is a conversation id: its contextId is %s (%s)", rest, resultStep(rest))
	} else if !courier.IsUUID(id) {
		hint = plain("contextIds made by a2a-courier (and by Kibana) are UUIDs, like 3f6c2e1a-5b7d-4c8e-9f01-23456789abcd: check the id")
	}
	return &cliError{exit: ExitNotFound, code: "not_found", message: "no local record of task " + id, hint: hint}
}

// distinct is ids without repeats, in the order first given: a task named
// twice is one task, reported once.
func distinct(ids []string) []string {
	seen, out := make(map[string]bool, len(ids)), ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id], out = true, append(out, id)
		}
	}
	return out
}

// resultsDoc is the --json document of result with several contextIds (or
// --any). Fields are only ever added.
type resultsDoc struct {
	Tasks []taskDoc `json:"tasks"`
	// First is the task that finished first (--any; absent when none did).
	First string `json:"first,omitempty"`
	// Pending are the tasks not final yet, and Resume the command that
	// waits for them.
	Pending []string `json:"pending,omitempty"`
	Resume  string   `json:"resume,omitempty"`
}

// waitResults waits for several tasks (courier.WaitMany: all, or with
// --any the first to finish; without --wait it looks once) and reports
// them. A nil record is a contextId without a local record: reported as
// not found in its place, it keeps no other from being waited for.
func (opts *resultOptions) waitResults(ctx context.Context, c *courier.Courier, all []*store.Record, keys courier.Keys) error {
	var recs []*store.Record // the known ones, waited for
	var at []int             // where each is in all
	for i, r := range all {
		if r != nil {
			recs, at = append(recs, r), append(at, i)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, opts.timeout)
	if !opts.wait || len(recs) == 0 {
		cancel() // one look
	}
	defer cancel()
	label := fmt.Sprintf("waiting for %d tasks", len(recs))
	pr := opts.printer()
	spin := pr.startSpinner(label, opts.Process.Now)
	stopProgress := func() {}
	if opts.wait {
		quietPath(opts.Process, pr, opts.progress, recs...)
		ids, agents := make([]string, len(recs)), make(map[string]string, len(recs))
		for i, r := range recs {
			ids[i], agents[r.ContextID] = r.ContextID, r.Agent
		}
		several := len(recs) > 1 // (recs is written by WaitMany meanwhile)
		stopProgress = c.WatchProgress(wctx, ids, func(id string, p store.Progress) {
			task := id // the lines name the task when there are several
			if !several {
				task = ""
			}
			spin.SetLabel(progressed(opts.Process, pr, label+", "+agents[id], task, client.Event{Message: p.Text, State: p.State}, opts.progress))
		})
	}
	recs, first, err := c.WaitMany(wctx, recs, opts.any, keys)
	stopProgress()
	spin.Stop()
	if err != nil {
		return err
	}
	for j, r := range recs {
		all[at[j]] = r
	}
	if first >= 0 {
		first = at[first]
	}
	doc := resultsDoc{}
	code, codes := ExitOK, make([]int, len(all))
	for i, r := range all {
		d, rc, err := opts.resultDocument(r, opts.contextIDs[i], c.Store)
		if err != nil {
			return err
		}
		doc.Tasks, codes[i] = append(doc.Tasks, d), rc
		if r != nil && !c.Done(r) {
			doc.Pending = append(doc.Pending, r.ContextID)
		} else if code == ExitOK {
			code = rc // the first, in the order given, that did not complete
		}
	}
	if doc.Pending != nil {
		code = ExitStillRunning
		step := nextstep.New("result")
		for _, id := range doc.Pending {
			step = step.Pos(id)
		}
		step = step.Bool("--wait")
		if opts.any {
			step = step.Bool("--any")
		}
		doc.Resume = opts.caller().Resume(step)
	}
	if opts.any {
		switch {
		case first >= 0:
			doc.First, code = all[first].ContextID, codes[first]
		case len(recs) == 0:
			code = ExitNotFound // nothing known to wait for
		default:
			code = ExitStillRunning
		}
	}
	return opts.printResults(all, doc, first, code)
}

// resultDocument is the document of one of several tasks and its exit
// code; a nil record is id's, not found here.
func (opts *resultOptions) resultDocument(r *store.Record, id string, st *store.Store) (taskDoc, int, error) {
	if r == nil {
		ce := noLocalRecord(id)
		return taskDoc{ContextID: id, State: stateNotFound, Error: &errorDoc{Code: ce.code, Message: ce.message, Hint: opts.caller().Text(ce.hint)}}, ce.exit, nil
	}
	d, rc, _, err := opts.Reporter(&opts.view).taskDocument(r, opts.maxChars, st, docExtra{})
	return d, rc, err
}

// stateNotFound is the state, in result's document of several tasks, of a
// contextId this machine has no record of.
const stateNotFound = "not_found"

// printResults prints several tasks' outcomes: --json's document, or for
// people each task's reply after a line naming it (--any: the first to
// finish), and on stderr what still runs.
func (opts *resultOptions) printResults(recs []*store.Record, doc resultsDoc, first int, code int) error {
	pr, anyDone := opts.printer(), opts.any
	if pr.json {
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(code)
	}
	var unknown []errorDoc
	for i, r := range recs {
		d := doc.Tasks[i]
		if r == nil {
			unknown = append(unknown, *d.Error)
		}
		if anyDone && i != first {
			continue
		}
		switch {
		case r == nil:
			pr.payload(fmt.Sprintf("[task %s: %s: no local record on this machine]", d.ContextID, d.State))
		case d.Error != nil:
			pr.payload(fmt.Sprintf("[task %s (%s): %s: %s]", r.ContextID, r.Agent, d.State, d.Error.why))
		default:
			pr.payload(fmt.Sprintf("[task %s (%s): %s]", r.ContextID, r.Agent, d.State))
		}
		if d.Reply != nil {
			pr.payload(*d.Reply)
		}
	}
	for _, e := range unknown {
		pr.info("%s: %s", e.Message, e.Hint)
	}
	if doc.Pending != nil {
		pr.info("still running: %s; wait for %s with: %s", strings.Join(doc.Pending, ", "), map[bool]string{true: "it", false: "them"}[len(doc.Pending) == 1], doc.Resume)
	}
	return exitWith(code)
}

// printer is the command line's printer, rendering for the view of the
// tasks result reads (caller).
func (opts *resultOptions) printer() *printer { return opts.Printer().withCaller(opts.caller) }

// caller is the command line's caller, as the view of the tasks result
// reads has it (with the profile a task was sent with).
func (opts *resultOptions) caller() nextstep.Caller { return opts.CallerWith(&opts.view) }

// revive resolves, once, the credential the current configuration gives
// the target of a task not final, into keys (Wait revives a worker that
// dies later with it), starts a worker for the task if nobody works on it
// (courier.Revive), and says what it could not do.
func (opts *resultOptions) revive(c *courier.Courier, rec *store.Record, keys courier.Keys) {
	if rec.State.Terminal() {
		return
	}
	pr := opts.printer()
	cred, err := opts.RecordCredential(rec, &opts.view)
	if err == nil {
		keys[rec.ContextID] = cred
	}
	if !c.NeedsWorker(rec) {
		return
	}
	if err != nil {
		ce := classify(err)
		pr.warn("task %s has no running worker and cannot be revived: %s", rec.ContextID, ce.message)
		if ce.code == "config" && !ce.hint.IsZero() {
			pr.info("hint: %s", opts.caller().Text(ce.hint))
		}
		return
	}
	switch err := c.Revive(rec, cred); {
	case errors.Is(err, courier.ErrOtherCredential):
		pr.warn("task %s has no running worker, and it was sent with another URL or credential; run result with those settings to revive it", rec.ContextID)
		delete(keys, rec.ContextID)
	case err != nil:
		pr.warn("task %s has no running worker and the worker did not start: %v", rec.ContextID, err)
	case rec.State != store.Queued:
		pr.info("task %s had no running worker; a new one reads the reply back (nothing is sent again)", rec.ContextID)
	}
}
