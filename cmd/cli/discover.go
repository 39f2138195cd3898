package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
)

type discoverOptions struct {
	timeout time.Duration
}

func newDiscoverCmd(app *App) *cobra.Command {
	opts := &discoverOptions{}
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "List the agents you can talk to: id, name, one-line description",
		Long: `List the agents of the configured Kibana space: their id (what send and
get-card take), name and a one-line description.

On a terminal the list is a table; piped, it is one agent per line with
tab-separated id, name and description. --json prints
{"agents":[{"id","name","description"}]}.`,
		Example: `  a2a-courier discover
  a2a-courier discover --json
  a2a-courier discover | cut -f1`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return app.runDiscover(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	return cmd
}

func (a *App) runDiscover(ctx context.Context, opts *discoverOptions) error {
	s, err := a.kibanaSettings()
	if err != nil {
		return err
	}
	k, err := a.kibana(s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	agents, err := k.ListAgents(ctx)
	if err != nil {
		return err
	}
	pr := a.printer()
	if pr.json {
		if agents == nil {
			agents = []client.Agent{}
		}
		return pr.writeJSON(map[string]any{"agents": agents})
	}
	if len(agents) == 0 {
		pr.info("no agents in %s", describeTarget(s))
		return nil
	}
	rows := make([][]string, len(agents))
	for i, ag := range agents {
		rows[i] = []string{ag.ID, ag.Name, ag.Description}
	}
	pr.table([]string{"ID", "NAME", "DESCRIPTION"}, rows, 2)
	return nil
}
