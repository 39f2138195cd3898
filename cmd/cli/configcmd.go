package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/configfile"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
)

func newConfigCmd(app *App) *cobra.Command {
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
		RunE: groupRun(app),
	}
	cmd.AddCommand(newConfigShowCmd(app), newConfigSetCmd(app), newConfigUnsetCmd(app), newConfigPathCmd(app))
	return cmd
}

func newConfigShowCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "show",
		Short: "Show the effective settings and where each comes from (the key is never shown)",
		Example: `  a2a-courier config show
  a2a-courier config show --profile lab --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error { return app.runConfigShow() },
	}
}

type settingDoc struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

func (a *App) runConfigShow() error {
	s, err := a.loadSettings()
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
		configFile = a.configPath()
	}
	pr := a.printer()
	if pr.json {
		doc := map[string]any{"profile": s.Profile, "config_file": configFile, "config_file_exists": exists}
		set := map[string]settingDoc{}
		for _, r := range rows {
			set[r.name] = settingDoc{Value: r.value, Source: s.Sources[r.name]}
		}
		doc["settings"] = set
		return pr.writeJSON(doc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %s (%s)\n", "profile", s.Profile, s.Sources["profile"])
	if !exists {
		configFile += " (not present)"
	}
	fmt.Fprintf(&b, "%-14s %s\n", "config_file", configFile)
	for _, r := range rows {
		v := r.value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(&b, "%-14s %s (%s)\n", r.name, v, s.Sources[r.name])
	}
	pr.payload(b.String())
	return nil
}

// settableKeys maps a config set name to its profile field and a check.
var settableKeys = map[string]struct {
	field string
	check func(string) (string, error)
}{
	"kibana-url": {"kibana_url", func(v string) (string, error) {
		u, err := client.ParseKibanaURL(v)
		if err != nil {
			return "", err
		}
		return u.String(), nil
	}},
	"space": {"space", func(v string) (string, error) {
		if v != "default" && !client.ValidSpace(v) {
			return "", fmt.Errorf("invalid space id %q: use lower-case letters, digits, '-' and '_'", v)
		}
		return v, nil
	}},
	"api-key-file": {"api_key_file", func(v string) (string, error) { return v, nil }},
	"ca-cert":      {"ca_cert", func(v string) (string, error) { return v, nil }},
	"insecure": {"insecure", func(v string) (string, error) {
		b, err := strconv.ParseBool(v)
		return strconv.FormatBool(b), err
	}},
	"non-blocking": {"non_blocking", func(v string) (string, error) {
		b, err := strconv.ParseBool(v)
		return strconv.FormatBool(b), err
	}},
	"poll-interval": {"poll_interval", checkDuration},
	"max-wait":      {"max_wait", checkDuration},
	"send-timeout":  {"send_timeout", checkDuration},
	"wait-timeout":  {"wait_timeout", checkDuration},
	"api-key":       {"api_key", nil}, // read from stdin
}

func checkDuration(v string) (string, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return "", fmt.Errorf("%q is not a positive duration such as 20s or 5m", v)
	}
	return d.String(), nil
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

func settableNames() string {
	var names []string
	for n := range settableKeys {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(append(names, "default-profile"), ", ")
}

func newConfigSetCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "set <name> [value]",
		Short: "Set a value in the profile (api-key is read from stdin, never an argument)",
		Long: `Set a value in the selected profile of the config file (created 0600 in a
0700 directory); a profile that does not exist yet is created. Names:
` + wrapText(settableNames()+".", 78, "  ") + `

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
			return app.runConfigSet(args)
		},
	}
}

func newConfigUnsetCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "unset <name>",
		Short: "Remove a value from the profile",
		Long: `Remove a value from the selected profile of the config file: its line goes,
the rest of the file (comments included) stays as written. A profile that
the removal leaves empty is removed too. Names:
` + wrapText(settableNames()+".", 78, "  ") + `

Removing a value that is not set changes nothing and says so (--json:
"changed": false). A profile named with --profile, A2A_COURIER_PROFILE or
default_profile that the file does not have is a configuration error (exit 2).`,
		Example: `  a2a-courier config unset space --profile prod`,
		Args:    exactArgs(1, "a name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return app.runConfigUnset(args[0])
		},
	}
}

func newConfigPathCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "path",
		Short:   "Print the config file's path",
		Example: `  a2a-courier config path`,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := app.configPath()
			if p == "" {
				return configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: HOME is not set")
			}
			if app.printer().json {
				_, err := os.Stat(p)
				return app.printer().writeJSON(map[string]any{"config_file": p, "config_file_exists": err == nil})
			}
			app.printer().payload(p)
			return nil
		},
	}
}

// configFile reads the config file for an edit: its text and node tree. A
// missing file is an empty one. A file with a key but loose permissions is
// accepted here: a change rewrites it 0600. A file that is not YAML is an
// error, and is never written.
func (a *App) configFile() (string, *configfile.Doc, error) {
	path := a.configPath()
	if path == "" {
		return "", nil, configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: HOME is not set")
	}
	b, _, err := boundedfile.Read(path, config.MaxFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, config.FileError(path, err)
	}
	d, err := configfile.Parse(b)
	if err != nil {
		var shape *configfile.ShapeError
		if errors.As(err, &shape) {
			return "", nil, configErr("fix the file by hand (it was left as it is), or move it away", "config file %s cannot be edited: %s", path, oneLineErr(err))
		}
		return "", nil, configErr("fix the YAML by hand (the file was left as it is), or move it away", "config file %s is not valid YAML: %s", path, oneLineErr(err))
	}
	return path, d, nil
}

// editProfile is the profile config set and unset change, and where the
// name came from.
func (a *App) editProfile(d *configfile.Doc) (string, string) {
	defaultProfile := ""
	if n := d.Lookup("default_profile"); n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		defaultProfile = n.Value
	}
	profile, from := config.ProfileName(a.p.getenv, a.flags, defaultProfile)
	return strings.ToLower(profile), from
}

// writeConfig writes the edited file atomically, 0600 in a 0700 directory,
// and says so when its layout had to be redone.
func (a *App) writeConfig(path string, e *configfile.Edit) error {
	if !e.Changed {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return configErr("set A2A_COURIER_CONFIG_DIR to a directory you can write", "config directory: %v", err)
	}
	if err := store.WriteFileAtomic(dir, filepath.Base(path), e.Out); err != nil {
		return err
	}
	if e.Rewritten != "" {
		a.printer().info("note: %s could not be edited in place (%s): it was rewritten with its data and comments, in a plain layout", path, e.Rewritten)
	}
	return nil
}

// editErr is an edit the file's layout refuses (an alias, a value that is
// not a mapping).
func editErr(path string, err error) error {
	return configErr("edit "+path+" by hand", "config file %s: %s", path, oneLineErr(err))
}

