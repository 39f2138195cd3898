package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/simulator"
	"github.com/a2a-courier/a2a-courier/store"
)

// demoOptions are demo's dependencies (the process whose simulator it
// starts and whose streams its commands print on) and flags.
type demoOptions struct {
	Process *Process
	Printer func() *printer

	keep bool
}

// newCmdDemo builds demo; runF, when not nil, runs in place of demoRun (a
// test's, which gets the options as parsed).
func newCmdDemo(f *Factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
	opts := &demoOptions{Process: f.Process, Printer: f.Printer}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Walk through discover, get-card, send, send-async and result against the built-in simulator",
		Long: `Start the built-in Kibana Agent Builder simulator on a loopback address and
run the main commands against it, showing what a user sees: discover,
get-card, send, send through a connection a proxy cuts, send-async with a
real detached worker, result --wait, fetch, a failing agent, and history
and show.

Nothing leaves the machine and no configuration is needed: the demo uses a
temporary state directory and the simulator's demo API key. Each command
is printed before it runs; its stdout and stderr are what you would see.

The simulator is test code, which the release build (go build, go
install) leaves out: build it in with -tags simulator.`,
		Example: `  a2a-courier demo
  go run -tags simulator ./cmd/a2a-courier demo`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Printer().json {
				return usageErr("run the commands themselves with --json", "demo has no JSON form")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.keep, "keep", false, "keep the temporary state directory and print its path")
	return cmd
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	p, pr := opts.Process, opts.Printer()
	if p.Simulator == nil {
		return noSimulator("demo")
	}
	sim, err := p.Simulator("127.0.0.1:0", simulator.Config{})
	if err != nil {
		return err
	}
	defer sim.Close()
	dir, err := os.MkdirTemp("", "a2a-courier-demo-")
	if err != nil {
		return err
	}
	stateDir := dir + "/state"
	defer func() {
		if opts.keep {
			pr.logf("\nstate directory kept: %s", stateDir)
			return
		}
		waitWorkersGone(stateDir, 10*time.Second)
		os.RemoveAll(dir)
	}()
	env := map[string]string{
		"KIBANA_URL":                sim.URL(),
		"KIBANA_API_KEY":            sim.APIKey(),
		"KIBANA_SPACE_ID":           "",
		"A2A_COURIER_STATE_DIR":     stateDir,
		"A2A_COURIER_POLL_INTERVAL": "1s",
	}
	heading := pr.errR.NewStyle().Bold(true).Foreground(lipgloss.Color("6"))
	note := pr.errR.NewStyle().Faint(true)
	say := func(s string) {
		for _, line := range strings.Split(s, "\n") {
			if line == "" {
				pr.logf("")
				continue
			}
			pr.logf("%s", note.Render(line))
		}
	}
	run := func(stdin string, args ...string) (string, int) {
		line := "$ a2a-courier " + quoteArgs(args)
		if stdin != "" {
			line = "$ echo " + quoteArgs([]string{stdin}) + " | a2a-courier " + quoteArgs(args)
		}
		pr.logf("%s", heading.Render(line))
		var out bytes.Buffer
		code := Run(ctx, childProcess(p, args, env, stdin, io.MultiWriter(p.Stdout, &out)))
		if code != ExitOK {
			say(fmt.Sprintf("(exit %d)", code))
		}
		return strings.TrimSpace(out.String()), code
	}

	say(fmt.Sprintf("Kibana Agent Builder simulator on %s (Kibana %s), three demo agents.", sim.URL(), sim.Version()))
	say("In real use, KIBANA_URL and KIBANA_API_KEY point at your Kibana.")

	say("\n1. Which agents are there?")
	run("", "discover")

	say("\n2. What does the audit agent do?")
	run("", "get-card", "audit-agent")

	say("\n3. A quick question, waiting for the reply (stdout is the reply only):")
	run("", "send", "elastic-ai-agent", "Which indices hold web logs?")

	say("\n4. A proxy cuts the connection after 1s of a 3s run: send reads the reply back from the conversation store.")
	sim.SetProxyCut(time.Second)
	run("Count last week's failed logins by user.", "send", "audit-agent", "-")
	sim.SetProxyCut(0)

	say("\n5. A long analysis in the background: send-async returns the contextId at once; a detached worker does the rest.")
	ctxID, code := run("", "send-async", "audit-agent", "Analyse the last 30 days of high-risk operations")
	if code != ExitOK || ctxID == "" {
		return &exitError{code: code}
	}
	run("", "result", ctxID, "--wait", "--timeout", "1m")

	say("\n6. From another machine, or after the state directory is lost, the contextId alone recovers the reply:")
	run("", "fetch", ctxID, "--json")

	say("\n7. A run that fails is reported as failed, with the reason, and exit code 6:")
	run("", "send", "flaky-agent", "Are you there?")

	say("\n8. Past work in two steps: titles and ids first, then one final reply (never the tool output):")
	run("", "history", "--limit", "5")
	run("", "show", ctxID)

	say(fmt.Sprintf("\nThe simulator counted %d run(s) for %s: nothing was sent twice.", sim.Runs(ctxID), ctxID))
	say("Next: set KIBANA_URL and KIBANA_API_KEY for your Kibana, then run `a2a-courier discover`.")
	return nil
}

// childProcess is process p with other arguments, environment and stdin,
// for running commands inside the demo.
func childProcess(p *Process, args []string, env map[string]string, stdin string, stdout io.Writer) *Process {
	parentEnv := p.Environ()
	return &Process{
		Args: args, Stdin: strings.NewReader(stdin), Stdout: stdout, Stderr: p.Stderr,
		StdoutTTY: p.StdoutTTY, StderrTTY: p.StderrTTY, TermWidth: p.TermWidth,
		LookupEnv: func(k string) (string, bool) {
			if v, ok := env[k]; ok {
				return v, v != ""
			}
			return p.LookupEnv(k)
		},
		Environ: func() []string {
			out := make([]string, 0, len(parentEnv)+len(env))
			for _, kv := range parentEnv {
				name, _, _ := strings.Cut(kv, "=")
				if _, ok := env[name]; !ok {
					out = append(out, kv)
				}
			}
			for k, v := range env {
				if v != "" {
					out = append(out, k+"="+v)
				}
			}
			return out
		},
		Executable: p.Executable, Now: p.Now, HTTPClient: p.HTTPClient, ExtraFile: p.ExtraFile, Simulator: p.Simulator,
	}
}

func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, s := range args {
		if strings.ContainsAny(s, " \t\"'$") {
			s = "\"" + strings.ReplaceAll(s, "\"", "\\\"") + "\""
		}
		out[i] = s
	}
	return strings.Join(out, " ")
}

// waitWorkersGone waits until no worker holds a lock in the state directory,
// so the directory is not removed under a worker's feet.
func waitWorkersGone(stateDir string, max time.Duration) {
	st, err := store.Open(stateDir)
	if err != nil {
		return
	}
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(stateDir + "/workers")
		busy := false
		for _, e := range entries {
			if id, ok := strings.CutSuffix(e.Name(), ".lock"); ok && st.WorkerRunning(id) {
				busy = true
			}
		}
		if !busy {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
