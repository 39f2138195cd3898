// Package cli holds a2a-courier's commands. It turns argv into calls of the
// client and store packages and their results into output and an exit code.
// Everything it takes from the process (arguments, streams, environment,
// executable path, clock, signals) comes in through Process, so tests run
// in parallel with their own environment.
package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2a-courier/a2a-courier/internal/buildinfo"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/simulator"
)

// Version is set at build time with -ldflags "-X …/cmd/cli.Version=v1.2.3",
// and Commit with "-X …/cmd/cli.Commit=<sha>" (scripts/release sets both).
var Version, Commit = "", ""

// Process is the program's view of the process it runs in.
type Process struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	StdinTTY, StdoutTTY, StderrTTY bool
	// TermWidth returns the width of the terminal on stdout, 0 if unknown.
	TermWidth func() int

	LookupEnv func(string) (string, bool)
	// Environ returns the environment a spawned worker inherits.
	Environ func() []string
	// Executable returns the path of this program, for spawning workers.
	Executable func() (string, error)
	Now        func() time.Time
	// HTTPClient, when set, replaces the default HTTP client.
	HTTPClient *http.Client
	// ExtraFile returns an inherited file by descriptor number (the worker
	// reads its credential from descriptor 3, or on Windows the handle its
	// --credential-handle names).
	ExtraFile func(fd uintptr) *os.File
	// Simulator starts the Agent Builder simulator for demo and dev-server;
	// nil in a release build, which does not carry it (cmd/a2a-courier).
	Simulator simulator.Start
	// WatchSignals, when set, is called as a command that may wait starts:
	// from then on a signal cancels the context Run was given.
	WatchSignals func()
	// Tool marks a command the MCP server runs: the connection flags are
	// the server's own, so the commands it prints leave them out.
	Tool bool
	// Events, when its hooks are set, is told as the command goes what an
	// in-process caller (the MCP server) follows, as values: the task a
	// send recorded, the status updates of --progress (whose lines it
	// then does not print). Nothing of stderr is read for its meaning.
	Events mcpserver.Events
}

// Main runs the program with the real process and returns its exit code.
// sim is the simulator demo and dev-server run (nil: none).
func Main(sim simulator.Start) int {
	// A write to a closed stdout or stderr (a caller, or its tool runner,
	// that closed its end of the pipe) fails with EPIPE instead of killing
	// the process: Go kills a program by SIGPIPE on such a write to
	// descriptors 1 and 2 unless SIGPIPE is ignored or notified
	// (os/signal). A write to a closed stream must never decide whether or
	// when a message is sent, nor leave its record half done: the printer
	// loses the line and the engine goes on. Ignored rather than notified:
	// no goroutine, no signal thread for it; the one program this process
	// starts is itself (a worker), which ignores it too.
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &Process{
		Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StdinTTY:  term.IsTerminal(os.Stdin.Fd()),
		StdoutTTY: term.IsTerminal(os.Stdout.Fd()),
		StderrTTY: term.IsTerminal(os.Stderr.Fd()),
		TermWidth: func() int {
			w, _, err := term.GetSize(os.Stdout.Fd())
			if err != nil {
				return 0
			}
			return w
		},
		LookupEnv:    os.LookupEnv,
		Environ:      os.Environ,
		Executable:   os.Executable,
		Now:          time.Now,
		ExtraFile:    func(fd uintptr) *os.File { return os.NewFile(fd, "inherited") },
		Simulator:    sim,
		WatchSignals: func() { watchSignals(cancel) },
	}
	return Run(ctx, p)
}

// watchSignals makes SIGINT, SIGTERM and SIGHUP (a closed terminal)
// cancel the command's context, with the signal as its cause: a waiting
// send hands its task to a worker (or, on Ctrl-C before anything was sent,
// drops it), a worker leaves its tasks for the next one. A second signal
// kills the process. Only a command that may wait pays for it (a goroutine,
// and the runtime's signal thread): version does not.
func watchSignals(cancel context.CancelCauseFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		cancel(&signalError{sig})
		signal.Stop(sigs)
	}()
}

// signalError is the cause of a context a signal canceled.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + e.sig.String() }

// userInterrupted reports whether ctx ended because the user pressed
// Ctrl-C (SIGINT), as opposed to a timeout, SIGTERM or a closed terminal.
func userInterrupted(ctx context.Context) bool {
	var se *signalError
	return errors.As(context.Cause(ctx), &se) && se.sig == os.Interrupt
}

