package cli

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// tasksOptions are tasks' dependencies and the flags that select its rows:
// the local ledger's or, with --url, an A2A 1.0 agent's own list
// (ListTasks).
type tasksOptions struct {
	Process       *Process
	Printer       func() *printer
	Engine        func() (*courier.Courier, error)
	Caches        func() *courier.Courier
	ResolveTarget func(ctx context.Context, name string, af agentFlags) (*target, error)

	state, agent, contextID string
	limit                   int
	agentFlags              agentFlags
	timeout                 time.Duration
}

// tasksRun lists this machine's tasks, or with --url a generic agent's.
func tasksRun(ctx context.Context, opts *tasksOptions) error {
	if opts.agentFlags.url != "" {
		return asRemote(opts.remote(ctx))
	}
	return opts.local()
}

// newCmdTasks builds tasks; runF, when not nil, runs in place of tasksRun
// (a test's, which gets the options as parsed and checked).
func newCmdTasks(f *Factory, runF func(context.Context, *tasksOptions) error) *cobra.Command {
	opts := &tasksOptions{Process: f.Process, Printer: f.Printer, Engine: f.Engine, Caches: f.Caches, ResolveTarget: f.ResolveTarget}
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
many tasks the filters keep before --limit.

--url <agent URL> lists a generic A2A 1.0 agent's own tasks instead, as its
server shows them to this caller (A2A ListTasks), newest first: --context
keeps one context's, --state one state's (submitted, working,
input_required, auth_required, completed, canceled, failed, rejected),
--limit the newest (0: all, at most 2,000). Rows: contextId, task id,
state, status time and the first line of the status message; --json prints
{"source":"remote","url","agent","tasks":[{"context_id","state","task_id",
"updated_at","summary"}],"total":N,"more"}. An agent that cannot list its
tasks (A2A 0.3, or a server without ListTasks) exits 2, code unsupported.`,
		Example: `  a2a-courier tasks
  a2a-courier tasks --state running
  a2a-courier tasks --agent audit-agent --limit 5 --json
  a2a-courier tasks --state failed,rejected | cut -f1
  a2a-courier tasks --url https://agents.example.com/research --state working`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.agentFlags.url == "" && (opts.contextID != "" || opts.agentFlags.protocol != "" || opts.agentFlags.binding != "") {
				return usageErrSay(say("%s, --protocol and --binding list a generic A2A agent's tasks: add %s", nextstep.Opt("--context"), nextstep.OptHole("--url", "agent URL")), "--context, --protocol or --binding without --url")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tasksRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.state, "state", "", "only tasks in these states (running, or state names, commas between; one state with --url)")
	cmd.Flags().StringVar(&opts.agent, "agent", "", "only this agent's tasks")
	cmd.Flags().IntVar(&opts.limit, "limit", defaultHistoryLimit, "list at most this many tasks, newest first; 0 lists all")
	cmd.Flags().StringVar(&opts.agentFlags.url, "url", "", "list a generic A2A 1.0 agent's own tasks (ListTasks): its base URL or its card's URL")
	cmd.Flags().StringVar(&opts.contextID, "context", "", "with --url: only the tasks of this contextId")
	cmd.Flags().StringVar(&opts.agentFlags.protocol, "protocol", "", "with --url: speak this A2A version (0.3 or 1.0) instead of the card's")
	cmd.Flags().StringVar(&opts.agentFlags.binding, "binding", "", "with --url: speak this binding (jsonrpc or rest, HTTP+JSON) instead of the card's")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "with --url: how long to wait for the agent")
	return cmd
}

// remoteTaskRow is one row of tasks --url --json. Fields are only ever
// added.
type remoteTaskRow struct {
	ContextID string `json:"context_id"`
	State     string `json:"state"`
	TaskID    string `json:"task_id"`
	UpdatedAt string `json:"updated_at,omitempty"` // the status's timestamp, as the agent sent it
	Summary   string `json:"summary,omitempty"`
}

