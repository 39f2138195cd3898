package cli

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/mcpinstall"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
	"github.com/a2a-courier/a2a-courier/store"
)

// mcpOptions are mcp's dependencies: the process it serves on, the
// state directory (which tasks it holds), the root's flags (the key and
// token files no tool sends) and the caller's connection flags (which
// each tool's command line keeps).
type mcpOptions struct {
	Process *Process
	Printer func() *printer
	Store   func() (*store.Store, error)
	Flags   func() config.Flags
	Caller  func() nextstep.Caller
}

// newCmdMCP builds mcp and mcp install; runF, when not nil, runs in place
// of mcpRun (a test's, which gets the options).
func newCmdMCP(f *Factory, runF func(context.Context, *mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{Process: f.Process, Printer: f.Printer, Store: f.Store, Flags: f.Flags, Caller: f.Caller}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the commands as MCP tools on stdin and stdout, for assistants that speak MCP",
		Long: `Serve a2a-courier as an MCP server over stdio (the official Go SDK), for
Claude Desktop, Cursor, VS Code, Gemini CLI and any assistant that speaks
MCP: its tools are discover, get_card, send, send_async, result, fetch,
history, show, cancel and tasks, each the command of that name run in this
process with --json. A tool's structuredContent is the command's --json
document, beside a short text; a command's error is a tool result with
isError, its message and its hint, never a protocol error. send waits at
most wait_seconds (45 by default, at most 600), result only when given
wait_seconds (it answers at once by default), with progress notifications
that carry the agent's latest status, then return state working and the
context_id: the task goes on in a detached worker, as for the command line.
send, result, fetch and show cut a reply at max_chars, 20,000 characters by
default (the whole reply stays in the file the document names); a bad tool
argument is a tool error with a hint, never run. send and send_async take
files (absolute paths on this machine) and data (JSON values), as --file
and --data; a file only from the directories A2A_COURIER_MCP_FILES lists
(separated as in PATH; without it no file is sent: an agent's reply may tell
the assistant to send anything), never a2a-courier's own config file or
directory, state directory, key or token files. In structuredContent,
resume and answer are the tool call that does it ({"tool","arguments"}) and
the hints are in tool terms, as in the text. A line of stdin that is not a
JSON-RPC message gets a JSON-RPC error (-32700, or -32600 for what is not a
request, or has an id that could not be answered as sent; batches are not
taken) and the server goes on.

The same state directory, workers, configuration and secrets as the command
line: the API key comes from the config file or the environment of the
assistant's process, never from a tool argument. An assistant starts the
server with its own environment: keep the settings in the config file
(a2a-courier config set), which "mcp install" checks.

"a2a-courier mcp install --target <assistant>" writes the server's entry
into the assistant's MCP configuration.`,
		Example: `  a2a-courier mcp install --target claude-desktop
  a2a-courier mcp            # what the assistant runs`,
		Args: exactArgs(0, "no arguments (or the subcommand install)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Printer().json {
				return usageErr("run `a2a-courier mcp` alone", "mcp speaks JSON-RPC on stdout: --json does not apply")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	cmd.AddCommand(newCmdMCPInstall(f, nil))
	return cmd
}

func mcpRun(ctx context.Context, opts *mcpOptions) error {
	p, pr := opts.Process, opts.Printer()
	pr.logf("a2a-courier mcp %s: serving MCP on stdin and stdout", versionString())
	dirs, ignored := mcpserver.FileDirs(p.getenv(mcpserver.FilesEnv), p.getenv("HOME"))
	if len(ignored) > 0 {
		pr.warn("%s: ignored %s: not absolute paths", mcpserver.FilesEnv, strings.Join(ignored, ", "))
	}
	o := mcpserver.Options{Run: opts.runner(), Version: versionString(), HasRecord: opts.hasRecord, Log: p.Stderr, FileDirs: dirs, Protected: opts.ownFiles}
	err := mcpserver.Serve(ctx, o, p.Stdin, p.Stdout)
	if err != nil && ctx.Err() == nil {
		return &cliError{exit: ExitUnexpected, code: "mcp", message: "mcp: " + courier.OneLine(err), err: err,
			hint: plain("the server's stdin could not be read; see the assistant's MCP log")}
	}
	return nil
}

// mcpRunner runs a tool's command line in this process, as a command of
// its own: this process's environment, executable and connection flags
// (--profile …), its own streams, no terminal, and no signal handling of
// its own (the server's is the process's: a signal ends every call, each
// handing its task to a worker).
func (opts *mcpOptions) runner() mcpserver.Runner {
	var conn []string
	for _, f := range opts.Caller().Conn {
		conn = append(conn, f.Name, f.Value)
	}
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, ev mcpserver.Events) int {
		p := *opts.Process
		p.Args = append(append([]string{}, conn...), args...)
		p.Stdin, p.Stdout, p.Stderr, p.Events = stdin, stdout, stderr, ev
		p.StdinTTY, p.StdoutTTY, p.StderrTTY, p.TermWidth, p.WatchSignals, p.Tool = false, false, false, nil, nil, true
		return Run(ctx, &p)
	}
}

// ownFiles are a2a-courier's own files and directories, which no MCP tool
// sends (mcpserver.Options.Protected): the config file and directory, the
// state directory, the key and token files of --api-key-file and
// --token-file and of every profile and peer of the config file. Read at
// each call: the config file may have changed since the server started.
func (opts *mcpOptions) ownFiles() []string {
	getenv, flags := opts.Process.getenv, opts.Flags()
	own := []string{config.Dir(getenv), config.Path(getenv)}
	if dir, _ := config.StateDir(getenv); dir != "" {
		own = append(own, dir)
	}
	add := func(p string) {
		if p = config.ExpandHome(p, getenv); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				own = append(own, abs)
			}
		}
	}
	add(flags.APIKeyFile)
	add(flags.TokenFile)
	if cf, err := config.ReadFile(config.Path(getenv)); err == nil && cf != nil {
		for _, p := range cf.Profiles {
			add(p.APIKeyFile)
		}
		for _, p := range cf.Peers {
			add(p.TokenFile)
		}
	}
	return own
}