// Run executes one command line and returns the exit code.
func Run(ctx context.Context, p *Process) int {
	p.fillDefaults()
	app := newApp(p)
	root := newRootCmd(app, invokedCommand(p.Args))
	root.SetArgs(p.Args)
	root.SetIn(p.Stdin)
	root.SetOut(p.Stdout) // --help is the payload asked for
	root.SetErr(p.Stderr)
	app.jsonOut = wantsJSON(p.Args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ex *exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	var ce *cliError
	if !errors.As(err, &ce) && strings.HasPrefix(err.Error(), "unknown command") {
		err = unknownCommandErr(err)
	}
	ce = classify(err)
	var re *remoteErr
	if errors.As(err, &re) {
		ce = remoteHint(ce)
	}
	pr := app.printer()
	if ve := (*viewErr)(nil); errors.As(err, &ve) {
		pr = pr.withCaller(func() nextstep.Caller { return app.callerWith(ve.view) })
	}
	pr.printError(ce)
	return ce.exit
}

// waitFlags are the flags of a command that waits (send, send-async,
// result) that the steps it prints keep as the caller gave them: a
// --timeout given, and --progress.
func waitFlags(c *cobra.Command) []nextstep.Arg {
	var w []nextstep.Arg
	if n := c.Name(); n != "send" && n != "send-async" && n != "result" {
		return nil
	}
	if f := c.Flags().Lookup("timeout"); f != nil && f.Changed {
		w = append(w, nextstep.Arg{Flag: "--timeout", Value: f.Value.String()})
	}
	if f := c.Flags().Lookup("progress"); f != nil && f.Value.String() == "true" {
		w = append(w, nextstep.Arg{Flag: "--progress", Bool: true})
	}
	return w
}

// unknownCommandErr turns cobra's unknown-command error, whose suggestions
// ("Did you mean this?") follow the first line, into a usage error that
// names them in its hint.
func unknownCommandErr(err error) *cliError {
	lines := strings.Split(err.Error(), "\n")
	var suggestions []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "\t") && strings.TrimSpace(l) != "" {
			suggestions = append(suggestions, "`a2a-courier "+strings.TrimSpace(l)+"`")
		}
	}
	hint := "run `a2a-courier --help` for the commands and flags"
	if len(suggestions) > 0 {
		hint = "did you mean " + strings.Join(suggestions, " or ") + "? " + hint
	}
	return usageErr(hint, "%s", lines[0])
}

// exitError carries an exit code for a result that was already printed:
// a task that failed, needs input or is still running is reported as a
// document, not as an error message.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit " + strconv.Itoa(e.code) }

// wantsJSON looks for --json before flag parsing, so that even a flag error
// is reported as a JSON document when one was asked for.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

