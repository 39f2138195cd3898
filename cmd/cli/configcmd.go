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
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
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
		key = "set (identity " + identity(targetOrigin(s.URL), s.APIKey.Reveal()) + ")"
	}
	space := s.Space
	if space == "" {
		space = "default"
	}
	rows := []struct{ name, value string }{
		{"kibana_url", s.URL},
		{"space", space},
		{"api_key", key},
		{"ca_cert", s.CAFile},
		{"insecure", strconv.FormatBool(s.Insecure)},
		{"non_blocking", strconv.FormatBool(s.NonBlocking)},
		{"poll_interval", s.PollInterval.String()},
		{"max_wait", s.MaxWait.String()},
		{"send_timeout", s.SendTimeout.String()},
		{"wait_timeout", s.WaitTimeout.String()},
		{"state_dir", s.StateDir},
	}
	configFile := s.ConfigFile
	if configFile == "" {
		configFile = a.configPath() + " (not present)"
	}
	pr := a.printer()
	if pr.json {
		doc := map[string]any{"profile": s.Profile, "config_file": configFile}
		set := map[string]settingDoc{}
		for _, r := range rows {
			set[r.name] = settingDoc{Value: r.value, Source: s.Sources[r.name]}
		}
		doc["settings"] = set
		return pr.writeJSON(doc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %s (%s)\n", "profile", s.Profile, s.Sources["profile"])
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
0700 directory). Names: ` + settableNames() + `.

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
		Use:     "unset <name>",
		Short:   "Remove a value from the profile",
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
				return app.printer().writeJSON(map[string]string{"config_file": p})
			}
			app.printer().payload(p)
			return nil
		},
	}
}

// editConfig loads the config file as a plain document (a file with a key
// but loose permissions is accepted here: it is rewritten 0600), lets fn
// change it and writes it back atomically.
func (a *App) editConfig(fn func(cf *fileConfig, profile string) error) (string, string, error) {
	path := a.configPath()
	if path == "" {
		return "", "", configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: HOME is not set")
	}
	cf := &fileConfig{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(cf); err != nil && !errors.Is(err, io.EOF) {
			return "", "", configErr("fix the file by hand, or move it away", "config file %s: %v", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", configErr("check the file's permissions", "config file: %v", err)
	}
	profile, _ := a.profileName(cf)
	profile = strings.ToLower(profile)
	if cf.Profiles == nil {
		cf.Profiles = map[string]fileProfile{}
	}
	if err := fn(cf, profile); err != nil {
		return "", "", err
	}
	out, err := yaml.Marshal(cf)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", configErr("set A2A_COURIER_CONFIG_DIR to a directory you can write", "config directory: %v", err)
	}
	if err := store.WriteFileAtomic(dir, filepath.Base(path), out); err != nil {
		return "", "", err
	}
	return path, profile, nil
}

func (a *App) runConfigSet(args []string) error {
	name := args[0]
	var value string
	if name == "default-profile" {
		if len(args) != 2 {
			return usageErr("a2a-courier config set default-profile <profile>", "default-profile needs a value")
		}
		path, _, err := a.editConfig(func(cf *fileConfig, _ string) error {
			cf.DefaultProfile = strings.ToLower(args[1])
			return nil
		})
		if err != nil {
			return err
		}
		a.printer().info("default profile set to %s in %s", args[1], path)
		return a.configDone(path, "", name)
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
			return usageErr("see `a2a-courier config set --help`", "%s: %v", name, err)
		}
		value = v
	}
	path, profile, err := a.editConfig(func(cf *fileConfig, profile string) error {
		p := cf.Profiles[profile]
		if err := setField(&p, spec.field, value); err != nil {
			return err
		}
		cf.Profiles[profile] = p
		return nil
	})
	if err != nil {
		return err
	}
	shown := value
	if name == "api-key" {
		shown = "(hidden)"
	}
	a.printer().info("%s = %s in profile %s of %s", name, shown, profile, path)
	return a.configDone(path, profile, name)
}

func (a *App) configDone(path, profile, name string) error {
	if a.printer().json {
		return a.printer().writeJSON(map[string]string{"config_file": path, "profile": profile, "setting": name})
	}
	return nil
}

func (a *App) runConfigUnset(name string) error {
	if name == "default-profile" {
		path, _, err := a.editConfig(func(cf *fileConfig, _ string) error { cf.DefaultProfile = ""; return nil })
		if err != nil {
			return err
		}
		return a.configDone(path, "", name)
	}
	spec, ok := settableKeys[name]
	if !ok {
		return usageErr("names: "+settableNames(), "unknown setting %q", name)
	}
	path, profile, err := a.editConfig(func(cf *fileConfig, profile string) error {
		p, ok := cf.Profiles[profile]
		if !ok {
			return nil
		}
		if err := setField(&p, spec.field, ""); err != nil {
			return err
		}
		if p == (fileProfile{}) {
			delete(cf.Profiles, profile)
		} else {
			cf.Profiles[profile] = p
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.printer().info("%s removed from profile %s of %s", name, profile, path)
	return a.configDone(path, profile, name)
}

// setField sets (or, with "", clears) one profile field from its text.
func setField(p *fileProfile, field, v string) error {
	dur := func(d *time.Duration) error {
		if v == "" {
			*d = 0
			return nil
		}
		x, err := time.ParseDuration(v)
		*d = x
		return err
	}
	switch field {
	case "kibana_url":
		p.KibanaURL = v
	case "space":
		p.Space = v
	case "api_key":
		p.APIKey = v
	case "api_key_file":
		p.APIKeyFile = v
	case "ca_cert":
		p.CACert = v
	case "insecure":
		if v == "" {
			p.Insecure = nil
		} else {
			b := v == "true"
			p.Insecure = &b
		}
	case "non_blocking":
		if v == "" {
			p.NonBlocking = nil
		} else {
			b := v == "true"
			p.NonBlocking = &b
		}
	case "poll_interval":
		return dur(&p.PollInterval)
	case "max_wait":
		return dur(&p.MaxWait)
	case "send_timeout":
		return dur(&p.SendTimeout)
	case "wait_timeout":
		return dur(&p.WaitTimeout)
	default:
		return fmt.Errorf("unknown field %s", field)
	}
	return nil
}