func (a *App) runConfigSet(args []string) error {
	name := args[0]
	var value string
	if name == "default-profile" {
		if len(args) != 2 {
			return usageErr("a2a-courier config set default-profile <profile>", "default-profile needs a value")
		}
		path, d, err := a.configFile()
		if err != nil {
			return err
		}
		value = strings.ToLower(args[1])
		e, err := d.Set([]string{"default_profile"}, configfile.Str(value))
		if err != nil {
			return editErr(path, err)
		}
		if err := a.writeConfig(path, e); err != nil {
			return err
		}
		if e.Changed {
			a.printer().info("default profile set to %s in %s", value, path)
		} else {
			a.printer().info("default profile is already %s in %s: nothing changed", value, path)
		}
		return a.configDone(path, "", name, e.Changed)
	}
	spec, ok := settableKeys[name]
	if !ok {
		return usageErr("names: "+settableNames(), "unknown setting %q", name)
	}
	switch {
	case name == "api-key" && len(args) == 2:
		return usageErr("pipe it instead: a2a-courier config set api-key < key-file", "the API key is never an argument (it would show in the process list and the shell history)")
	case name == "api-key":
		b, err := io.ReadAll(io.LimitReader(a.p.Stdin, 64<<10))
		if err != nil {
			return err
		}
		value = strings.TrimSpace(string(b))
		if value == "" || strings.ContainsAny(value, "\n\r") {
			return usageErr("pipe the key's encoded value, on one line: a2a-courier config set api-key < key-file", "no API key on stdin")
		}
	case len(args) != 2:
		return usageErr("a2a-courier config set "+name+" <value>", "%s needs a value", name)
	default:
		v, err := spec.check(args[1])
		if err != nil {
			hint := "see `a2a-courier config set --help`"
			if name == "kibana-url" && !strings.Contains(args[1], "://") {
				hint = config.KibanaURLHint(args[1], "config set kibana-url")
			}
			return usageErr(hint, "%s: %v", name, err)
		}
		value = v
	}
	path, d, err := a.configFile()
	if err != nil {
		return err
	}
	profile, _ := a.editProfile(d)
	node := configfile.Str(value)
	if spec.field == "insecure" || spec.field == "non_blocking" {
		node = configfile.Bool(value)
	}
	e, err := d.Set([]string{"profiles", profile, spec.field}, node)
	if err != nil {
		return editErr(path, err)
	}
	if err := a.writeConfig(path, e); err != nil {
		return err
	}
	shown := value
	if name == "api-key" {
		shown = "(hidden)"
	}
	if e.Changed {
		a.printer().info("%s = %s in profile %s of %s", name, shown, profile, path)
	} else {
		a.printer().info("%s is already %s in profile %s of %s: nothing changed", name, shown, profile, path)
	}
	return a.configDone(path, profile, name, e.Changed)
}

// configDone is the --json document of config set and unset.
func (a *App) configDone(path, profile, name string, changed bool) error {
	if a.printer().json {
		return a.printer().writeJSON(map[string]any{"config_file": path, "profile": profile, "setting": name, "changed": changed})
	}
	return nil
}

func (a *App) runConfigUnset(name string) error {
	if name == "default-profile" {
		path, d, err := a.configFile()
		if err != nil {
			return err
		}
		e, err := d.Unset([]string{"default_profile"}, false)
		if err != nil {
			return editErr(path, err)
		}
		if err := a.writeConfig(path, e); err != nil {
			return err
		}
		if e.Changed {
			a.printer().info("default-profile removed from %s", path)
		} else {
			a.printer().info("default-profile was not set in %s: nothing changed", path)
		}
		return a.configDone(path, "", name, e.Changed)
	}
	spec, ok := settableKeys[name]
	if !ok {
		return usageErr("names: "+settableNames(), "unknown setting %q", name)
	}
	path, d, err := a.configFile()
	if err != nil {
		return err
	}
	profile, from := a.editProfile(d)
	if d.Lookup("profiles", profile) == nil && from != "default" {
		// As for every other command: a profile asked for by name must
		// exist (the implicit "default" need not).
		if d.Empty() {
			return configErr("profiles in "+path+": none", "no profile %q: the config file (%s) has no profiles", profile, path)
		}
		list := strings.Join(d.Keys("profiles"), ", ")
		if list == "" {
			list = "none"
		}
		return configErr("profiles in "+path+": "+list, "no profile %q in the config file", profile)
	}
	e, err := d.Unset([]string{"profiles", profile, spec.field}, true)
	if err != nil {
		return editErr(path, err)
	}
	if err := a.writeConfig(path, e); err != nil {
		return err
	}
	switch {
	case !e.Changed:
		a.printer().info("%s was not set in profile %s of %s: nothing changed", name, profile, path)
	case e.Pruned:
		a.printer().info("%s removed from profile %s of %s; the profile, now empty, was removed", name, profile, path)
	default:
		a.printer().info("%s removed from profile %s of %s", name, profile, path)
	}
	return a.configDone(path, profile, name, e.Changed)
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
