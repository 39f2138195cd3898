package cli

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/store"
)

type resultOptions struct {
	contextID  string
	wait       bool
	timeout    time.Duration
	timeoutSet bool
	maxChars   int
}

func newResultCmd(app *App) *cobra.Command {
	opts := &resultOptions{}
	cmd := &cobra.Command{
		Use:   "result <contextId>",
		Short: "Print the outcome recorded for a task, waiting for it with --wait",
		Long: `Print the outcome recorded locally for a task started by send or send-async:
the final reply on stdout (exit 0), or the state it is in.

A task whose worker died (its lock is free, its state not final) is revived:
a new worker reads the reply back from the server, never sending the
message again. With --wait, result waits until the task is final or
--timeout runs out (exit 8: still running, nothing lost).

No local record (another machine, a wiped disk)? Use fetch.`,
		Example: `  ctx=$(a2a-courier send-async audit-agent "Analyse last week's failed logins")
  a2a-courier result "$ctx"
  a2a-courier result "$ctx" --wait --timeout 10m --json
  a2a-courier result "$ctx" --max-chars 2000`,
		Args: exactArgs(1, "a contextId (printed by send-async)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.contextID = args[0]
			opts.timeoutSet = cmd.Flags().Changed("timeout")
			return app.runResult(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.wait, "wait", false, "wait until the task is final")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultResultWait, "with --wait, how long to wait (exit 8 when it runs out) (env A2A_COURIER_WAIT_TIMEOUT)")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker")
	return cmd
}

func (a *App) runResult(ctx context.Context, opts *resultOptions) error {
	if err := store.CheckContextID(opts.contextID); err != nil {
		return usageErr("pass the contextId printed by send-async", "%s", err.Error())
	}
	if opts.maxChars < 0 {
		return usageErr("use a positive number, or 0 for the whole reply", "--max-chars must not be negative")
	}
	st, err := a.openStore()
	if err != nil {
		return err
	}
	rec, err := st.Load(opts.contextID)
	if errors.Is(err, store.ErrNotFound) {
		return &cliError{exit: ExitNotFound, code: "not_found", message: "no local record of task " + opts.contextID,
			hint: "started on another machine or with another state directory? `a2a-courier fetch " + opts.contextID + "` asks the server"}
	}
	if err != nil {
		return err
	}
	if !rec.State.Terminal() {
		a.revive(st, rec)
	}
	if opts.wait && !rec.State.Terminal() {
		if !opts.timeoutSet {
			if s, err := a.loadSettings(); err == nil {
				opts.timeout = s.WaitTimeout
			}
		}
		if w, ok := a.stalledHolder(st, rec); ok {
			a.printer().warn("%s; waiting in case it goes on", a.stalledText(rec, w))
		}
		ctx, cancel := context.WithTimeout(ctx, opts.timeout)
		defer cancel()
		spin := a.printer().startSpinner("waiting for "+rec.Agent, a.p.Now)
		rec, err = a.waitRecord(ctx, st, rec)
		spin.Stop()
		if err != nil {
			return err
		}
	}
	if w, ok := a.stalledHolder(st, rec); ok {
		return a.reportStalled(rec, w)
	}
	return a.reportRecord(rec, opts.maxChars, st)
}

// revive starts a worker for a task nobody works on. It needs the
// credential the task was sent with; with another one it says so.
func (a *App) revive(st *store.Store, rec *store.Record) {
	if st.Locked(rec.ContextID) || readingRefused(rec) {
		// A worker has it; or its reads were refused and a new worker
		// would only be refused again (fetch reads once, when fixed).
		return
	}
	cred, err := a.credentialFor(rec.Target)
	if err != nil {
		a.printer().warn("task %s has no running worker and cannot be revived: %s", rec.ContextID, classify(err).message)
		return
	}
	if identityFor(rec.Target, cred) != rec.Identity {
		a.printer().warn("task %s has no running worker, and it was sent with another URL or credential; run result with those settings to revive it", rec.ContextID)
		return
	}
	if err := a.ensureWorker(st, rec.Identity, cred); err != nil {
		a.printer().warn("task %s has no running worker and the worker did not start: %v", rec.ContextID, err)
		return
	}
	if rec.State != store.Queued {
		a.printer().info("task %s had no running worker; a new one reads the reply back (nothing is sent again)", rec.ContextID)
	}
}

// waitRecord waits until the record is final or ctx ends, watching the
// tasks directory and looking every second in case an event is missed.
func (a *App) waitRecord(ctx context.Context, st *store.Store, rec *store.Record) (*store.Record, error) {
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(st.TasksDir()) == nil {
			events, watchErrs = w.Events, w.Errors
		}
	}
	name := rec.ContextID + ".json"
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	revived := a.p.Now()
	for {
		select {
		case <-ctx.Done():
			return rec, nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Base(ev.Name) != name {
				continue
			}
		case _, ok := <-watchErrs:
			if !ok {
				watchErrs = nil
			}
		case <-tick.C:
		}
		cur, err := st.Load(rec.ContextID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return rec, nil
			}
			return nil, err
		}
		rec = cur
		if rec.State.Terminal() || readingRefused(rec) && !st.Locked(rec.ContextID) {
			return rec, nil
		}
		// A worker that died while we wait is replaced.
		if a.p.Now().Sub(revived) > 5*time.Second && !st.Locked(rec.ContextID) {
			revived = a.p.Now()
			a.revive(st, rec)
		}
	}
}