// remote lists a generic agent's tasks (A2A 1.0 ListTasks).
func (opts *tasksOptions) remote(ctx context.Context) error {
	switch {
	case opts.limit < 0:
		return usageSaid(plain("use a positive number, or 0 to list all"), say("%s must not be negative", nextstep.Opt("--limit")))
	case opts.agent != "":
		return usageSaid(say("%s filters the local ledger: the agent of %s is the URL", nextstep.Opt("--agent"), nextstep.Opt("--url")),
			say("%s with %s", nextstep.Opt("--agent"), nextstep.Opt("--url")))
	case strings.Contains(opts.state, ",") || opts.state == "running":
		return usageSaid(say("an agent filters by one state: e.g. %s working", nextstep.Opt("--state")),
			say("%s %q: one state with %s", nextstep.Opt("--state"), opts.state, nextstep.Opt("--url")))
	case client.CheckTaskState(opts.state) != nil:
		return usageSaid(say("e.g. %[1]s working, or %[1]s completed", nextstep.Opt("--state")), say("%s: %v", nextstep.Opt("--state"), client.CheckTaskState(opts.state)))
	case opts.contextID != "" && client.CheckID("contextId", opts.contextID) != nil:
		return usageErr("pass the contextId the agent gave the task", "%v", client.CheckID("contextId", opts.contextID))
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	tg, err := opts.ResolveTarget(ctx, "", opts.agentFlags)
	if err != nil {
		return err
	}
	src := &fetchSource{target: tg.Store, cred: tg.Cred, name: tg.Name, command: agentCommand(tg.Store, opts.agentFlags)}
	c, err := opts.Caches().A2A(src.target, src.cred)
	if err != nil {
		return err
	}
	l, err := c.TaskList(ctx, client.TaskFilter{ContextID: opts.contextID, State: opts.state}, opts.limit)
	if errors.Is(err, client.ErrNoTaskList) {
		ce := errNoTaskList(src, opts.contextID, err)
		ce.hint = say("%s (without %s) lists the tasks sent from this machine; %s reads one task", nextstep.New("tasks").Quoted(), nextstep.Opt("--url"), nextstep.New("fetch").Hole("--task", "taskId").Words(src.command))
		return ce
	} else if err != nil {
		return err
	}
	pr, now := opts.Printer(), opts.Process.Now()
	rows, cells := make([]remoteTaskRow, len(l.Tasks)), make([][]string, len(l.Tasks))
	for i, t := range l.Tasks {
		rows[i] = remoteTaskRow{ContextID: t.ContextID, State: strings.ReplaceAll(t.State, "-", "_"), TaskID: t.ID, UpdatedAt: t.Timestamp,
			Summary: courier.SummaryLine(client.RedactCredential(t.StatusText, src.cred))}
		when := t.Timestamp
		if ts, err := time.Parse(time.RFC3339Nano, when); err == nil && pr.outTTY {
			when = termui.Age(now.Sub(ts))
		}
		cells[i] = []string{t.ContextID, t.ID, rows[i].State, when, rows[i].Summary}
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"source": "remote", "url": src.target.URL, "agent": src.name, "tasks": rows, "total": l.Total, "more": l.More})
	}
	if len(rows) == 0 {
		pr.info("the agent lists no tasks that match")
		return nil
	}
	pr.table([]string{"CONTEXT", "TASK", "STATE", "UPDATED", "STATUS"}, cells, 4)
	switch {
	case l.More && opts.limit == 0:
		pr.info("the newest %s, where the listing stops; the agent has more: filter with --context or --state", plural(len(rows), "task"))
	case l.More:
		pr.info("the newest %s; the agent has more: --limit 0 lists all", plural(len(rows), "task"))
	}
	return nil
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

// local lists the tasks of this machine's ledger.
func (opts *tasksOptions) local() error {
	states, err := courier.ParseStates(opts.state)
	if err != nil {
		return usageSaid(say("e.g. %[1]s running, or %[1]s failed,rejected", nextstep.Opt("--state")), say("%s: %v", nextstep.Opt("--state"), err))
	}
	if opts.limit < 0 {
		return usageSaid(plain("use a positive number, or 0 to list all"), say("%s must not be negative", nextstep.Opt("--limit")))
	}
	c, err := opts.Engine()
	if err != nil {
		return err
	}
	recs, total, errs := c.Tasks(courier.TaskQuery{States: states, Agent: opts.agent, Limit: opts.limit})
	pr := opts.Printer()
	if len(errs) > 0 {
		pr.warn("%s unreadable: %s", plural(len(errs), "task record"), classify(errs[0]).message)
	}
	now := opts.Process.Now()
	rows, cells := make([]taskRow, len(recs)), make([][]string, len(recs))
	for i, r := range recs {
		rows[i] = taskRow{ContextID: r.ContextID, Agent: r.Agent, State: string(r.State), CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
			AgeSeconds: int64(now.Sub(r.CreatedAt).Seconds()), Summary: courier.Summary(r), TaskID: r.TaskID, Target: string(r.Target.Kind)}
		age := r.CreatedAt.UTC().Format(time.RFC3339)
		if pr.outTTY {
			age = termui.Age(now.Sub(r.CreatedAt))
		}
		cells[i] = []string{r.ContextID, r.Agent, string(r.State), age, rows[i].Summary}
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"source": "local", "tasks": rows, "total": total})
	}
	if len(recs) == 0 {
		if opts.state == "" && opts.agent == "" {
			pr.info("no tasks recorded in %s", c.Store.Dir())
		} else {
			pr.info("no tasks recorded in %s match", c.Store.Dir())
		}
		return nil
	}
	pr.table([]string{"CONTEXT", "AGENT", "STATE", "AGE", "REPLY"}, cells, 4)
	if len(recs) < total {
		pr.info("%d of %d tasks, newest first; --limit 0 lists all", len(recs), total)
	}
	return nil
}
