// Package config resolves a command's configuration: flag > environment >
// config file (the profile) > default, each value with where it came from.
// The config file is read here, with viper, and nowhere else; editing it
// is internal/configfile's. It reads the environment through the lookup it
// is given, never the process's, and returns typed errors with a hint.
package config

import (
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

// Defaults of the timing settings.
const (
	DefaultPollInterval = 20 * time.Second
	DefaultMaxWait      = 2 * time.Hour
	DefaultSendTimeout  = 5 * time.Minute
	DefaultWaitTimeout  = 5 * time.Minute
)

// Flags are the connection flags every command takes.
type Flags struct {
	Profile    string
	KibanaURL  string
	Space      string
	APIKeyFile string
	TokenFile  string
}

// Profile is one profile of the config file.
type Profile struct {
	KibanaURL    string        `mapstructure:"kibana_url" yaml:"kibana_url,omitempty"`
	Space        string        `mapstructure:"space" yaml:"space,omitempty"`
	APIKey       string        `mapstructure:"api_key" yaml:"api_key,omitempty"`
	APIKeyFile   string        `mapstructure:"api_key_file" yaml:"api_key_file,omitempty"`
	CACert       string        `mapstructure:"ca_cert" yaml:"ca_cert,omitempty"`
	Insecure     *bool         `mapstructure:"insecure" yaml:"insecure,omitempty"`
	PollInterval time.Duration `mapstructure:"poll_interval" yaml:"poll_interval,omitempty"`
	MaxWait      time.Duration `mapstructure:"max_wait" yaml:"max_wait,omitempty"`
	SendTimeout  time.Duration `mapstructure:"send_timeout" yaml:"send_timeout,omitempty"`
	WaitTimeout  time.Duration `mapstructure:"wait_timeout" yaml:"wait_timeout,omitempty"`
	NonBlocking  *bool         `mapstructure:"non_blocking" yaml:"non_blocking,omitempty"`
}

// File is the config file: named profiles and which one is the default.
type File struct {
	DefaultProfile string             `mapstructure:"default_profile" yaml:"default_profile,omitempty"`
	Profiles       map[string]Profile `mapstructure:"profiles" yaml:"profiles,omitempty"`
	// Peers are named A2A agents other than Kibana's, beside the profiles.
	Peers map[string]Peer `mapstructure:"peers" yaml:"peers,omitempty"`
}

// Settings are the resolved configuration of one command, each value with
// where it came from.
type Settings struct {
	Profile    string
	ConfigFile string // "" when there is none
	URL        string
	Space      string
	APIKey     client.Secret
	CAFile     string
	Insecure   bool
	StateDir   string

	PollInterval time.Duration
	MaxWait      time.Duration
	SendTimeout  time.Duration
	WaitTimeout  time.Duration
	// NonBlocking overrides the send path the Kibana release decides
	// (internal/courier.DecidePath): true sends blocking:false and follows the task,
	// false a blocking send; nil lets the release decide.
	NonBlocking *bool

	// Sources maps a setting's name to where its value came from: "flag
	// --space", "env KIBANA_SPACE_ID", "file (profile prod)", "default".
	Sources map[string]string
	// Peers are the config file's named A2A agents.
	Peers map[string]Peer
	// KeyHeldBack says which key was not used because it belongs to
	// another Kibana than URL ("" when none was).
	KeyHeldBack string
	// Profiles are the config file's profiles, by name, as they may be
	// shown: never a key.
	Profiles []ProfileSummary
	// EmptyEnv names the connection's variables that are set but empty
	// (LoadEnv; Load cannot tell).
	EmptyEnv []string
}

// ProfileSummary is what may be shown of a profile of the config file.
type ProfileSummary struct {
	Name      string `json:"name"`
	KibanaURL string `json:"kibana_url,omitempty"`
	Space     string `json:"space,omitempty"`
	// HasKey says whether the profile names a key (api_key or
	// api_key_file); Selected whether it is the profile in use.
	HasKey   bool `json:"api_key_set"`
	Selected bool `json:"selected"`
}

// summarize lists a config file's profiles, sorted, the selected one
// marked; URLs with a password in them are redacted.
func summarize(cf *File, selected string) []ProfileSummary {
	var out []ProfileSummary
	for name, p := range cf.Profiles {
		out = append(out, ProfileSummary{Name: name, KibanaURL: client.RedactURL(p.KibanaURL), Space: p.Space,
			HasKey: p.APIKey != "" || p.APIKeyFile != "", Selected: strings.EqualFold(name, selected)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Peer is a named A2A agent of the config file's peers section.
type Peer struct {
	URL       string `mapstructure:"url" yaml:"url"`
	TokenEnv  string `mapstructure:"token_env" yaml:"token_env,omitempty"`
	TokenFile string `mapstructure:"token_file" yaml:"token_file,omitempty"`
	Token     string `mapstructure:"token" yaml:"token,omitempty"`
	Protocol  string `mapstructure:"protocol" yaml:"protocol,omitempty"`
	// Binding is jsonrpc or rest (HTTP+JSON); empty: the card decides.
	Binding  string `mapstructure:"binding" yaml:"binding,omitempty"`
	NoStream bool   `mapstructure:"no_stream" yaml:"no_stream,omitempty"`
	CACert   string `mapstructure:"ca_cert" yaml:"ca_cert,omitempty"`
	Insecure bool   `mapstructure:"insecure" yaml:"insecure,omitempty"`
}

// Dir is the config directory (userdirs.Env.ConfigDir:
// A2A_COURIER_CONFIG_DIR, else $XDG_CONFIG_HOME/a2a-courier or
// ~/.config/a2a-courier, on Windows %APPDATA%\a2a-courier); "" when there
// is none (NoConfigDir says why).
func Dir(getenv func(string) string) string {
	d, _ := userdirs.Host(getenv).ConfigDir()
	return d
}

// NoConfigDir is why there is no config directory ("HOME is not set"),
// nil when there is one.
func NoConfigDir(getenv func(string) string) error {
	_, err := userdirs.Host(getenv).ConfigDir()
	return err
}

// Path is the config file, "" without a config directory.
func Path(getenv func(string) string) string {
	d := Dir(getenv)
	if d == "" {
		return ""
	}
	return filepath.Join(d, "config.yaml")
}

// StateDir resolves the state directory, and says where from
// (userdirs.Env.StateDir: A2A_COURIER_STATE_DIR, else
// $XDG_STATE_HOME/a2a-courier or ~/.local/state/a2a-courier, on Windows
// %LOCALAPPDATA%\a2a-courier\state); "" when there is none (NoStateDir
// says why).
func StateDir(getenv func(string) string) (string, string) {
	d, source, _ := userdirs.Host(getenv).StateDir()
	return d, source
}

// NoStateDir is why there is no state directory ("HOME is not set"), nil
// when there is one.
func NoStateDir(getenv func(string) string) error {
	_, _, err := userdirs.Host(getenv).StateDir()
	return err
}

// ProfileName picks the profile: --profile, A2A_COURIER_PROFILE, the
// file's default_profile, else "default"; and says where from.
func ProfileName(getenv func(string) string, flags Flags, defaultProfile string) (string, string) {
	switch {
	case flags.Profile != "":
		return flags.Profile, "flag --profile"
	case getenv("A2A_COURIER_PROFILE") != "":
		return getenv("A2A_COURIER_PROFILE"), "env A2A_COURIER_PROFILE"
	case defaultProfile != "":
		return defaultProfile, "file default_profile"
	}
	return "default", "default"
}

func profileList(cf *File) string {
	var names []string
	for n := range cf.Profiles {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
