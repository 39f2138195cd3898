package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

type fetchOptions struct {
	contextID string
	timeout   time.Duration
	maxChars  int
}

func newFetchCmd(app *App) *cobra.Command {
	opts := &fetchOptions{}
	cmd := &cobra.Command{
		Use:   "fetch <contextId>",
		Short: "Recover a task's reply from the server by contextId alone",
		Long: `Ask the server for the reply of a task, knowing only its contextId: on
another machine, after the state directory was wiped, or after a task
expired locally. It reads the conversation a2a-<contextId> and prints the
final reply of its round; it never sends anything.

When the server has no reply stored yet it says so and exits 8: the run
may still be going (look again later), it may have failed (Kibana does not
store failed runs), or the contextId may be wrong.

When a local record exists and is not final, it is updated with the reply.`,
		Example: `  a2a-courier fetch 3f6c2e1a-…
  a2a-courier fetch "$ctx" --json --max-chars 4000`,
		Args: exactArgs(1, "a contextId"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.contextID = args[0]
			return app.runFetch(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply at this many characters; the whole reply is saved to a file named in the marker")
	return cmd
}

func (a *App) runFetch(ctx context.Context, opts *fetchOptions) error {
	if err := store.CheckContextID(opts.contextID); err != nil {
		return usageErr("pass the contextId printed by send or send-async", "%s", err.Error())
	}
	if opts.maxChars < 0 {
		return usageErr("use a positive number, or 0 for the whole reply", "--max-chars must not be negative")
	}
	k, err := a.kibanaClient()
	if err != nil {
		return err
	}
	// The local record, when there is one, says which round is ours.
	st, stErr := a.openStore()
	var local *store.Record
	if stErr == nil {
		if r, err := st.Load(opts.contextID); err == nil {
			local = r
		} else if !errors.Is(err, store.ErrNotFound) {
			a.printer().warn("%v", err)
		}
	} else {
		st = nil
	}
	rctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	conv, err := k.GetConversation(rctx, client.ConversationIDForContext(opts.contextID))
	var out client.Outcome
	found := false
	switch {
	case err == nil:
		if local != nil && local.MessageSHA256 != "" {
			out, found = conv.Outcome(local.MessageSHA256, local.RoundsBefore, local.FreshContext)
		} else {
			out, found = conv.Outcome("", 0, true)
		}
	case client.IsKind(err, client.KindNotFound):
	default:
		return err
	}

	rec := local
	if rec == nil {
		rec = &store.Record{ContextID: opts.contextID, State: store.Working, CreatedAt: a.p.Now().UTC()}
		if err == nil {
			rec.Agent = conv.AgentID()
		}
	}
	if !found {
		if rec.State.Terminal() && rec.State != store.Expired || rec.State == store.Queued {
			// A task never sent has nothing on the server: its record says
			// where it stands (and result revives its worker).
			return a.reportRecord(rec, opts.maxChars, st)
		}
		shown := *rec
		if shown.State == store.Expired {
			shown.State = store.Working
		}
		shown.Reason = "the server has no reply stored for this context yet: the run may still be going, it may have failed (failed runs are not stored), or the contextId may be wrong"
		if a.printer().json {
			doc := recordDoc(&shown)
			doc.Resume = "a2a-courier fetch " + opts.contextID
			a.printer().writeJSON(doc)
			return exitWith(ExitStillRunning)
		}
		a.printer().info("no reply stored on the server for context %s yet.", opts.contextID)
		a.printer().info("the run may still be going (look again later: a2a-courier fetch %s), it may have failed (failed runs are not stored), or the contextId may be wrong.", opts.contextID)
		return exitWith(ExitStillRunning)
	}
	result := *rec
	result.State = store.State(out.State)
	result.Reply = out.Reply
	result.Reason = ""
	// Times come from the server's document, not from this fetch.
	result.FinishedAt = nil
	if t, err := time.Parse(time.RFC3339Nano, conv.UpdatedAt()); err == nil {
		t = t.UTC()
		result.FinishedAt = &t
	}
	if local == nil {
		if t, err := time.Parse(time.RFC3339Nano, conv.CreatedAt()); err == nil {
			result.CreatedAt = t.UTC()
		}
	}
	if local != nil && (!local.State.Terminal() || local.State == store.Expired) && st != nil {
		if h, err := st.Lock(local.ContextID); err == nil {
			h.Update(func(x *store.Record) error {
				finish(x, a.p.Now(), result.State)
				x.Reply, x.Reason, x.Via, x.HTTPStatus = out.Reply, "", "fetch", 200
				return nil
			})
			h.Release()
		}
	}
	return a.reportRecord(&result, opts.maxChars, st)
}
