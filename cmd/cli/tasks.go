package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
)

// tasksOptions select the rows of tasks. (The list of a remote agent's
// own tasks, --url, is to come beside the local one.)
type tasksOptions struct {
	state, agent string
	limit        int
}

func newTasksCmd(app *App) *cobra.Command {
	opts := &tasksOptions{}
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "List the tasks started from this machine, newest first: contextId, agent, state, age, reply",
		Long: `List the local task records (the state directory's), newest first: the
contextId, the agent, the state, the age, and the first line of the reply
(or of the question, or of the reason it failed). It reads no server: a
contextId you lost is here, and so is a task whose send was stopped.

--state keeps the tasks in the states named (commas between them):
running (queued, sending or working: a worker still moves them), queued,
sending, working, completed, failed, rejected, canceled, input_required,
expired. --agent keeps one agent's tasks, --limit (default 20) the newest
ones; --limit 0 lists all.

On a terminal the list is a table as wide as the terminal; piped, it is one
task per line with tab-separated contextId, agent, state, created time
(RFC 3339) and reply, no header. --json prints {"source":"local",
"tasks":[{"context_id","agent","state","created_at","finished_at",
"age_seconds","summary","task_id","target"}],"total":N}, total being how
many tasks the filters keep before --limit.`,
		Example: `  a2a-courier tasks
  a2a-courier tasks --state running
  a2a-courier tasks --agent audit-agent --limit 5 --json
  a2a-courier tasks --state failed,rejected | cut -f1`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error { return app.runTasks(opts) },
	}
	cmd.Flags().StringVar(&opts.state, "state", "", "only tasks in these states (running, or state names, commas between)")
	cmd.Flags().StringVar(&opts.agent, "agent", "", "only this agent's tasks")
	cmd.Flags().IntVar(&opts.limit, "limit", defaultHistoryLimit, "list at most this many tasks, newest first; 0 lists all")
	return cmd
}

// taskRow is one row of tasks --json. Fields are only ever added.
type taskRow struct {
	ContextID  string     `json:"context_id"`
	Agent      string     `json:"agent"`
	State      string     `json:"state"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	AgeSeconds int64      `json:"age_seconds"`
	Summary    string     `json:"summary,omitempty"`
	TaskID     string     `json:"task_id,omitempty"`
	Target     string     `json:"target"`
}

func (a *App) runTasks(opts *tasksOptions) error {
	states, err := courier.ParseStates(opts.state)
	if err != nil {
		return usageErr("e.g. --state running, or --state failed,rejected", "--state: %v", err)
	}
	if opts.limit < 0 {
		return usageErr("use a positive number, or 0 to list all", "--limit must not be negative")
	}
	c, err := a.engine()
	if err != nil {
		return err
	}
	recs, total, errs := c.Tasks(courier.TaskQuery{States: states, Agent: opts.agent, Limit: opts.limit})
	pr := a.printer()
	if len(errs) > 0 {
		pr.warn("%s unreadable: %s", plural(len(errs), "task record"), classify(errs[0]).message)
	}
	now := a.p.Now()
	rows, cells := make([]taskRow, len(recs)), make([][]string, len(recs))
	for i, r := range recs {
		rows[i] = taskRow{ContextID: r.ContextID, Agent: r.Agent, State: string(r.State), CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
			AgeSeconds: int64(now.Sub(r.CreatedAt).Seconds()), Summary: courier.Summary(r), TaskID: r.TaskID, Target: string(r.Target.Kind)}
		age := r.CreatedAt.UTC().Format(time.RFC3339)
		if pr.outTTY {
			age = ageText(now.Sub(r.CreatedAt))
		}
		cells[i] = []string{r.ContextID, r.Agent, string(r.State), age, rows[i].Summary}
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"source": "local", "tasks": rows, "total": total})
	}
	if len(recs) == 0 {
		pr.info("no tasks recorded in %s match", c.Store.Dir())
		return nil
	}
	pr.table([]string{"CONTEXT", "AGENT", "STATE", "AGE", "REPLY"}, cells, 4)
	if len(recs) < total {
		pr.info("%d of %d tasks, newest first; --limit 0 lists all", len(recs), total)
	}
	return nil
}

// ageText is how long ago, for a person: 45s, 12m, 5h, 3d.
func ageText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

type pruneOptions struct {
	olderThan string
	dryRun    bool
}

func newPruneCmd(app *App) *cobra.Command {
	opts := &pruneOptions{}
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
		RunE: func(cmd *cobra.Command, args []string) error { return app.runPrune(opts) },
	}
	cmd.Flags().StringVar(&opts.olderThan, "older-than", "", "drop the tasks that ended longer ago than this (30d, 12h, 2w, 90m)")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "list what would be dropped, drop nothing")
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

func (a *App) runPrune(opts *pruneOptions) error {
	if opts.olderThan == "" {
		return usageErr("e.g. a2a-courier prune --older-than 30d --dry-run", "prune needs --older-than: nothing is pruned without an age")
	}
	age, err := courier.ParseAge(opts.olderThan)
	if err != nil {
		return usageErr("use days (30d), weeks (2w) or a duration such as 12h or 90m", "--older-than: %v", err)
	}
	c, err := a.engine()
	if err != nil {
		return err
	}
	rep, err := c.Prune(courier.PruneOptions{OlderThan: age, DryRun: opts.dryRun})
	if err != nil {
		return err
	}
	pr := a.printer()
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
		return pr.writeJSON(map[string]any{"dry_run": opts.dryRun, "older_than": age.String(), "cutoff": rep.Cutoff.UTC(), "pruned": docs,
			"reply_files": rep.ReplyFiles, "reply_bytes": rep.ReplyBytes, "kept_running": rep.KeptRunning, "busy": rep.Busy})
	}
	if len(cells) > 0 {
		pr.table([]string{"CONTEXT", "AGENT", "STATE", "ENDED"}, cells, -1)
	}
	verb := map[bool]string{true: "would drop", false: "dropped"}[opts.dryRun]
	pr.info("%s %s and %s (%d bytes) that ended before %s", verb, plural(len(docs), "task record"), plural(rep.ReplyFiles, "reply file"),
		rep.ReplyBytes, rep.Cutoff.UTC().Format(time.RFC3339))
	if rep.KeptRunning+rep.Busy > 0 {
		pr.info("kept: %d not final (never pruned), %d in use", rep.KeptRunning, rep.Busy)
	}
	return nil
}
