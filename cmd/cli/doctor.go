package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/doctor"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// doctorOptions are doctor's dependencies (what doctor.Run checks with)
// and flags.
type doctorOptions struct {
	Printer        func() *printer
	Settings       func() (*config.Settings, error)
	KibanaSettings func() (*config.Settings, error)
	ConfigPath     func() string
	Store          func() (*store.Store, error)
	Kibana         func(*config.Settings) (*client.Kibana, error)
	Engine         func() (*courier.Courier, error)
	Caches         func() *courier.Courier
	Caller         func() nextstep.Caller
	// LookupEnv reads the environment (the proxy variables).
	LookupEnv func(string) (string, bool)

	timeout time.Duration
}

// newCmdDoctor builds doctor; runF, when not nil, runs in place of
// doctorRun (a test's, which gets the options as parsed).
func newCmdDoctor(f *Factory, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{Printer: f.Printer, Settings: f.Settings, KibanaSettings: f.KibanaSettings, ConfigPath: f.ConfigPath,
		Store: f.Store, Kibana: f.Kibana, Engine: f.Engine, Caches: f.Caches, Caller: f.Caller, LookupEnv: f.Process.LookupEnv}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the set-up: configuration, Kibana, the API key, the agents, the background worker",
		Long: `Check everything a2a-courier needs, each with pass or fail and a hint:
the configuration and its file permissions; the state directory; the proxy
that HTTPS_PROXY or HTTP_PROXY names, when one is set; that Kibana answers,
over TLS; that the API key is accepted (401) and has the privilege in
the space (403); that Agent Builder is enabled (404 on the agents route); the
agents' cards (protocol version, streaming); and that a detached worker can
start and report back.

It exits 0 only when every check passes (warnings pass); otherwise with the
exit code of the first failure.`,
		Example: `  a2a-courier doctor
  a2a-courier doctor --json --profile prod`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 20*time.Second, "how long to wait for each check")
	return cmd
}

func doctorRun(ctx context.Context, opts *doctorOptions) error {
	s, _ := opts.Settings()
	_, configured := opts.KibanaSettings()
	rep := doctor.Run(ctx, &doctor.Env{Settings: s, Configured: configured, ConfigPath: opts.ConfigPath(), Timeout: opts.timeout,
		Store: opts.Store, Kibana: opts.Kibana, Engine: opts.Engine, Caches: opts.Caches, LookupEnv: opts.LookupEnv,
		Classify: func(err error) doctor.Problem {
			ce := classify(err)
			return doctor.Problem{Message: ce.message, Hint: opts.Caller().Text(ce.hint), Exit: ce.exit, Setup: sayAll(opts.Caller().Text, ce.setup)}
		}})
	pr := opts.Printer()
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