func (p *Process) fillDefaults() {
	if p.Stdin == nil {
		p.Stdin = strings.NewReader("")
	}
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.Stderr == nil {
		p.Stderr = io.Discard
	}
	if p.LookupEnv == nil {
		p.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if p.Environ == nil {
		p.Environ = func() []string { return nil }
	}
	if p.Executable == nil {
		p.Executable = os.Executable
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.TermWidth == nil {
		p.TermWidth = func() int { return 0 }
	}
	if p.ExtraFile == nil {
		p.ExtraFile = func(uintptr) *os.File { return nil }
	}
}

func (p *Process) getenv(k string) string {
	v, _ := p.LookupEnv(k)
	return v
}

// App is the root command line: the process, the root's flags as parsed
// (--json, --profile and the connection flags, -v), the wait flags of the
// command that runs, and the parts its Factory is made of.
type App struct {
	p       *Process
	jsonOut bool
	out     *printer
	flags   config.Flags
	// verbose shows the requests on stderr (-v).
	verbose bool
	// waits are the flags of a command that waits as the caller gave
	// them (--timeout, --progress), which its printed steps keep: the
	// parsed command line, set once, before the command runs
	// (PersistentPreRunE, waitFlags), as flags is.
	waits []nextstep.Arg

	set  *settings
	eng  *engines
	tgts *targets
}

// newApp is the App of one command line on p.
func newApp(p *Process) *App {
	a := &App{p: p}
	a.eng = &engines{p: p, verbose: &a.verbose, printer: a.printer}
	a.set = &settings{p: p, flags: &a.flags, printer: a.printer, clients: a.eng.httpClients}
	a.tgts = &targets{p: p, set: a.set, eng: a.eng, printer: a.printer, tokenFile: func() string { return a.flags.TokenFile }}
	a.set.credentialFor = a.tgts.credentialFor
	return a
}

func (a *App) printer() *printer {
	if a.out == nil {
		a.out = newPrinter(a.p, a.jsonOut)
		a.out.caller = a.caller
	}
	return a.out
}

// caller is what the steps printed for the caller keep of its command
// line: its connection flags (none when the MCP server runs the command:
// the flags are the server's), the flags of a command that waits
// (--timeout), --json, and where the settings a hint speaks of came from
// (config.Settings.Where, once they are loaded).
func (a *App) caller() nextstep.Caller { return a.callerWith(&taskView{}) }

// callerWith is caller for a command that reads recorded tasks as v says:
// with the profile a task was sent with, its commands carry --profile,
// and its hints speak of that profile's settings.
func (a *App) callerWith(v *taskView) nextstep.Caller {
	c := nextstep.Caller{Waits: a.waits, JSON: a.jsonOut, Tool: a.p.Tool}
	s := v.inUse(a.set.configured)
	if !a.p.Tool {
		flags := a.flags
		if v.profile != "" {
			flags.Profile = v.profile
		}
		for _, f := range []nextstep.Flag{{Name: "--profile", Value: flags.Profile}, {Name: "--kibana-url", Value: flags.KibanaURL},
			{Name: "--space", Value: flags.Space}, {Name: "--api-key-file", Value: flags.APIKeyFile}, {Name: "--token-file", Value: flags.TokenFile}} {
			if f.Value != "" {
				c.Conn = append(c.Conn, f)
			}
		}
	}
	c.Where = func(v nextstep.Setting, check bool) string {
		switch {
		case s != nil:
			return s.WhereTo(v, check, a.p.Tool)
		case check:
			return "check " + string(v)
		}
		return string(v)
	}
	return c
}

func versionString() string { return buildinfo.Version(Version) }

// commandSpec is one command of the tree: its name, and how it is built.
// human marks a command for people, which the skill leaves out.
type commandSpec struct {
	name  string
	human bool
	build func(*App) *cobra.Command
}

// commandSpecs is the command tree, in the order --help lists it.
func commandSpecs() []commandSpec {
	return []commandSpec{
		{"discover", false, func(a *App) *cobra.Command { return newCmdDiscover(a.factory(), nil) }},
		{"get-card", false, func(a *App) *cobra.Command { return newCmdGetCard(a.factory(), nil) }},
		{"send", false, func(a *App) *cobra.Command { return newCmdSend(a.factory(), nil) }},
		{"send-async", false, func(a *App) *cobra.Command { return newCmdSendAsync(a.factory(), nil) }},
		{"result", false, func(a *App) *cobra.Command { return newCmdResult(a.factory(), nil) }},
		{"fetch", false, func(a *App) *cobra.Command { return newCmdFetch(a.factory(), nil) }},
		{"cancel", false, func(a *App) *cobra.Command { return newCmdCancel(a.factory(), nil) }},
		{"tasks", false, func(a *App) *cobra.Command { return newCmdTasks(a.factory(), nil) }},
		{"prune", false, func(a *App) *cobra.Command { return newCmdPrune(a.factory(), nil) }},
		{"history", false, func(a *App) *cobra.Command { return newCmdHistory(a.factory(), nil) }},
		{"show", false, func(a *App) *cobra.Command { return newCmdShow(a.factory(), nil) }},
		{"doctor", false, func(a *App) *cobra.Command { return newCmdDoctor(a.factory(), nil) }},
		{"config", false, func(a *App) *cobra.Command { return newCmdConfig(a.factory()) }},
		{"mcp", false, func(a *App) *cobra.Command { return newCmdMCP(a.factory(), nil) }},
		{"skill", true, func(a *App) *cobra.Command { return newCmdSkill(a.factory()) }},
		{"version", true, func(a *App) *cobra.Command { return newCmdVersion(a.factory(), nil) }},
		{"demo", true, func(a *App) *cobra.Command { return newCmdDemo(a.factory(), nil) }},
		{"dev-server", true, func(a *App) *cobra.Command { return newCmdDevServer(a.factory(), nil) }},
		{"serve", true, func(a *App) *cobra.Command { return newCmdServe(a.factory(), nil) }},
		{"worker", false, func(a *App) *cobra.Command { return newCmdWorker(a.factory(), nil) }},
	}
}

// invokedCommand is the command the arguments run, when it can be told
// before they are parsed: the first word that is not a flag (or a root
// flag's value). A command line runs faster when only its command is
// built. "" means the whole tree: help, completion, an unknown command,
// a flag alone (--version).
func invokedCommand(args []string) string {
	valued := map[string]bool{"--profile": true, "--kibana-url": true, "--space": true, "--api-key-file": true, "--token-file": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case valued[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			for _, sc := range commandSpecs() {
				if sc.name == a {
					return a
				}
			}
			return ""
		}
	}
	return ""
}

// newRootCmd builds the command tree: only the command named only, or
// every command when only is "".
func newRootCmd(app *App, only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "a2a-courier",
		Short: "Hand work to remote A2A agents and bring back the final reply",
		Long: `a2a-courier hands work to remote agents over the A2A protocol, first the agents
of Elastic Kibana's Agent Builder, and brings back the final reply only.

Long runs survive a dropped connection, the caller leaving and a crashed
worker: the contextId is chosen and recorded before anything is sent, a
detached worker reads the result back from the server's conversation
store, and nothing is ever sent twice.

Configuration comes from the environment:
  KIBANA_URL        Kibana's URL (not Elasticsearch's), e.g.
                    https://my-deployment.kb.europe-west1.gcp.cloud.es.io
  KIBANA_API_KEY    an Elasticsearch API key ("encoded" value) with Agent
                    Builder read
  KIBANA_SPACE_ID   the Kibana space (default: the default space)

Output: stdout carries only the result; progress and hints go to stderr.
With --json, stdout carries exactly one JSON document, errors included.

` + exitCodeTable,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Version:           versionString(),
		DisableAutoGenTag: true,
	}
	root.SetVersionTemplate("a2a-courier {{.Version}}\n")
	// A wait of zero or less is a mistake, not "no time at all": say so
	// before anything is asked of a server.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if app.p.WatchSignals != nil && c.Name() != "version" {
			app.p.WatchSignals()
		}
		app.waits = waitFlags(c)
		for _, name := range []string{"timeout", "poll-interval", "max-wait"} {
			if f := c.Flags().Lookup(name); f != nil && f.Changed && f.Value.Type() == "duration" {
				if d, err := time.ParseDuration(f.Value.String()); err == nil && d <= 0 {
					return usageErr("use a positive duration such as 30s or 5m", "--%s must be positive, not %s", name, f.Value.String())
				}
			}
		}
		return nil
	}
	pf := root.PersistentFlags()
	pf.BoolVar(&app.jsonOut, "json", app.jsonOut, "print exactly one JSON document on stdout (errors too)")
	pf.StringVar(&app.flags.Profile, "profile", "", "profile of the config file to use (env A2A_COURIER_PROFILE)")
	pf.StringVar(&app.flags.KibanaURL, "kibana-url", "", "Kibana URL (env KIBANA_URL)")
	pf.StringVar(&app.flags.Space, "space", "", "Kibana space (env KIBANA_SPACE_ID)")
	pf.StringVar(&app.flags.APIKeyFile, "api-key-file", "", "read the API key from this file, readable by you alone (the key itself is never a flag value: put it in KIBANA_API_KEY or the config file)")
	pf.StringVar(&app.flags.TokenFile, "token-file", "", "read an --url agent's token from this file, readable by you alone (env A2A_COURIER_TOKEN)")
	pf.BoolVarP(&app.verbose, "verbose", "v", false, "show each HTTP request on stderr: method, URL, status, time (never a credential); the requests a background worker makes (send-async's, a send's handed over) go to the worker's log, which stderr names")
	root.SetFlagErrorFunc(flagError)
	for _, sc := range commandSpecs() {
		if only != "" && sc.name != only {
			continue
		}
		c := sc.build(app)
		if sc.human {
			c.Annotations = map[string]string{"skill": "omit"}
		}
		root.AddCommand(c)
	}
	if only == "" {
		root.InitDefaultCompletionCmd()
	}
	groupCommands(app, root)
	// Flag descriptions wrap at 80 columns, as the rest of the help does.
	root.SetUsageTemplate(strings.NewReplacer(
		".LocalFlags.FlagUsages", ".LocalFlags.FlagUsagesWrapped 80",
		".InheritedFlags.FlagUsages", ".InheritedFlags.FlagUsagesWrapped 80",
	).Replace(root.UsageTemplate()))
	return root
}

