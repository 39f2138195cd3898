package cli

import (
	"errors"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
	"github.com/spf13/cobra"
)

// pruneOptions are prune's dependencies and flags.
type pruneOptions struct {
	Printer func() *printer
	Engine  func() (*courier.Courier, error)

	OlderThan string
	DryRun    bool
}

// newCmdPrune builds prune; runF, when not nil, runs in place of
// pruneRun (a test's, which gets the options as parsed).
func newCmdPrune(f *Factory, runF func(*pruneOptions) error) *cobra.Command {
	opts := &pruneOptions{Printer: f.Printer, Engine: f.Engine}
	cmd := &cobra.Command{
		Use:   "prune --older-than <age>",
		Short: "Drop the local records of tasks that ended long ago (never a running one)",
		Long: `Drop from the state directory the records of the tasks that ended before
--older-than (30d, 12h, 2w, or a Go duration such as 90m): completed,
failed, rejected, canceled, input_required and expired ones, the earlier
exchanges of a conversation kept in tasks/archive/, and the files of
replies/ that only they named (or that are older than that and named by no
record kept: texts --max-chars and show cut). A task that is not final is
never dropped, however old: its worker may still bring its reply. The
server's conversations are not touched: fetch and show still read them.

Nothing is pruned on its own: records are kept until you prune them.
--dry-run lists what would go and removes nothing.

stdout lists what was dropped (a table on a terminal; piped, tab-separated
contextId, agent, state and end time); --json prints {"dry_run",
"older_than","cutoff","pruned":[{"context_id","agent","state","finished_at",
"archived"}],"reply_files","reply_bytes","kept_running","busy"}.`,
		Example: `  a2a-courier prune --older-than 30d --dry-run
  a2a-courier prune --older-than 30d
  a2a-courier prune --older-than 12h --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pruneRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.OlderThan, "older-than", "", "drop the tasks that ended longer ago than this (30d, 12h, 2w, 90m)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be dropped, drop nothing")
	return cmd
}

// prunedDoc is one record of prune --json. Fields are only ever added.
type prunedDoc struct {
	ContextID  string    `json:"context_id"`
	Agent      string    `json:"agent"`
	State      string    `json:"state"`
	FinishedAt time.Time `json:"finished_at"`
	Archived   bool      `json:"archived,omitempty"`
}

func pruneRun(opts *pruneOptions) error {
	if opts.OlderThan == "" {
		return usageErr("e.g. a2a-courier prune --older-than 30d --dry-run", "prune needs --older-than: nothing is pruned without an age")
	}
	age, err := courier.ParseAge(opts.OlderThan)
	if err != nil {
		return usageErr(config.AgeHint(opts.OlderThan), "--older-than: %v", err)
	}
	c, err := opts.Engine()
	if err != nil {
		return err
	}
	rep, err := c.Prune(courier.PruneOptions{OlderThan: age, DryRun: opts.DryRun})
	if err != nil {
		return err
	}
	pr := opts.Printer()
	for _, e := range rep.Errors {
		if ue := (*store.UnwritableError)(nil); errors.As(e, &ue) {
			return e
		}
		pr.warn("%s", classify(e).message)
	}
	docs, cells := make([]prunedDoc, len(rep.Records)), make([][]string, len(rep.Records))
	for i, p := range rep.Records {
		docs[i] = prunedDoc{ContextID: p.ContextID, Agent: p.Agent, State: string(p.State), FinishedAt: p.FinishedAt.UTC(), Archived: p.Archived}
		cells[i] = []string{p.ContextID, p.Agent, string(p.State) + map[bool]string{true: " (archived)"}[p.Archived], p.FinishedAt.UTC().Format(time.RFC3339)}
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"dry_run": opts.DryRun, "older_than": age.String(), "cutoff": rep.Cutoff.UTC(), "pruned": docs,
			"reply_files": rep.ReplyFiles, "reply_bytes": rep.ReplyBytes, "kept_running": rep.KeptRunning, "busy": rep.Busy})
	}
	if len(cells) > 0 {
		pr.table([]string{"CONTEXT", "AGENT", "STATE", "ENDED"}, cells, -1)
	}
	verb := map[bool]string{true: "would drop", false: "dropped"}[opts.DryRun]
	pr.info("%s %s and %s (%d bytes) that ended before %s", verb, plural(len(docs), "task record"), plural(rep.ReplyFiles, "reply file"),
		rep.ReplyBytes, rep.Cutoff.UTC().Format(time.RFC3339))
	if rep.KeptRunning+rep.Busy > 0 {
		pr.info("kept: %d not final (never pruned), %d in use", rep.KeptRunning, rep.Busy)
	}
	return nil
}
