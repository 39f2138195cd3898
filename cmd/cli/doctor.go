package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/doctor"
)

// doctorOptions are doctor's flags. Its run is still the App's
// (runDoctor): it hands doctor.Run the App's clients and error report.
type doctorOptions struct {
	timeout time.Duration
}

// newCmdDoctor builds doctor, run by runF (App.runDoctor, or a test's).
func newCmdDoctor(_ *Factory, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the set-up: configuration, Kibana, the API key, the agents, the background worker",
		Long: `Check everything a2a-courier needs, each with pass or fail and a hint:
the configuration and its file permissions; the state directory; that Kibana
answers, over TLS; that the API key is accepted (401) and has the privilege in
the space (403); that Agent Builder is enabled (404 on the agents route); the
agents' cards (protocol version, streaming); and that a detached worker can
start and report back.

It exits 0 only when every check passes (warnings pass); otherwise with the
exit code of the first failure.`,
		Example: `  a2a-courier doctor
  a2a-courier doctor --json --profile prod`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 20*time.Second, "how long to wait for each check")
	return cmd
}

func (a *App) runDoctor(ctx context.Context, opts *doctorOptions) error {
	s, _ := a.loadSettings()
	_, configured := a.kibanaSettings()
	rep := doctor.Run(ctx, &doctor.Env{Settings: s, Configured: configured, ConfigPath: a.configPath(), Timeout: opts.timeout,
		Store: a.openStore, Kibana: a.kibana, Engine: a.engine, Caches: a.caches,
		Classify: func(err error) doctor.Problem {
			ce := classify(err)
			return doctor.Problem{Message: ce.message, Hint: a.hint(ce.hint), Exit: ce.exit, Setup: ce.setup}
		}})
	pr := a.printer()
	if pr.json {
		doc := map[string]any{"ok": rep.OK, "checks": rep.Checks}
		if rep.Kibana != nil {
			doc["kibana"] = rep.Kibana
		}
		if rep.Setup != nil {
			doc["setup"] = rep.Setup
		}
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(rep.Exit)
	}
	var b strings.Builder
	for _, c := range rep.Checks {
		mark := map[string]string{doctor.Pass: "✓", doctor.Fail: "✗", doctor.Warn: "!", doctor.Skip: "-"}[c.Status]
		fmt.Fprintf(&b, "%s %-22s %s\n", mark, c.Name, c.Detail)
		if c.Hint != "" && c.Status != doctor.Pass {
			fmt.Fprintf(&b, "  %-22s hint: %s\n", "", c.Hint)
		}
	}
	b.WriteString(map[bool]string{true: "all checks passed\n", false: "some checks failed\n"}[rep.OK])
	if rep.Setup != nil {
		b.WriteString("\n" + config.SetupSteps() + "\n")
	}
	pr.payload(b.String())
	return exitWith(rep.Exit)
}