// flagError reports a flag cobra could not parse as a usage error whose
// hint is the help of the command at hand. A flag that would carry a
// secret gets its own message: a key or token is never a flag value (argv
// is visible to other users and lands in shell history), and the value
// given is never repeated.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) && bad.GetFlag() != nil && bad.GetFlag().Value.Type() == "duration" {
		// Every duration flag: "--timeout 90" means 90s.
		v := []rune(bad.GetValue())
		return usageErr(config.DurationHint(string(v)), "--%s %q is not a duration", bad.GetFlag().Name, string(v[:min(len(v), 40)]))
	}
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		switch strings.ToLower(strings.ReplaceAll(name, "_", "-")) {
		case "api-key", "apikey", "key", "kibana-api-key", "kibana-key", "elastic-api-key", "password", "secret":
			return usageErr("set KIBANA_API_KEY, give --api-key-file <file> (readable by you alone), or store it in a profile "+
				"from stdin: "+shellcmd.FromFile("a2a-courier config set api-key", "key-file"),
				"--%s: the API key is never a flag value (other users can read a command line, and shells keep it)", name)
		case "token", "bearer", "bearer-token", "auth-token", "access-token", "a2a-token":
			return usageErr("give --token-file <file> (readable by you alone), or set A2A_COURIER_TOKEN with A2A_COURIER_TOKEN_ORIGIN "+
				"(the origin it may be sent to); a peer of the config file takes token_env or token_file",
				"--%s: a token is never a flag value (other users can read a command line, and shells keep it)", name)
		}
	}
	// pflag quotes the whole word of an unknown shorthand ("unknown
	// shorthand flag: 'p' in -pSecret"): the rest of it may be a value,
	// so it is not repeated.
	if i := strings.Index(msg, "' in -"); i >= 0 && strings.HasPrefix(msg, "unknown shorthand flag: '") {
		msg = msg[:i+1]
	}
	if rest, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		// "---api-key=SECRET": the name, never what follows '='.
		name, _, _ := strings.Cut(rest, "=")
		msg = "bad flag syntax: " + name
	}
	return usageErr("run `"+c.CommandPath()+" --help` for its flags", "%s", msg)
}