// hasRecord reports whether the state directory holds a task's record.
func (opts *mcpOptions) hasRecord(contextID string) bool {
	st, err := opts.Store()
	if err != nil {
		return false
	}
	_, err = st.Load(contextID)
	return err == nil
}

// mcpInstallOptions are mcp install's dependencies (the process's
// environment and executable, the root's flags: the profile and
// connection flags the entry keeps) and flags.
type mcpInstallOptions struct {
	Process *Process
	Printer func() *printer
	Flags   func() config.Flags

	target string
	dryRun bool
}

// newCmdMCPInstall builds mcp install; runF, when not nil, runs in place
// of mcpInstallRun (a test's, which gets the options as parsed).
func newCmdMCPInstall(f *Factory, runF func(*mcpInstallOptions) error) *cobra.Command {
	opts := &mcpInstallOptions{Process: f.Process, Printer: f.Printer, Flags: f.Flags}
	cmd := &cobra.Command{
		Use:   "install --target claude-desktop|cursor|vscode|gemini",
		Short: "Write the MCP server's entry into an assistant's MCP configuration",
		Long: `Write the entry that starts "a2a-courier mcp" into the user's MCP
configuration of an assistant: Claude Desktop (claude_desktop_config.json),
Cursor (~/.cursor/mcp.json), VS Code (the user profile's mcp.json) or Gemini
CLI (~/.gemini/settings.json). The entry's command is this binary's
absolute path and mcp, with the profile chosen here (by --profile or
A2A_COURIER_PROFILE: the assistant's process has neither), the
--kibana-url and --space given, and the --api-key-file or --token-file
given (absolute paths); its env holds only
A2A_COURIER_CONFIG_DIR and A2A_COURIER_STATE_DIR when they are not the
default ones: never a key or a token. When nothing here chooses a
profile, an entry installed before with one keeps it (and a line says
so); --profile default writes none: the assistant's process then takes
the config file's default profile.

The file is edited in place: other servers and settings, comments (VS
Code's JSON with comments) and the order of keys are kept, and a file that
already has the entry is left as it is. An entry of an earlier install is
updated in the keys of ours only (command, args, type, and in env
A2A_COURIER_CONFIG_DIR and A2A_COURIER_STATE_DIR): what was added to it by
hand (Gemini's timeout or trust, another env variable) stays. A file that
is a symbolic link stays one (the file it points to is written), and keeps
its mode and owner (root editing another user's file leaves it theirs). A
file is refused, with one line and nothing written, when it is not a
regular file, nests deeper than 1000 levels, has the servers key, the
entry's name or a key of the entry twice (the assistant would read the
last, a2a-courier edit the first), or has more than one hard link (a new
version would split them).

The settings are checked as the assistant's process will resolve them
(HOME and the entry's env and flags alone), and each lack is a warning of
one line. A setting this shell gives by its environment only, and the
entry's profile or config file does not (KIBANA_URL, KIBANA_API_KEY,
KIBANA_SPACE_ID, A2A_COURIER_CA_CERT, A2A_COURIER_INSECURE,
A2A_COURIER_TOKEN, a peer's token_env), is named: keep it in the config
file. A Kibana URL or API key found nowhere (every tool would answer "not
configured") is named with the config set command line that sets it, as
is a profile or key file the entry's process could not read. --dry-run
prints the file as it would be written, and writes nothing.

--json prints {"target","path","action","dry_run","command","args","env",
"warnings"} (and "content" with --dry-run); action is created (there was
no file), added, replaced or unchanged (then nothing is written, and no
restart is asked for). A file that starts with a UTF-8 byte order mark
keeps it; a replaced value is written in the layout of the one it
replaces (on one line where that was).`,
		Example: `  a2a-courier mcp install --target claude-desktop
  a2a-courier mcp install --target vscode --dry-run
  a2a-courier mcp install --target cursor --profile prod`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return mcpInstallRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.target, "target", "", "the assistant: claude-desktop, cursor, vscode or gemini")
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the file as it would be written; write nothing")
	return cmd
}

