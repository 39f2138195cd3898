package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/configfile"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// newCmdConfig builds config, the group of config show, set, unset and
// path.
func newCmdConfig(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and change the configuration (profiles of the config file)",
		Long: `Show the effective configuration, each value with where it came from, and
change the profiles of the config file.

Precedence: flag > environment > config file > default. The config file is
$A2A_COURIER_CONFIG_DIR/config.yaml (default $XDG_CONFIG_HOME/a2a-courier,
else ~/.config/a2a-courier); it holds named profiles:

  default_profile: prod
  profiles:
    prod:
      kibana_url: https://prod.kb.europe-west1.gcp.cloud.es.io
      space: security
      api_key_file: ~/.config/a2a-courier/prod.key
      poll_interval: 20s
    lab:
      kibana_url: http://localhost:5601
      api_key: ...            # the file must then be readable by you alone

Pick a profile with --profile or A2A_COURIER_PROFILE. The API key is never a
flag value: "config set api-key" reads it from stdin.`,
		Example: `  a2a-courier config show
  a2a-courier config set kibana-url https://prod.kb.europe-west1.gcp.cloud.es.io --profile prod
  a2a-courier config set api-key --profile prod < prod.key
  a2a-courier config set default-profile prod
  a2a-courier config unset space --profile prod`,
		Args: exactArgs(0, "a subcommand: show, set, unset or path"),
		RunE: f.GroupRun,
	}
	cmd.AddCommand(newCmdConfigShow(f, nil), newCmdConfigSet(f, nil), newCmdConfigUnset(f, nil), newCmdConfigPath(f, nil))
	return cmd
}

// configShowOptions are config show's dependencies.
type configShowOptions struct {
	Printer    func() *printer
	Settings   func() (*config.Settings, error)
	ConfigPath func() string
}