// groupCommands gives the commands that only group others and have no
// RunE of their own (the root, completion) groupRun; completion also takes
// any argument, so that an unknown subcommand is a usage error (exit 2)
// instead of its help and exit 0. The root keeps cobra's own check, which
// suggests a command near an unknown one.
func groupCommands(app *App, c *cobra.Command) {
	for _, sub := range c.Commands() {
		groupCommands(app, sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	if c.HasParent() {
		c.Args = cobra.ArbitraryArgs
	}
	c.RunE = groupRun(app)
}

// groupRun runs a command that only groups others: alone it prints its
// help, except with --json, where stdout is one JSON document or nothing:
// then it is a usage error (exit 2) that lists the subcommands.
func groupRun(app *App) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		names := strings.Join(subcommandNames(cmd), ", ")
		if len(args) > 0 {
			return usageErr(suggest(cmd, args[0])+"run `"+cmd.CommandPath()+" --help`",
				"unknown %s subcommand %q: use one of %s", commandName(cmd), args[0], names)
		}
		if !app.jsonOut {
			return cmd.Help()
		}
		if !cmd.HasParent() {
			return usageErrSay(say("%s for what each command does", nextstep.New("--help").Run()), "a command is needed: one of %s", names)
		}
		return usageErr("run `"+cmd.CommandPath()+" --help` for what each does", "%s needs a subcommand: one of %s", commandName(cmd), names)
	}
}

// subcommandNames lists the subcommands a user may run.
func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// suggest is the start of a hint naming the subcommand of cmd nearest to
// an unknown one ("did you mean `a2a-courier config show`? "), or "".
func suggest(cmd *cobra.Command, unknown string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default for the root
	}
	if s := cmd.SuggestionsFor(unknown); len(s) > 0 {
		return "did you mean `" + cmd.CommandPath() + " " + s[0] + "`? "
	}
	return ""
}

// exactArgs is cobra.ExactArgs with a usage error that names the command.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("usage: "+cmd.UseLine(), "%s needs %s", commandName(cmd), what)
		}
		if len(args) > n && n == 0 && cmd.HasSubCommands() {
			return usageErr(suggest(cmd, args[0])+"run `"+cmd.CommandPath()+" --help`", "%s has no subcommand %q: it takes %s", commandName(cmd), args[0], what)
		}
		if len(args) > n {
			hint := "usage: " + cmd.UseLine()
			if n > 0 {
				hint += " (quote an argument that holds spaces)"
			}
			return usageErr(hint, "%s takes %s, and %s given", commandName(cmd), what, plural(len(args), "argument")+map[bool]string{true: " was", false: " were"}[len(args) == 1])
		}
		return nil
	}
}

func rangeArgs(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageErr("usage: "+cmd.UseLine(), "%s takes %s", commandName(cmd), what)
		}
		return nil
	}
}

// RootCommand returns the command tree for generating documentation: its
// commands are not meant to be run.
func RootCommand() *cobra.Command {
	p := &Process{}
	p.fillDefaults()
	return newRootCmd(newApp(p), "")
}

// commandName is the command's path without the program's name.
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
