package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
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
	cmd.Flags().DurationVar(&opts.timeout, "timeout", config.DefaultWaitTimeout, "with --wait, how long to wait (exit 8 when it runs out) (env A2A_COURIER_WAIT_TIMEOUT)")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker (a reply kept in a file of its own, over 4 MiB, is always shown cut, at 1 Mi characters at most)")
	return cmd
}

func (a *App) runResult(ctx context.Context, opts *resultOptions) error {
	if err := store.CheckContextID(opts.contextID); err != nil {
		return usageErr("pass the contextId printed by send-async", "%s", err.Error())
	}
	if opts.maxChars < 0 {
		return usageErr("use a positive number, or 0 for the whole reply", "--max-chars must not be negative")
	}
	c, err := a.engine()
	if err != nil {
		return err
	}
	rec, err := c.Store.Load(opts.contextID)
	if errors.Is(err, store.ErrNotFound) {
		return &cliError{exit: ExitNotFound, code: "not_found", message: "no local record of task " + opts.contextID,
			hint: "started on another machine or with another state directory? `a2a-courier fetch " + opts.contextID + "` asks the server"}
	}
	if err != nil {
		return err
	}
	a.revive(c, rec)
	if opts.wait && !rec.State.Terminal() {
		if !opts.timeoutSet {
			if s, err := a.loadSettings(); err == nil {
				opts.timeout = s.WaitTimeout
			}
		}
		if w, ok := c.StalledHolder(rec); ok {
			a.printer().warn("%s; waiting in case it goes on", a.stalledText(rec, w))
		}
		ctx, cancel := context.WithTimeout(ctx, opts.timeout)
		defer cancel()
		spin := a.printer().startSpinner("waiting for "+rec.Agent, a.p.Now)
		rec, err = c.Wait(ctx, rec, func(r *store.Record) { a.revive(c, r) })
		spin.Stop()
		if err != nil {
			return err
		}
	}
	if w, ok := c.StalledHolder(rec); ok {
		return a.reportStalled(rec, w)
	}
	return a.reportRecord(rec, opts.maxChars, c.Store)
}

// revive starts a worker for a task nobody works on (courier.Revive), with
// the credential the current configuration gives its target, and says what
// it could not do.
func (a *App) revive(c *courier.Courier, rec *store.Record) {
	if !c.NeedsWorker(rec) {
		return
	}
	cred, err := a.credentialFor(rec.Target)
	if err != nil {
		a.printer().warn("task %s has no running worker and cannot be revived: %s", rec.ContextID, classify(err).message)
		return
	}
	switch err := c.Revive(rec, cred); {
	case errors.Is(err, courier.ErrOtherCredential):
		a.printer().warn("task %s has no running worker, and it was sent with another URL or credential; run result with those settings to revive it", rec.ContextID)
	case err != nil:
		a.printer().warn("task %s has no running worker and the worker did not start: %v", rec.ContextID, err)
	case rec.State != store.Queued:
		a.printer().info("task %s had no running worker; a new one reads the reply back (nothing is sent again)", rec.ContextID)
	}
}
