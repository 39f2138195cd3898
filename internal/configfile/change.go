package configfile

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/store"
)

// config set and config unset as operations on the config file: which
// names they take, the check of a value, the profile they change, and the
// file written back atomically. The command line reads the key from stdin
// and says what happened.

// settable maps a config set name to its profile field and a check.
var settable = map[string]struct {
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
	"api-key-file":  {"api_key_file", func(v string) (string, error) { return v, nil }},
	"ca-cert":       {"ca_cert", func(v string) (string, error) { return v, nil }},
	"insecure":      {"insecure", checkBool},
	"non-blocking":  {"non_blocking", checkBool},
	"poll-interval": {"poll_interval", checkDuration},
	"max-wait":      {"max_wait", checkDuration},
	"send-timeout":  {"send_timeout", checkDuration},
	"wait-timeout":  {"wait_timeout", checkDuration},
	"api-key":       {"api_key", nil}, // read from stdin
}

func checkBool(v string) (string, error) {
	b, err := strconv.ParseBool(v)
	return strconv.FormatBool(b), err
}

var errNotDuration = errors.New("is not a positive duration such as 20s or 5m")

func checkDuration(v string) (string, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return "", fmt.Errorf("%q %w", v, errNotDuration)
	}
	return d.String(), nil
}

// Known reports whether config set and unset take name.
func Known(name string) bool {
	_, ok := settable[name]
	return ok || name == "default-profile"
}

// SettableNames lists the names config set and unset take.
func SettableNames() string {
	var names []string
	for n := range settable {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(append(names, "default-profile"), ", ")
}

func usageErr(hint, format string, args ...any) *config.Error {
	return &config.Error{Code: "usage", Message: fmt.Sprintf(format, args...), Hint: hint}
}

func configErr(hint, format string, args ...any) *config.Error {
	return &config.Error{Code: "config", Message: fmt.Sprintf(format, args...), Hint: hint}
}

// Change is one config set or unset.
type Change struct {
	// Path is the config file; Getenv and Flags pick the profile as every
	// command does (--profile, A2A_COURIER_PROFILE, default_profile).
	Path   string
	Getenv func(string) string
	Flags  config.Flags
	// Name is the setting (kibana-url, …, default-profile); Value the
	// value to set (the key, for api-key, as read from stdin); Unset
	// removes the setting instead.
	Name, Value string
	Unset       bool
}

// Done is what a change did.
type Done struct {
	Path, Profile string
	// Value is the value set, as it may be shown ("(hidden)" for the key).
	Value   string
	Changed bool
	// Pruned: the profile, left empty, went too. Rewritten says why the
	// file could not be edited in place and was encoded anew ("" when it
	// was).
	Pruned    bool
	Rewritten string
}

// CheckValue checks a value for config set name, before anything is read.
func CheckValue(name, value string) (string, error) {
	spec, ok := settable[name]
	switch {
	case name == "default-profile":
		return strings.ToLower(value), nil
	case !ok:
		return "", usageErr("names: "+SettableNames(), "unknown setting %q", name)
	case spec.check == nil:
		return value, nil
	}
	v, err := spec.check(value)
	if err != nil {
		hint := "see `a2a-courier config set --help`"
		switch {
		case name == "kibana-url" && !strings.Contains(value, "://"):
			hint = config.KibanaURLHint(value, "config set kibana-url")
		case errors.Is(err, errNotDuration):
			hint = config.DurationHint(value)
		}
		return "", usageErr(hint, "%s: %v", name, err)
	}
	return v, nil
}

// Apply makes a change to the config file and writes it back, when it
// changes anything, atomically, 0600 in a 0700 directory.
func Apply(c Change) (*Done, error) {
	spec, ok := settable[c.Name]
	if !ok && c.Name != "default-profile" {
		return nil, usageErr("names: "+SettableNames(), "unknown setting %q", c.Name)
	}
	d, err := read(c.Path)
	if err != nil {
		return nil, err
	}
	done := &Done{Path: c.Path, Value: c.Value}
	var path []string
	var e *Edit
	switch {
	case c.Name == "default-profile" && c.Unset:
		e, err = d.Unset([]string{"default_profile"}, false)
	case c.Name == "default-profile":
		e, err = d.Set([]string{"default_profile"}, Str(c.Value))
	default:
		var from string
		done.Profile, from = editProfile(d, c)
		path = []string{"profiles", done.Profile, spec.field}
		if c.Unset {
			if err := profileExists(d, c.Path, done.Profile, from); err != nil {
				return nil, err
			}
			e, err = d.Unset(path, true)
			break
		}
		node := Str(c.Value)
		if spec.field == "insecure" || spec.field == "non_blocking" {
			node = Bool(c.Value)
		}
		e, err = d.Set(path, node)
	}
	if err != nil {
		return nil, configErr("edit "+c.Path+" by hand", "config file %s: %s", c.Path, oneLine(err))
	}
	if c.Name == "api-key" {
		done.Value = "(hidden)"
	}
	done.Changed, done.Pruned, done.Rewritten = e.Changed, e.Pruned, e.Rewritten
	return done, write(c.Path, e)
}

// read reads the config file for an edit: its text and node tree. A
// missing file is an empty one. A file with a key but loose permissions is
// accepted here: a change rewrites it 0600. A file that is not YAML is an
// error, and is never written.
func read(path string) (*Doc, error) {
	if path == "" {
		return nil, configErr("set A2A_COURIER_CONFIG_DIR", "no config directory: HOME (on Windows %%APPDATA%%) is not set")
	}
	b, _, err := boundedfile.Read(path, config.MaxFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, config.FileError(path, err)
	}
	d, err := Parse(b)
	if err != nil {
		var shape *ShapeError
		if errors.As(err, &shape) {
			return nil, configErr("fix the file by hand (it was left as it is), or move it away", "config file %s cannot be edited: %s", path, oneLine(err))
		}
		return nil, configErr("fix the YAML by hand (the file was left as it is), or move it away", "config file %s is not valid YAML: %s", path, oneLine(err))
	}
	return d, nil
}

// editProfile is the profile a change edits, and where its name came from.
func editProfile(d *Doc, c Change) (string, string) {
	defaultProfile := ""
	if n := d.Lookup("default_profile"); n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		defaultProfile = n.Value
	}
	profile, from := config.ProfileName(c.Getenv, c.Flags, defaultProfile)
	return strings.ToLower(profile), from
}

// profileExists: as for every other command, a profile asked for by name
// must exist (the implicit "default" need not).
func profileExists(d *Doc, path, profile, from string) error {
	if d.Lookup("profiles", profile) != nil || from == "default" {
		return nil
	}
	if d.Empty() {
		return configErr("profiles in "+path+": none", "no profile %q: the config file (%s) has no profiles", profile, path)
	}
	list := strings.Join(d.Keys("profiles"), ", ")
	if list == "" {
		list = "none"
	}
	return configErr("profiles in "+path+": "+list, "no profile %q in the config file", profile)
}

// write writes an edited file atomically, 0600 in a 0700 directory (on
// Windows: owner-only ACLs).
func write(path string, e *Edit) error {
	if !e.Changed {
		return nil
	}
	dir := filepath.Dir(path)
	if err := ownfile.MkdirAll(dir); err != nil {
		return configErr("set A2A_COURIER_CONFIG_DIR to a directory you can write", "config directory: %v", err)
	}
	return store.WriteFileAtomic(dir, filepath.Base(path), e.Out)
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
