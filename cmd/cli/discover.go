package cli

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/termui"
	"github.com/a2a-courier/a2a-courier/store"
)

// discoverOptions are discover's dependencies and flags.
type discoverOptions struct {
	Process        *Process
	Printer        func() *printer
	Settings       func() (*config.Settings, error)
	KibanaSettings func() (*config.Settings, error)
	Kibana         func(*config.Settings) (*client.Kibana, error)
	HTTPClients    func() func(store.Target) (*http.Client, error)

	Timeout time.Duration
}

// newCmdDiscover builds discover; runF, when not nil, runs in place of
// discoverRun (a test's, which gets the options as parsed).
func newCmdDiscover(f *Factory, runF func(context.Context, *discoverOptions) error) *cobra.Command {
	opts := &discoverOptions{Process: f.Process, Printer: f.Printer, Settings: f.Settings, KibanaSettings: f.KibanaSettings,
		Kibana: f.Kibana, HTTPClients: f.HTTPClients}
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "List the agents you can talk to: id, name, one-line description",
		Long: `List the agents of the configured Kibana space and the config file's named
A2A peers: their id (what send and get-card take), name and a one-line
description.

On a terminal the list is a table as wide as the terminal (the description
is cut, ids never; on a narrow terminal each agent takes two lines); piped,
it is one agent per line with tab-separated id, name and description.

--json prints {"agents":[{"id","name","description","kind"}]}: kind is
"kibana" for Agent Builder agents and "peer" for the config file's A2A
agents, which also have "url"; the Kibana agents come first, each group
sorted by id.`,
		Example: `  a2a-courier discover
  a2a-courier discover --json
  a2a-courier discover | cut -f1`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return discoverRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	return cmd
}

// discovered is one agent of the discover list.
type discovered struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Kind is "kibana" for Agent Builder agents, "peer" for the config
	// file's named A2A agents.
	Kind string `json:"kind"`
	URL  string `json:"url,omitempty"`
}

func discoverRun(ctx context.Context, opts *discoverOptions) error {
	s, err := opts.Settings()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	pr := opts.Printer()
	var list []discovered
	hint := "" // a space with no agents: where the space came from
	if s.URL != "" || s.APIKey != "" || len(s.Peers) == 0 {
		ks, err := opts.KibanaSettings()
		if err != nil {
			return err
		}
		k, err := opts.Kibana(ks)
		if err != nil {
			return err
		}
		agents, err := k.ListAgents(ctx)
		if err != nil {
			return err
		}
		for _, ag := range agents {
			list = append(list, discovered{ID: ag.ID, Name: ag.Name, Description: ag.Description, Kind: "kibana"})
		}
		if len(agents) == 0 {
			hint = pr.caller().Text(say("the space has no agents, or the key sees none there; %s", nextstep.Check(nextstep.KibanaSpace)))
			pr.info("no agents in %s\nhint: %s", describeTarget(ks), hint)
		}
	}
	list = append(list, discoverPeers(ctx, opts, s)...)
	if pr.json {
		if list == nil {
			list = []discovered{}
		}
		doc := map[string]any{"agents": list}
		if hint != "" {
			doc["hint"] = hint
		}
		return pr.writeJSON(doc)
	}
	if len(list) == 0 {
		return nil
	}
	rows := make([][]string, len(list))
	var hidden []string // ids with controls, shown quoted
	for i, ag := range list {
		id, ok := termui.ID(ag.ID)
		if !ok {
			hidden = append(hidden, id)
		}
		rows[i] = []string{id, termui.Name(ag.Name), ag.Description}
	}
	pr.table([]string{"ID", "NAME", "DESCRIPTION"}, rows, 2)
	for _, id := range hidden {
		pr.warn("the agent id %s holds control or invisible characters, shown as escapes: it cannot be used as shown (a shell's $'…' quoting passes the characters)", id)
	}
	return nil
}

// discoverPeers reads the cards of the config file's peers, at once.
func discoverPeers(ctx context.Context, opts *discoverOptions, s *config.Settings) []discovered {
	names := make([]string, 0, len(s.Peers))
	for n := range s.Peers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]discovered, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		p := s.Peers[n]
		out[i] = discovered{ID: n, Kind: "peer", URL: p.URL}
		wg.Add(1)
		go func(d *discovered, p config.Peer) {
			defer wg.Done()
			hc, err := opts.HTTPClients()(store.Target{CAFile: config.ExpandHome(p.CACert, opts.Process.getenv), Insecure: p.Insecure || s.Insecure})
			if err == nil {
				var ra *client.RemoteAgent
				b, _ := client.ParseBinding(p.Binding) // the config file's reading checked it
				if ra, err = client.ResolveAgentWith(ctx, hc, p.URL, client.ResolveOptions{UserAgent: userAgent(), Binding: b}); err == nil {
					d.Name, d.Description = ra.Name(), ra.Card.Get("description").String()
					return
				}
			}
			d.Description = "(card unavailable: " + classify(err).message + ")"
		}(&out[i], p)
	}
	wg.Wait()
	return out
}
