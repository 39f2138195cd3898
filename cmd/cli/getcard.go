package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/termui"
	"github.com/a2a-courier/a2a-courier/store"
)

// getCardOptions are get-card's dependencies and flags.
type getCardOptions struct {
	Printer func() *printer
	// ResolveTarget finds the agent and reads its card (targets.resolveTarget).
	ResolveTarget func(ctx context.Context, name string, af agentFlags) (*target, error)

	Agent      string
	AgentFlags agentFlags
	Timeout    time.Duration
}

// newCmdGetCard builds get-card; runF, when not nil, runs in place of
// getCardRun (a test's, which gets the options as parsed).
func newCmdGetCard(f *Factory, runF func(context.Context, *getCardOptions) error) *cobra.Command {
	opts := &getCardOptions{Printer: f.Printer, ResolveTarget: f.ResolveTarget}
	cmd := &cobra.Command{
		Use:   "get-card <agent>",
		Short: "Show an agent's card: what it does, its skills and capabilities",
		Long: `Show the A2A agent card of one agent: its description, protocol version,
capabilities (streaming, push notifications), how it authenticates and its
skills (on Agent Builder, one per tool the agent may use).

--json prints the card exactly as the server sent it.`,
		Example: `  a2a-courier get-card elastic-ai-agent
  a2a-courier get-card audit-agent --json | jq .skills
  a2a-courier get-card --url https://agents.example.com/research
  a2a-courier get-card research          # a peer of the config file`,
		Args: rangeArgs(0, 1, "an agent id (see `a2a-courier discover`), a peer, or --url"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if opts.Agent, _, err = splitAgentArgs(opts.AgentFlags, args, 0); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return getCardRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	addAgentFlags(cmd, &opts.AgentFlags)
	return cmd
}

func getCardRun(ctx context.Context, opts *getCardOptions) error {
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	af := opts.AgentFlags
	af.freshCard, af.cardOnly = true, true
	tg, err := opts.ResolveTarget(ctx, opts.Agent, af)
	if err != nil {
		return err
	}
	card := tg.Card
	pr := opts.Printer()
	if pr.json {
		return pr.writeRawJSON(card.Raw)
	}
	out := renderCard(card)
	if tg.Kind == store.TargetA2A {
		streaming := "polling tasks"
		if tg.Store.Streaming {
			streaming = "streaming"
		}
		out += fmt.Sprintf("%-13s %s (A2A %s %s, %s)\n", "Talking to:", singleLine(tg.Store.Endpoint), tg.Store.Dialect, client.Binding(tg.Store.Binding).Label(), streaming)
	}
	pr.payload(out)
	return nil
}

// renderCard is the card for people: the fields that tell what the agent
// does and how to talk to it. Each is the server's text: on one line, with
// nothing a terminal would act on (singleLine), piped or not.
func renderCard(c client.Card) string {
	var b strings.Builder
	line := func(k, v string) {
		if v = singleLine(v); v != "" {
			fmt.Fprintf(&b, "%-13s %s\n", k+":", v)
		}
	}
	line("Name", termui.Name(c.Get("name").String()))
	line("Description", c.Get("description").String())
	line("Version", c.Get("version").String())
	proto := c.Get("protocolVersion").String()
	if proto == "" {
		c.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
			proto = i.Get("protocolVersion").String()
			return false
		})
	}
	line("Protocol", proto)
	line("URL", c.Get("url").String())
	caps := []string{}
	for _, k := range []string{"streaming", "pushNotifications", "stateTransitionHistory"} {
		if v := c.Get("capabilities." + k); v.Exists() {
			caps = append(caps, fmt.Sprintf("%s=%v", k, v.Bool()))
		}
	}
	line("Capabilities", strings.Join(caps, " "))
	var auth []string
	c.Get("securitySchemes").ForEach(func(name, sch gjson.Result) bool {
		desc := sch.Get("type").String()
		if in := sch.Get("in").String(); in != "" {
			desc += " in " + in + " " + sch.Get("name").String()
		}
		if scheme := sch.Get("scheme").String(); scheme != "" {
			desc += " " + scheme
		}
		auth = append(auth, name.String()+" ("+strings.TrimSpace(desc)+")")
		return true
	})
	line("Auth", strings.Join(auth, ", "))
	line("Input", strings.Join(stringList(c.Get("defaultInputModes")), ", "))
	line("Output", strings.Join(stringList(c.Get("defaultOutputModes")), ", "))
	skills := c.Get("skills").Array()
	fmt.Fprintf(&b, "Skills (%d):\n", len(skills))
	for _, s := range skills {
		id := termui.Name(s.Get("id").String())
		desc := singleLine(s.Get("description").String())
		if desc != "" && desc != id {
			fmt.Fprintf(&b, "  - %s: %s\n", id, desc)
		} else {
			fmt.Fprintf(&b, "  - %s\n", id)
		}
	}
	return b.String()
}

func stringList(r gjson.Result) []string {
	var out []string
	r.ForEach(func(_, v gjson.Result) bool {
		out = append(out, v.String())
		return true
	})
	return out
}
