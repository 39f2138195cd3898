package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// defaultHistoryLimit keeps a plain `history` short: every line printed is
// a token the calling assistant pays for.
const defaultHistoryLimit = 20

// historyOptions are history's dependencies and flags.
type historyOptions struct {
	Printer        func() *printer
	KibanaSettings func() (*config.Settings, error)
	Kibana         func(*config.Settings) (*client.Kibana, error)
	// Store is the state directory, for when this machine recorded a
	// conversation's last reply (localLastReply).
	Store func() (*store.Store, error)

	Agent   string
	Limit   int
	Timeout time.Duration
}

// newCmdHistory builds history; runF, when not nil, runs in place of
// historyRun (a test's, which gets the options as parsed).
func newCmdHistory(f *Factory, runF func(context.Context, *historyOptions) error) *cobra.Command {
	opts := &historyOptions{Printer: f.Printer, KibanaSettings: f.KibanaSettings, Kibana: f.Kibana, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List past conversations, newest first: id, title, agent, time",
		Long: `List your past conversations in the configured Kibana space, newest first
(by last update): id, title, agent and updated time. Kibana 9.6 and later
order the list itself; for 9.2 to 9.5 it is sorted here, by updated_at or,
for a conversation this machine continued, by when its last reply was
recorded (9.2 and 9.3 do not move updated_at on follow-up rounds). Nothing
of their content is printed; ` + "`a2a-courier show <id>`" + ` prints a
conversation's reply.

--limit (default 20) bounds the list; --limit 0 lists all that the server
lists: Kibana 9.2 to 9.5 return at most 1000 conversations, in no order (they
are sorted here, and a warning says when the newest may be missing); 9.6 and
later return pages, followed until the limit, at most 10000.

On a terminal the list is a table as wide as the terminal (the title is cut,
ids never; on a narrow terminal each conversation takes two lines, the title
on the second); piped, it is one conversation per line with tab-separated
id, title, agent and updated time (as the server wrote it, RFC 3339), no
header. When --limit cut the list, stderr says how many conversations there
are. --json prints {"conversations":[{"id","context_id","title","agent_id",
"updated_at"}],"total":N}: context_id is the contextId of a conversation
a2a-courier started (a2a-<id>), total how many conversations the server
reports. An --agent that is no agent of the space exits 5 (not found).`,
		Example: `  a2a-courier history
  a2a-courier history --agent elastic-ai-agent --limit 5
  a2a-courier history --json --limit 0
  a2a-courier history | cut -f1`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return historyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "list only the conversations of this agent id")
	cmd.Flags().IntVar(&opts.Limit, "limit", defaultHistoryLimit, "list at most this many conversations, newest first; 0 lists all")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	return cmd
}

type historyEntry struct {
	ID        string `json:"id"`
	ContextID string `json:"context_id,omitempty"`
	Title     string `json:"title"`
	AgentID   string `json:"agent_id"`
	UpdatedAt string `json:"updated_at"`
}

// historyDoc is the --json document of history. Fields are only ever added.
type historyDoc struct {
	Conversations []historyEntry `json:"conversations"`
	Total         int            `json:"total"`
}

func historyRun(ctx context.Context, opts *historyOptions) error {
	if opts.Agent != "" {
		if err := client.CheckID("agent id", opts.Agent); err != nil {
			return usageErrSay(say("agent ids are listed by %s", nextstep.New("discover").Quoted()), "%s", err.Error())
		}
	}
	if opts.Limit < 0 {
		return usageSaid(plain("use a positive number, or 0 to list all"), say("%s must not be negative", nextstep.Opt("--limit")))
	}
	s, err := opts.KibanaSettings()
	if err != nil {
		return err
	}
	k, err := opts.Kibana(s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	list, err := k.ListConversations(ctx, client.ListConversationsOptions{AgentID: opts.Agent, Limit: opts.Limit, LastActivity: localLastReply(opts.Store, s)})
	if err != nil {
		return err
	}
	if len(list.Conversations) == 0 && opts.Agent != "" {
		// An agent id that is not one is an error, not an empty list.
		agents, err := k.ListAgents(ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(agents, func(ag client.Agent) bool { return ag.ID == opts.Agent }) {
			return &cliError{exit: ExitNotFound, code: "not_found", hint: agentHint(agents, opts.Agent),
				message: fmt.Sprintf("agent %s is unknown in %s", opts.Agent, describeTarget(s))}
		}
	}
	pr := opts.Printer()
	if list.Capped {
		if list.Paginated {
			pr.warn("the server pages through at most 10000 conversations; older ones are not listed")
		} else {
			pr.warn("the server returned its maximum of 1000 conversations, in no order: the newest may be missing")
		}
	}
	if pr.json {
		doc := historyDoc{Conversations: make([]historyEntry, len(list.Conversations)), Total: list.Total}
		for i, c := range list.Conversations {
			ctxID, _ := strings.CutPrefix(c.ID, "a2a-")
			if ctxID == c.ID {
				ctxID = "" // not a conversation of an A2A context (Kibana's UI)
			}
			doc.Conversations[i] = historyEntry{ID: c.ID, ContextID: ctxID, Title: c.Title, AgentID: c.AgentID, UpdatedAt: c.UpdatedAt}
		}
		return pr.writeJSON(doc)
	}
	if len(list.Conversations) == 0 {
		if opts.Agent != "" {
			pr.info("no conversations with agent %s in %s", opts.Agent, describeTarget(s))
		} else {
			pr.info("no conversations in %s", describeTarget(s))
		}
		return nil
	}
	rows := make([][]string, len(list.Conversations))
	for i, c := range list.Conversations {
		updated := c.UpdatedAt
		if pr.outTTY {
			updated = shortTime(updated)
		}
		rows[i] = []string{c.ID, c.Title, c.AgentID, updated}
	}
	pr.table([]string{"ID", "TITLE", "AGENT", "UPDATED"}, rows, 1)
	if opts.Limit > 0 && len(list.Conversations) == opts.Limit && list.Total > opts.Limit {
		pr.info("%d of %d conversations, newest first; --limit 0 lists all", len(list.Conversations), list.Total)
	}
	return nil
}

// localLastReply says when this machine recorded the last reply of an A2A
// conversation (a2a-<contextId>), from its task record: Kibana 9.2 and 9.3
// never move updated_at forward on follow-up rounds, so a conversation
// continued here would otherwise sort by its first round.
func localLastReply(openStore func() (*store.Store, error), s *config.Settings) func(id string) (time.Time, bool) {
	st, err := openStore()
	if err != nil {
		return nil
	}
	return func(id string) (time.Time, bool) {
		ctxID, ok := strings.CutPrefix(id, "a2a-")
		if !ok || store.CheckContextID(ctxID) != nil {
			return time.Time{}, false
		}
		rec, err := st.Load(ctxID)
		if err != nil || rec.Target.Kind != store.TargetKibana || client.KibanaOrigin(rec.Target.URL) != client.KibanaOrigin(s.URL) || rec.Target.Space != s.Space ||
			rec.FinishedAt == nil || rec.State != store.Completed && rec.State != store.InputRequired {
			return time.Time{}, false
		}
		return *rec.FinishedAt, true
	}
}

// shortTime renders an RFC 3339 time for a person, in UTC to the minute.
func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
