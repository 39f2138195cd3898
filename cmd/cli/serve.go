package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/serve"
)

// serveOptions are serve's dependencies and flags; serveRun turns them
// into serve.Options.
type serveOptions struct {
	Process *Process
	serve.Options
	skills    []string
	printCard bool
}

// newCmdServe is serve's command: runF runs it (serveRun when nil; a test
// gives its own to check the flags, with no server).
func newCmdServe(fa *Factory, runF func(context.Context, *serveOptions) error) *cobra.Command {
	o := &serveOptions{Process: fa.Process}
	cmd := &cobra.Command{
		Use:   "serve --exec \"<command> <args>\"",
		Short: "Serve a command-line agent as a durable A2A agent",
		Long: `Serve a command-line agent over A2A (0.3 and 1.0; JSON-RPC and HTTP+JSON), so
that an assistant or a2a-courier on another machine can hand work to it.

Each message runs the command once, in a fresh folder removed afterwards:
the message text on stdin, its files in that folder, A2A_CONTEXT_ID,
A2A_TASK_ID and A2A_CALLER in an allowlisted environment (no tokens or keys
of ours). stdout is the reply (a larger one comes as the file stdout.txt);
stderr lines are status updates; exit 0 is completed, anything else failed
with the last stderr line as the reason. A timeout or a cancel ends the
command's whole process group. The command line is split into words, never
given to a shell, unless --shell.

Each task is recorded before its command starts. After a restart, finished
tasks can still be read; a task that was running is recorded failed, never
run again. A blocking send that outlasts --response-window gets its task
back working; the result is recorded when it comes.

Guardrails: loopback by default; any other --listen needs --tls-cert-file,
--tls-key-file and --tokens-file. The tokens file ("name token" a line, yours
alone) gives each caller its own bearer token; only their hashes are kept.
Without it, serve makes <state>/serve/local-token (yours alone, kept across
restarts) and names it on stderr: callers give it with --token-file.
An unknown token gets 401, a caller past its rate 429 with Retry-After, a
send past --concurrency runs 503 "busy" with Retry-After (no queue: nothing
waits unseen). The audit log (<state>/serve/audit.jsonl) keeps metadata
only. It runs in the foreground, logging to stderr; Ctrl-C stops it.`,
		Example: `  a2a-courier serve --exec "muse exec --headless" --name muse
  a2a-courier serve --exec ./agent.sh --tokens-file ~/.config/a2a-courier/serve-tokens
  a2a-courier serve --exec "my-agent" --listen 0.0.0.0:8790 --tls-cert-file c.pem --tls-key-file k.pem --tokens-file tokens
  a2a-courier serve --exec "my-agent" --print-card`,
		Args: exactArgs(0, "no arguments: the command goes in --exec"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return serveRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Exec, "exec", "", "the command run once per message (split into words; no shell)")
	f.BoolVar(&o.Shell, "shell", false, "run --exec with the system's shell (sh -c, cmd /C): pipes and redirections, at your risk")
	f.StringVar(&o.Name, "name", "", "the agent's name on its card")
	f.StringVar(&o.Description, "description", "", "the agent's description on its card")
	f.StringArrayVar(&o.skills, "skill", nil, `a skill for the card, "id: description" (repeatable)`)
	f.StringVar(&o.Listen, "listen", serve.DefaultListen, "address to listen on; beyond loopback it needs TLS and a tokens file")
	f.StringVar(&o.PublicURL, "public-url", "", "the URL the card gives (default: from --listen)")
	f.StringVar(&o.TLSCert, "tls-cert-file", "", "file of the TLS certificate (PEM) to serve HTTPS")
	f.StringVar(&o.TLSKey, "tls-key-file", "", "file of the TLS private key (PEM), readable by you alone")
	f.StringVar(&o.TokensFile, "tokens-file", "", `callers' bearer tokens, "name token" a line, readable by you alone`)
	f.StringVar(&o.StateDir, "state-dir", "", "where tasks and the audit log are kept (default: <state directory>/serve)")
	f.IntVar(&o.Concurrency, "concurrency", 1, "most runs at a time; past it a send is answered busy (503, Retry-After)")
	f.DurationVar(&o.ResponseWindow, "response-window", serve.DefaultResponseWindow, "longest a blocking send waits; past it the task comes back working and goes on")
	f.DurationVar(&o.Timeout, "timeout", serve.DefaultTimeout, "longest a run may take; past it its process group is ended and the task fails")
	f.Float64Var(&o.RatePerMinute, "rate", 120, "requests a minute per caller (bursts of --burst); past it 429 with Retry-After")
	f.IntVar(&o.Burst, "burst", 30, "requests a caller may make at once")
	f.DurationVar(&o.Keep, "keep", 0, "how long finished tasks are kept (default 168h)")
	f.BoolVar(&o.printCard, "print-card", false, "print the agent card it would publish, and exit")
	return cmd
}

// serveRun serves o's command until ctx ends (or prints its card).
func serveRun(ctx context.Context, o *serveOptions) error {
	p, opts := o.Process, o.Options
	for _, s := range o.skills {
		id, desc, _ := strings.Cut(s, ":")
		id = strings.TrimSpace(id)
		if id == "" {
			return usageErr(`write --skill "id: description"`, "--skill %q has no id", s)
		}
		opts.Skills = append(opts.Skills, serve.Skill{ID: id, Name: id, Description: strings.TrimSpace(desc)})
	}
	if opts.StateDir == "" {
		dir, _ := config.StateDir(p.getenv)
		if dir == "" {
			return configErr("set A2A_COURIER_STATE_DIR or --state-dir", "cannot find a state directory: %v", config.NoStateDir(p.getenv))
		}
		opts.StateDir = filepath.Join(dir, "serve")
	}
	opts.Version = versionString()
	opts.LookupEnv = p.LookupEnv
	opts.Log = p.Stderr
	srv, err := serve.New(opts)
	if err != nil {
		return serveErr(err)
	}
	if o.printCard {
		_, err := fmt.Fprint(p.Stdout, string(srv.Card(false)))
		return err
	}
	return serveErr(srv.Serve(ctx))
}

// serveErr reports a refused setup as a usage error with its hint.
func serveErr(err error) error {
	var ue *serve.UsageError
	if errors.As(err, &ue) {
		return usageErr(ue.Hint, "%s", ue.Msg)
	}
	return err
}