// newCmdConfigShow builds config show; runF, when not nil, runs in place
// of configShowRun.
func newCmdConfigShow(f *Factory, runF func(*configShowOptions) error) *cobra.Command {
	opts := &configShowOptions{Printer: f.Printer, Settings: f.Settings, ConfigPath: f.ConfigPath}
	return &cobra.Command{
		Use:   "show",
		Short: "Show the effective settings and where each comes from (the key is never shown)",
		Example: `  a2a-courier config show
  a2a-courier config show --profile lab --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configShowRun(opts)
		},
	}
}

type settingDoc struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

func configShowRun(opts *configShowOptions) error {
	s, err := opts.Settings()
	if err != nil {
		return err
	}
	key := "not set"
	if s.APIKey != "" {
		key = "set (identity " + courier.Fingerprint(client.KibanaOrigin(s.URL), s.APIKey.Reveal()) + ")"
	}
	space := s.Space
	if space == "" {
		space = "default"
	}
	shownURL := s.URL
	if strings.Contains(shownURL, "@") {
		shownURL = client.RedactURL(shownURL) // a password in a URL is shown to no one
	}
	rows := []struct{ name, value string }{
		{"kibana_url", shownURL},
		{"space", space},
		{"api_key", key},
		{"ca_cert", s.CAFile},
		{"insecure", strconv.FormatBool(s.Insecure)},
		{"non_blocking", nonBlockingText(s.NonBlocking)},
		{"poll_interval", s.PollInterval.String()},
		{"max_wait", s.MaxWait.String()},
		{"send_timeout", s.SendTimeout.String()},
		{"wait_timeout", s.WaitTimeout.String()},
		{"state_dir", s.StateDir},
	}
	configFile, exists := s.ConfigFile, s.ConfigFile != ""
	if !exists {
		configFile = opts.ConfigPath()
	}
	pr := opts.Printer()
	if pr.json {
		doc := map[string]any{"profile": s.Profile, "config_file": configFile, "config_file_exists": exists}
		set := map[string]settingDoc{}
		for _, r := range rows {
			set[r.name] = settingDoc{Value: r.value, Source: s.Sources[r.name]}
		}
		doc["settings"] = set
		doc["profiles"] = append([]config.ProfileSummary{}, s.Profiles...)
		return pr.writeJSON(doc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %s (%s)\n", "profile", s.Profile, s.Sources["profile"])
	if !exists {
		configFile += " (not present)"
	}
	fmt.Fprintf(&b, "%-14s %s\n", "config_file", configFile)
	var names []string
	for _, p := range s.Profiles {
		names = append(names, p.Name+map[bool]string{true: " (selected)"}[p.Selected])
	}
	fmt.Fprintf(&b, "%-14s %s\n", "profiles", nonEmptyStr(strings.Join(names, ", "), "-"))
	for _, r := range rows {
		v := r.value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(&b, "%-14s %s (%s)\n", r.name, v, sourceText(s.Sources[r.name]))
	}
	pr.payload(b.String())
	return nil
}

// sourceText is a setting's source as config show's text puts it in
// parentheses: "file (profile lab) api_key_file" is "file, profile lab,
// api_key_file", not "(file (profile lab) api_key_file)".
func sourceText(src string) string {
	const file = "file (profile "
	i := strings.Index(src, file)
	if i < 0 {
		return src
	}
	rest := src[i+len(file):]
	name, after, ok := strings.Cut(rest, ")")
	if !ok {
		return src
	}
	if after = strings.TrimSpace(after); after != "" {
		after = ", " + after
	}
	return src[:i] + "file, profile " + name + after
}

// wrapText breaks text at spaces into lines of at most width columns, each
// starting with indent, for help text.
func wrapText(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// configChangeOptions are the dependencies and arguments of config set
// and config unset.
type configChangeOptions struct {
	Process *Process
	Printer func() *printer
	// ConfigPath is the config file's path ("" when there is no config
	// directory); Flags are the connection flags (--profile picks the
	// profile changed).
	ConfigPath func() string
	Flags      func() config.Flags

	// Name is the setting, Value its value (config set; HasValue when
	// given as an argument), Unset for config unset.
	Name     string
	Value    string
	HasValue bool
	Unset    bool
}

func configChangeOpts(f *Factory) *configChangeOptions {
	return &configChangeOptions{Process: f.Process, Printer: f.Printer, ConfigPath: f.ConfigPath, Flags: f.Flags}
}

// newCmdConfigSet builds config set; runF, when not nil, runs in place of
// configSetRun (a test's, which gets the options as parsed).
func newCmdConfigSet(f *Factory, runF func(*configChangeOptions) error) *cobra.Command {
	opts := configChangeOpts(f)
	return &cobra.Command{
		Use:   "set <name> [value]",
		Short: "Set a value in the profile (api-key is read from stdin, never an argument)",
		Long: `Set a value in the selected profile of the config file (created 0600 in a
0700 directory); a profile that does not exist yet is created. Names:
` + wrapText(configfile.SettableNames()+".", 78, "  ") + `

Only that value changes: the rest of the file (comments, blank lines, the
order of keys, peers, keys this version does not know) is kept as written.
The file is replaced atomically and left 0600. A file that is not valid YAML
is an error (exit 2) and is never overwritten. Setting the value a key
already has changes nothing and says so.

api-key takes no argument: the key is read from stdin, so it never shows in
the process list or the shell history.`,
		Example: `  a2a-courier config set kibana-url https://kb.example.com --profile prod
  a2a-courier config set api-key --profile prod < prod.key
  a2a-courier config set poll-interval 30s`,
		Args: rangeArgs(1, 2, "a name and a value"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if len(args) == 2 {
				opts.Value, opts.HasValue = args[1], true
			}
			if runF != nil {
				return runF(opts)
			}
			return configSetRun(opts)
		},
	}
}

// newCmdConfigUnset builds config unset; runF, when not nil, runs in place
// of configChange (a test's, which gets the options as parsed).
func newCmdConfigUnset(f *Factory, runF func(*configChangeOptions) error) *cobra.Command {
	opts := configChangeOpts(f)
	return &cobra.Command{
		Use:   "unset <name>",
		Short: "Remove a value from the profile",
		Long: `Remove a value from the selected profile of the config file: its line goes,
the rest of the file (comments included) stays as written. A profile that
the removal leaves empty is removed too. Names:
` + wrapText(configfile.SettableNames()+".", 78, "  ") + `

Removing a value that is not set changes nothing and says so (--json:
"changed": false). A profile named with --profile, A2A_COURIER_PROFILE or
default_profile that the file does not have is a configuration error (exit 2).`,
		Example: `  a2a-courier config unset space --profile prod`,
		Args:    exactArgs(1, "a name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.Unset = args[0], true
			if runF != nil {
				return runF(opts)
			}
			return configChange(opts, configfile.Change{Name: opts.Name, Unset: true})
		},
	}
}

// newCmdConfigPath builds config path; runF, when not nil, runs in place
// of configPathRun.
func newCmdConfigPath(f *Factory, runF func(*configChangeOptions) error) *cobra.Command {
	opts := configChangeOpts(f)
	return &cobra.Command{
		Use:     "path",
		Short:   "Print the config file's path",
		Example: `  a2a-courier config path`,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return configPathRun(opts)
		},
	}
}

func configPathRun(opts *configChangeOptions) error {
	p := opts.ConfigPath()
	if p == "" {
		return noConfigDir(opts.Process)
	}
	pr := opts.Printer()
	if pr.json {
		_, err := os.Stat(p)
		return pr.writeJSON(map[string]any{"config_file": p, "config_file_exists": err == nil})
	}
	pr.payload(p)
	return nil
}

func configSetRun(opts *configChangeOptions) error {
	name, value := opts.Name, ""
	if !configfile.Known(name) {
		return usageErr("names: "+configfile.SettableNames(), "unknown setting %q", name)
	}
	switch {
	case name == "api-key" && opts.HasValue:
		return usageErr("pipe it instead: "+shellcmd.FromFile("a2a-courier config set api-key", "key-file"), "the API key is never an argument (it would show in the process list and the shell history)")
	case name == "api-key":
		b, err := io.ReadAll(io.LimitReader(opts.Process.Stdin, 64<<10))
		if err != nil {
			return err
		}
		text, enc := config.SecretText(b)
		if enc != "" {
			return config.EncodingError("the API key on stdin", enc)
		}
		value = strings.TrimSpace(text)
		if value == "" || strings.ContainsAny(value, "\n\r") {
			return usageErr("pipe the key's encoded value, on one line: "+shellcmd.FromFile("a2a-courier config set api-key", "key-file"), "no API key on stdin")
		}
	case !opts.HasValue && name == "default-profile":
		return usageErr("a2a-courier config set default-profile <profile>", "default-profile needs a value")
	case !opts.HasValue:
		return usageErr("a2a-courier config set "+name+" <value>", "%s needs a value", name)
	default:
		v, err := configfile.CheckValue(name, opts.Value)
		if err != nil {
			return err
		}
		value = v
	}
	return configChange(opts, configfile.Change{Name: name, Value: value})
}

// configChange applies config set or unset to the config file, says what
// changed, and prints the --json document.
func configChange(opts *configChangeOptions, c configfile.Change) error {
	c.Path, c.Getenv, c.Flags = opts.ConfigPath(), opts.Process.getenv, opts.Flags()
	if c.Path == "" {
		return noConfigDir(opts.Process)
	}
	d, err := configfile.Apply(c)
	if err != nil {
		return err
	}
	pr := opts.Printer()
	if d.Rewritten != "" {
		pr.info("note: %s could not be edited in place (%s): it was rewritten with its data and comments, in a plain layout", d.Path, d.Rewritten)
	}
	where := "profile " + d.Profile + " of " + d.Path
	switch {
	case c.Name == "default-profile" && c.Unset && d.Changed:
		pr.info("default-profile removed from %s", d.Path)
	case c.Name == "default-profile" && c.Unset:
		pr.info("default-profile was not set in %s: nothing changed", d.Path)
	case c.Name == "default-profile" && d.Changed:
		pr.info("default profile set to %s in %s", d.Value, d.Path)
	case c.Name == "default-profile":
		pr.info("default profile is already %s in %s: nothing changed", d.Value, d.Path)
	case !c.Unset && d.Changed:
		pr.info("%s = %s in %s", c.Name, d.Value, where)
	case !c.Unset:
		pr.info("%s is already %s in %s: nothing changed", c.Name, d.Value, where)
	case !d.Changed:
		pr.info("%s was not set in %s: nothing changed", c.Name, where)
	case d.Pruned:
		pr.info("%s removed from %s; the profile, now empty, was removed", c.Name, where)
	default:
		pr.info("%s removed from %s", c.Name, where)
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"config_file": d.Path, "profile": d.Profile, "setting": c.Name, "changed": d.Changed})
	}
	return nil
}

func nonBlockingText(v *bool) string {
	switch {
	case v == nil:
		return "auto"
	case *v:
		return "true"
	}
	return "false"
}