// binaryPath is this binary's absolute path, as mcp install and skill
// install write it for an assistant to start.
func binaryPath(p *Process) (string, error) {
	exe, err := p.Executable()
	if err == nil {
		exe, err = filepath.Abs(exe)
	}
	return exe, err
}

func mcpInstallRun(opts *mcpInstallOptions) error {
	if opts.target == "" {
		return usageErr("e.g. a2a-courier mcp install --target claude-desktop", "--target is required: %s", mcpinstall.TargetNames())
	}
	t, err := mcpinstall.ParseTarget(opts.target)
	if err != nil {
		return usageErr("e.g. a2a-courier mcp install --target claude-desktop", "--target: %v", err)
	}
	// --profile default: the entry names no profile (whatever
	// A2A_COURIER_PROFILE says), and its process takes the file's default.
	p, given := opts.Process, opts.Flags()
	drop := strings.EqualFold(given.Profile, "default")
	flags, getenv := given, p.getenv
	if drop {
		flags.Profile = ""
		getenv = func(k string) string {
			if k == "A2A_COURIER_PROFILE" {
				return ""
			}
			return p.getenv(k)
		}
	}
	s, err := config.Load(getenv, flags)
	if err != nil {
		return err
	}
	exe, err := binaryPath(p)
	if err != nil {
		return &cliError{exit: ExitUnexpected, code: "unexpected", message: "cannot find this binary's path: " + err.Error()}
	}
	dirs := userdirs.Host(p.getenv)
	path, err := mcpinstall.Path(t, dirs)
	if err != nil {
		return configErr("write the entry by hand: see `a2a-courier mcp install --help`", "%v", err)
	}
	// The directories the assistant's process, with the profile's
	// variables alone (HOME; on Windows USERPROFILE, APPDATA, LOCALAPPDATA),
	// finds.
	profile := dirs.ProfileOnly().Getenv
	setup := mcpinstall.Setup{Executable: exe, ConfigDir: config.Dir(p.getenv), StateDir: s.StateDir, HomeConfigDir: config.Dir(profile)}
	setup.HomeStateDir, _ = config.StateDir(profile)
	chosen := ""
	if s.Sources["profile"] == "flag --profile" || strings.HasPrefix(s.Sources["profile"], "env ") {
		chosen = s.Profile
	}
	var note string
	setup.Profile, note = mcpinstall.ChooseProfile(chosen, drop, mcpinstall.ProfileOf(mcpinstall.ExistingArgs(path, t, "a2a-courier")))
	for _, f := range [][2]string{{"--kibana-url", given.KibanaURL}, {"--space", given.Space}, {"--api-key-file", given.APIKeyFile}, {"--token-file", given.TokenFile}} {
		if v := f[1]; v != "" {
			if strings.HasSuffix(f[0], "-file") {
				v, _ = filepath.Abs(v)
			}
			setup.Flags = append(setup.Flags, f[0], v)
		}
	}
	setup.Check(s, profile)
	setup.EnvToken = p.getenv("A2A_COURIER_TOKEN") != ""
	setup.PeerTokenEnv = map[string]string{}
	for name, peer := range s.Peers {
		if peer.TokenEnv != "" && p.getenv(peer.TokenEnv) != "" {
			setup.PeerTokenEnv[name] = peer.TokenEnv
		}
	}
	entry := setup.Entry()
	res, err := mcpinstall.Install(path, t, entry, opts.dryRun)
	if re := (*mcpinstall.ReplaceError)(nil); errors.As(err, &re) {
		return configErr("if "+t.Title()+" is running it may hold the file open: close "+t.Title()+" and run mcp install again", "%s: %v", path, err)
	}
	if err != nil {
		return configErr("fix or move the file, then run mcp install again", "%s: %v", path, err)
	}
	warnings := setup.Warnings(t)
	pr := opts.Printer()
	if note != "" {
		pr.logf("%s", note)
	}
	if pr.json {
		doc := map[string]any{"target": t, "path": path, "action": res.Action(), "dry_run": opts.dryRun, "command": entry.Command,
			"args": entry.Args, "env": entry.Env, "warnings": append([]string{}, warnings...)}
		if opts.dryRun {
			doc["content"] = string(res.Content)
		}
		return pr.writeJSON(doc)
	}
	for _, w := range warnings {
		pr.warn("%s", w)
	}
	if opts.dryRun {
		pr.payload(string(res.Content))
		pr.info("would be %s: %s (nothing written)", res.Action(), path)
		return nil
	}
	pr.payload(res.Action() + ": " + path)
	if !res.Changed {
		return nil // the assistant has loaded this entry already, or will
	}
	command := shellcmd.Quote(entry.Command)
	for _, w := range entry.Args {
		command += " " + shellcmd.Quote(w)
	}
	pr.info("restart %s to load the a2a-courier server (%s)", t, command)
	return nil
}
