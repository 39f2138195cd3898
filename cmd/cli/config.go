package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/store"
)

// Defaults for the timing settings.
const (
	defaultPollInterval = 20 * time.Second
	defaultMaxWait      = 2 * time.Hour
	defaultReadTimeout  = 60 * time.Second
	defaultSendTimeout  = 5 * time.Minute
	defaultResultWait   = 5 * time.Minute
)

// globalFlags are the connection flags every command takes.
type globalFlags struct {
	profile    string
	kibanaURL  string
	space      string
	apiKeyFile string
	tokenFile  string
}

// fileProfile is one profile of the config file.
type fileProfile struct {
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

// fileConfig is the config file: named profiles and which one is the default.
type fileConfig struct {
	DefaultProfile string                 `mapstructure:"default_profile" yaml:"default_profile,omitempty"`
	Profiles       map[string]fileProfile `mapstructure:"profiles" yaml:"profiles,omitempty"`
	// Peers are named A2A agents other than Kibana's, beside the profiles.
	Peers map[string]filePeer `mapstructure:"peers" yaml:"peers,omitempty"`
}

// settings are the resolved configuration of one command, each value with
// where it came from.
type settings struct {
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
	// (kibanapath.go): true sends blocking:false and follows the task,
	// false a blocking send; nil lets the release decide.
	NonBlocking *bool

	// Sources maps a setting's name to where its value came from: "flag
	// --space", "env KIBANA_SPACE_ID", "file (profile prod)", "default".
	Sources map[string]string
	// Peers are the config file's named A2A agents.
	Peers map[string]filePeer
	// KeyHeldBack says which key was not used because it belongs to
	// another Kibana than URL ("" when none was).
	KeyHeldBack string
}

// configDir is A2A_COURIER_CONFIG_DIR, else $XDG_CONFIG_HOME/a2a-courier,
// else ~/.config/a2a-courier.
func (a *App) configDir() string {
	if d := a.p.getenv("A2A_COURIER_CONFIG_DIR"); d != "" {
		return d
	}
	if d := a.p.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "a2a-courier")
	}
	if home := a.p.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "a2a-courier")
	}
	return ""
}

func (a *App) configPath() string {
	d := a.configDir()
	if d == "" {
		return ""
	}
	return filepath.Join(d, "config.yaml")
}

// Caps on the files read by path. A real config file is a few KB, a key or
// a token well under one.
const (
	maxConfigFileBytes = 1 << 20
	maxSecretFileBytes = 64 << 10
)

// readConfigFile reads the config file with viper, the one place viper is
// used. A missing file is no error. A file that holds an API key or a
// token must be readable by its owner alone.
func readConfigFile(path string) (*fileConfig, error) {
	raw, fi, err := boundedfile.Read(path, maxConfigFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, configFileErr(path, err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		if what, where := secretIn(raw); what != "" {
			return nil, configErr("run: chmod 600 "+path, "config file %s holds %s (%s) but other users can read it (mode %04o)", path, what, where, mode)
		}
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(raw)); err != nil {
		return nil, configErr("fix the YAML, or move the file away", "config file %s: %s", path, oneLineErr(err))
	}
	cf := &fileConfig{}
	if err := v.UnmarshalExact(cf, viper.DecodeHook(durationHook)); err != nil {
		hint := "known keys: default_profile, profiles.<name>.{kibana_url, space, api_key, api_key_file, ca_cert, insecure, poll_interval, max_wait, send_timeout, wait_timeout, non_blocking}, peers.<name>.{url, token_env, token_file, token, protocol, no_stream, ca_cert, insecure}"
		if strings.Contains(err.Error(), errNotDuration.Error()) {
			hint = "write positive durations with a unit, such as 20s, 5m or 1h30m"
		}
		return nil, configErr(hint, "config file %s: %s", path, oneLineErr(err))
	}
	for name, p := range cf.Peers {
		if p.URL == "" {
			return nil, configErr("give each peer its url", "config file %s: peer %s has no url", path, name)
		}
	}
	return cf, nil
}

var errNotDuration = errors.New("is not a positive duration")

// durationHook decodes the config file's durations: only a Go duration
// string ("20s"), only a positive one, as config set takes them. Viper's
// own decoding took a bare number as nanoseconds ("poll_interval: 20"
// polled every 20ns) and let negative durations through.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	if s, ok := data.(string); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && d > 0 {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s %w such as 20s or 5m", oneLine(fmt.Sprintf("%q", fmt.Sprint(data)), 40), errNotDuration)
}

// secretIn says what credential a YAML document keeps and where: a key
// api_key or token, in any case and at any depth, with a value. It reads
// the document itself, not viper's reading of it: viper folds keys that
// differ only in case into one and keeps one of their values, so a secret
// that anyone reading the file sees can be missing from the decoded
// config.
func secretIn(doc []byte) (what, where string) {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return "", "" // viper will not read it either
	}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path []string) bool
	walk = func(n *yaml.Node, path []string) bool {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		for i, c := range n.Content {
			p := path
			switch n.Kind {
			case yaml.MappingNode:
				if i%2 == 0 {
					continue
				}
				key := strings.ToLower(n.Content[i-1].Value)
				p = append(path[:len(path):len(path)], key)
				v := c
				for v != nil && v.Kind == yaml.AliasNode {
					v = v.Alias
				}
				if (key == "api_key" || key == "token") && v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Value != "" {
					switch {
					case len(p) == 3 && p[0] == "profiles" && key == "api_key":
						what, where = "an API key", "profile "+p[1]
					case len(p) == 3 && p[0] == "peers" && key == "token":
						what, where = "a token", "peer "+p[1]
					default:
						what, where = "a credential", strings.Join(p, ".")
					}
					return true
				}
			case yaml.SequenceNode:
				p = append(path[:len(path):len(path)], strconv.Itoa(i))
			}
			if walk(c, p) {
				return true
			}
		}
		return false
	}
	walk(&root, nil)
	return oneLine(what, 40), oneLine(where, 80)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// profileName picks the profile: --profile, A2A_COURIER_PROFILE, the file's
// default_profile, else "default".
func (a *App) profileName(cf *fileConfig) (string, string) {
	switch {
	case a.flags.profile != "":
		return a.flags.profile, "flag --profile"
	case a.p.getenv("A2A_COURIER_PROFILE") != "":
		return a.p.getenv("A2A_COURIER_PROFILE"), "env A2A_COURIER_PROFILE"
	case cf != nil && cf.DefaultProfile != "":
		return cf.DefaultProfile, "file default_profile"
	}
	return "default", "default"
}

// loadSettings resolves every setting: flag > environment > config file >
// default. It does not require the connection to be configured.
func (a *App) loadSettings() (*settings, error) {
	if a.cached != nil {
		return a.cached, nil
	}
	s := &settings{Sources: map[string]string{}, ConfigFile: a.configPath()}
	var cf *fileConfig
	if s.ConfigFile != "" {
		var err error
		if cf, err = readConfigFile(s.ConfigFile); err != nil {
			return nil, err
		}
	}
	if cf == nil {
		s.ConfigFile = ""
	}
	var from string
	s.Profile, from = a.profileName(cf)
	s.Sources["profile"] = from
	var prof fileProfile
	if cf != nil {
		p, ok := cf.Profiles[strings.ToLower(s.Profile)]
		if !ok && from != "default" {
			return nil, configErr("profiles in "+s.ConfigFile+": "+profileList(cf), "no profile %q in the config file", s.Profile)
		}
		prof = p
	} else if from != "default" {
		return nil, configErr("create it with: a2a-courier config set kibana-url <url> --profile "+s.Profile, "no profile %q: there is no config file (%s)", s.Profile, a.configPath())
	}
	fileSrc := fmt.Sprintf("file (profile %s)", s.Profile)
	if cf != nil {
		s.Peers = cf.Peers
	}

	str := func(name, flagName, flagVal, env, fileVal string) string {
		switch {
		case flagVal != "":
			s.Sources[name] = "flag --" + flagName
			return flagVal
		case env != "" && a.p.getenv(env) != "":
			s.Sources[name] = "env " + env
			return strings.TrimSpace(a.p.getenv(env))
		case fileVal != "":
			s.Sources[name] = fileSrc
			return fileVal
		}
		s.Sources[name] = "default"
		return ""
	}
	s.URL = str("kibana_url", "kibana-url", a.flags.kibanaURL, "KIBANA_URL", prof.KibanaURL)
	// A profile that names its Kibana speaks of that Kibana only: its space
	// and key do not follow another URL.
	profKeyFits := prof.KibanaURL == "" || client.KibanaOrigin(prof.KibanaURL) == client.KibanaOrigin(s.URL)
	profSpace := prof.Space
	if !profKeyFits {
		profSpace = ""
	}
	s.Space = str("space", "space", a.flags.space, "KIBANA_SPACE_ID", profSpace)
	if s.Space == "default" {
		s.Space = ""
	}
	s.CAFile = str("ca_cert", "", "", "A2A_COURIER_CA_CERT", expandHome(prof.CACert, a.p.getenv("HOME")))

	// A key and its Kibana go together: a profile that names its own Kibana
	// and key uses that key, whatever KIBANA_API_KEY holds (that key is for
	// KIBANA_URL's Kibana); and a profile's key never goes to another
	// Kibana than the profile's.
	profHasKey := prof.APIKeyFile != "" || prof.APIKey != ""
	// KIBANA_API_KEY is KIBANA_URL's key: it does not go to another Kibana
	// named by --kibana-url or a profile.
	envURL := strings.TrimSpace(a.p.getenv("KIBANA_URL"))
	envKeyFits := envURL == "" || client.KibanaOrigin(envURL) == client.KibanaOrigin(s.URL)
	envKey := a.p.getenv("KIBANA_API_KEY") != "" && envKeyFits && !(s.Sources["kibana_url"] == fileSrc && profHasKey)
	switch {
	case a.flags.apiKeyFile == "" && a.p.getenv("KIBANA_API_KEY") != "" && !envKeyFits && !(profHasKey && profKeyFits):
		s.Sources["api_key"] = "default"
		s.KeyHeldBack = fmt.Sprintf("KIBANA_API_KEY was not used: it belongs to KIBANA_URL's Kibana (%s), not to %s (%s)",
			client.KibanaOrigin(envURL), client.KibanaOrigin(s.URL), s.Sources["kibana_url"])
	case a.flags.apiKeyFile != "":
		key, err := readKeyFile(a.flags.apiKeyFile)
		if err != nil {
			return nil, err
		}
		s.APIKey, s.Sources["api_key"] = key, "flag --api-key-file"
	case envKey:
		s.APIKey, s.Sources["api_key"] = client.Secret(strings.TrimSpace(a.p.getenv("KIBANA_API_KEY"))), "env KIBANA_API_KEY"
	case !profKeyFits:
		// The profile's key is for the profile's Kibana, not this one.
		s.Sources["api_key"] = "default"
		if profHasKey {
			s.KeyHeldBack = fmt.Sprintf("the key of profile %s was not used: it belongs to the profile's Kibana (%s), not to %s (%s)",
				s.Profile, client.KibanaOrigin(prof.KibanaURL), client.KibanaOrigin(s.URL), s.Sources["kibana_url"])
		}
	case prof.APIKeyFile != "":
		key, err := readKeyFile(expandHome(prof.APIKeyFile, a.p.getenv("HOME")))
		if err != nil {
			return nil, err
		}
		s.APIKey, s.Sources["api_key"] = key, fileSrc+" api_key_file"
	case prof.APIKey != "":
		s.APIKey, s.Sources["api_key"] = client.Secret(strings.TrimSpace(prof.APIKey)), fileSrc
	default:
		s.Sources["api_key"] = "default"
	}

	s.Sources["non_blocking"] = "default"
	if v := a.p.getenv("A2A_COURIER_NON_BLOCKING"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, configErr("use true or false", "A2A_COURIER_NON_BLOCKING=%q is not a boolean", v)
		}
		s.NonBlocking, s.Sources["non_blocking"] = &b, "env A2A_COURIER_NON_BLOCKING"
	} else if prof.NonBlocking != nil {
		b := *prof.NonBlocking
		s.NonBlocking, s.Sources["non_blocking"] = &b, fileSrc
	}
	s.Sources["insecure"] = "default"
	if v := a.p.getenv("A2A_COURIER_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, configErr("use true or false", "A2A_COURIER_INSECURE=%q is not a boolean", v)
		}
		s.Insecure, s.Sources["insecure"] = b, "env A2A_COURIER_INSECURE"
	} else if prof.Insecure != nil {
		s.Insecure, s.Sources["insecure"] = *prof.Insecure, fileSrc
	}

	dur := func(name, env string, fileVal, def time.Duration) (time.Duration, error) {
		if v := a.p.getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return 0, configErr("use a Go duration such as 20s or 5m", "%s=%q is not a positive duration", env, v)
			}
			s.Sources[name] = "env " + env
			return d, nil
		}
		if fileVal > 0 {
			s.Sources[name] = fileSrc
			return fileVal, nil
		}
		s.Sources[name] = "default"
		return def, nil
	}
	var err error
	if s.PollInterval, err = dur("poll_interval", "A2A_COURIER_POLL_INTERVAL", prof.PollInterval, defaultPollInterval); err != nil {
		return nil, err
	}
	if s.MaxWait, err = dur("max_wait", "A2A_COURIER_MAX_WAIT", prof.MaxWait, defaultMaxWait); err != nil {
		return nil, err
	}
	if s.SendTimeout, err = dur("send_timeout", "A2A_COURIER_SEND_TIMEOUT", prof.SendTimeout, defaultSendTimeout); err != nil {
		return nil, err
	}
	if s.WaitTimeout, err = dur("wait_timeout", "A2A_COURIER_WAIT_TIMEOUT", prof.WaitTimeout, defaultResultWait); err != nil {
		return nil, err
	}
	s.StateDir, s.Sources["state_dir"] = a.stateDirSource()
	a.cached = s
	return s, nil
}

func profileList(cf *fileConfig) string {
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

// readKeyFile reads an API key from a file that only its owner can read.
func readKeyFile(path string) (client.Secret, error) {
	return readSecretFile("API key file", "the API key's encoded value", path)
}

// readTokenFile reads an A2A agent's token from a file that only its
// owner can read.
func readTokenFile(path string) (client.Secret, error) {
	return readSecretFile("token file", "the token", path)
}

func readSecretFile(what, holds, path string) (client.Secret, error) {
	oneLine := "the " + what + " holds " + holds + " on one line"
	b, fi, err := boundedfile.Read(path, maxSecretFileBytes)
	if err != nil {
		if ce := unreadableFileErr(what, err, "keep it in a regular file, mode 0600: "+oneLine); ce != nil {
			return "", ce
		}
		return "", configErr(oneLine, "%s: %v", what, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", configErr("run: chmod 600 "+path, "%s %s can be read by other users (mode %04o)", what, path, fi.Mode().Perm())
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, "\n\r") {
		return "", configErr(oneLine, "%s %s is empty or has several lines", what, path)
	}
	return client.Secret(key), nil
}

// configFileErr reports a config file that cannot be read.
func configFileErr(path string, err error) *cliError {
	if ce := unreadableFileErr("config file", err, "the config file is a regular file of a few KB (a symlink to one is fine): "+
		"move this one away, or point A2A_COURIER_CONFIG_DIR at another directory"); ce != nil {
		return ce
	}
	return configErr("check the file's permissions", "config file %s: %v", path, err)
}

// unreadableFileErr is the usage error (exit 2) for a file named by the
// user or the config file that is not a regular file or is over its cap;
// nil for any other error.
func unreadableFileErr(what string, err error, hint string) *cliError {
	var nr *boundedfile.NotRegularError
	var tl *boundedfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return configErr(hint, "%s %s is %s, not a regular file", what, nr.Path, boundedfile.Kind(nr.Mode))
	case errors.As(err, &tl) && tl.Size > tl.Max:
		return configErr(hint, "%s %s is %s, over the %s limit", what, tl.Path, boundedfile.SizeText(tl.Size), boundedfile.SizeText(tl.Max))
	case errors.As(err, &tl):
		return configErr(hint, "%s %s grew over the %s limit while it was read", what, tl.Path, boundedfile.SizeText(tl.Max))
	}
	return nil
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

// kibanaSettings returns the settings, requiring a Kibana URL and an API
// key. Missing ones give the step-by-step set-up, not a bare error.
func (a *App) kibanaSettings() (*settings, error) {
	s, err := a.loadSettings()
	if err != nil {
		return nil, err
	}
	var missing []string
	if s.URL == "" {
		missing = append(missing, "KIBANA_URL")
	}
	if s.APIKey == "" {
		missing = append(missing, "KIBANA_API_KEY")
	}
	if s.URL != "" && s.APIKey == "" && s.KeyHeldBack != "" {
		return nil, &cliError{exit: ExitUsage, code: "not_configured",
			message: "no API key for " + client.KibanaOrigin(s.URL) + ": " + s.KeyHeldBack,
			hint:    "a key goes only to its own Kibana: give this one its key (KIBANA_API_KEY beside a matching KIBANA_URL, --api-key-file, or a profile with its own kibana-url and api-key), or drop the URL that overrides it"}
	}
	if len(missing) > 0 {
		return nil, &cliError{exit: ExitUsage, code: "not_configured",
			message: "not configured: " + strings.Join(missing, " and ") + " not set",
			hint:    setupSteps(), setup: setupStepList()}
	}
	if _, err := client.ParseKibanaURL(s.URL); err != nil {
		return nil, configErr(kibanaURLHint(s.URL, s.Sources["kibana_url"]), "%s", err.Error())
	}
	return s, nil
}

// kibanaURLHint is the hint for a Kibana URL that ParseKibanaURL refused;
// source says where it came from ("env KIBANA_URL").
func kibanaURLHint(raw, source string) string {
	if !strings.Contains(raw, "://") {
		return "write the scheme in the Kibana URL (" + source + "): https://, or http:// for a Kibana without TLS, e.g. https://my-deployment.kb.europe-west1.gcp.cloud.es.io or http://localhost:5601"
	}
	return "the Kibana URL (" + source + ") is Kibana's address, e.g. https://my-deployment.kb.europe-west1.gcp.cloud.es.io"
}

// setupStepList is the guided set-up, one step per entry.
func setupStepList() []string {
	return []string{
		`In Kibana, open Stack Management > API keys > Create API key. Give it the Kibana privilege "Agent Builder: Read" (feature_agentBuilder.read) in the space your agents live in, and copy the "encoded" value.`,
		`Set the variables (in your shell profile, or in the assistant's environment): export KIBANA_URL=https://<your-deployment>.kb.<region>.cloud.es.io; export KIBANA_API_KEY=<the encoded value>; export KIBANA_SPACE_ID=<space id> (only for a space other than "default"). Or keep them in a profile: a2a-courier config set kibana-url <url>, then a2a-courier config set api-key < key-file.`,
		`Check it: a2a-courier doctor`,
	}
}

// setupSteps is the guided set-up printed when nothing is configured.
func setupSteps() string {
	return `set up a2a-courier in three steps:
  1. In Kibana, open Stack Management > API keys > Create API key. Give it the
     Kibana privilege "Agent Builder: Read" (feature_agentBuilder.read) in the
     space your agents live in, and copy the "encoded" value.
  2. Set the variables (in your shell profile, or in the assistant's environment):
       export KIBANA_URL=https://<your-deployment>.kb.<region>.cloud.es.io
       export KIBANA_API_KEY=<the encoded value>
       export KIBANA_SPACE_ID=<space id>     # only for a space other than "default"
     or keep them in a profile of the config file:
       a2a-courier config set kibana-url https://<your-deployment>.kb.<region>.cloud.es.io
       a2a-courier config set api-key < key-file      # read from stdin, never an argument
  3. Check it: a2a-courier doctor
To try the tool without a Kibana: a2a-courier demo`
}

// stateDirSource resolves the state directory: A2A_COURIER_STATE_DIR, else
// $XDG_STATE_HOME/a2a-courier, else ~/.local/state/a2a-courier.
func (a *App) stateDirSource() (string, string) {
	if d := a.p.getenv("A2A_COURIER_STATE_DIR"); d != "" {
		return d, "env A2A_COURIER_STATE_DIR"
	}
	if d := a.p.getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "a2a-courier"), "env XDG_STATE_HOME"
	}
	if home := a.p.getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "a2a-courier"), "default"
	}
	return "", "default"
}

func (a *App) openStore() (*store.Store, error) {
	dir, _ := a.stateDirSource()
	if dir == "" {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a private directory", "cannot find a state directory: HOME is not set")
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a directory you can write", "%s", err.Error())
	}
	return st, nil
}

// stateDirErr reports a state directory the system will not let this
// process write (a full disk, a read-only file system, someone else's
// directory): a problem of the set-up, exit 2, with what to do about it.
// Nothing is retried: the next write would be refused the same way.
func stateDirErr(err error, ue *store.UnwritableError) *cliError {
	dir := shellQuote(ue.Dir)
	hint := "check that this user owns it and may write in it (ls -ld " + dir + "), or point A2A_COURIER_STATE_DIR at a directory it can write"
	switch {
	case ue.Full():
		hint = "free space on the disk that holds it (df -h " + dir + "), or point A2A_COURIER_STATE_DIR at a directory on a disk with room"
	case ue.ReadOnly():
		hint = "its file system is read-only: point A2A_COURIER_STATE_DIR at a writable directory"
	}
	return &cliError{exit: ExitUsage, code: "state_dir", message: oneLineErr(err), hint: hint, err: err}
}

// durationFlag returns the flag's value when it was given, else the setting.
func durationFlag(flagVal time.Duration, flagSet bool, setting time.Duration) time.Duration {
	if flagSet {
		return flagVal
	}
	return setting
}

func (a *App) httpClient(s *settings) (*http.Client, error) {
	hc, err := a.httpClients()(store.Target{CAFile: s.CAFile, Insecure: s.Insecure})
	if err != nil {
		return nil, configErr("A2A_COURIER_CA_CERT must name a PEM file of CA certificates", "%s", err.Error())
	}
	return hc, nil
}

func userAgent() string { return "a2a-courier/" + versionString() }

// kibanaClient is kibana(kibanaSettings()): the client of the configured
// Kibana, or the set-up steps when it is not configured.
func (a *App) kibanaClient() (*client.Kibana, error) {
	s, err := a.kibanaSettings()
	if err != nil {
		return nil, err
	}
	return a.kibana(s)
}

// kibanaForRecord is the Agent Builder client that reads a task's
// conversation: in the space the local record says it was sent in, when
// the configured Kibana is the record's (the task was sent with this
// Kibana's key), else in the configured space. space names the space read,
// for messages ("default" for the default one).
// sameKibana is true when the client is the record's Kibana, in its space
// (false without a record, or for another Kibana).
func (a *App) kibanaForRecord(local *store.Record) (k *client.Kibana, space string, sameKibana bool, err error) {
	s, err := a.kibanaSettings()
	if err != nil {
		return nil, "", false, err
	}
	if local != nil && local.Target.Kind == store.TargetKibana {
		switch {
		case client.KibanaOrigin(local.Target.URL) != client.KibanaOrigin(s.URL):
			a.printer().warn("task %s was sent to another Kibana (%s); reading the configured one", local.ContextID, client.RedactURL(local.Target.URL))
		case local.Target.Space != s.Space:
			cp := *s
			cp.Space = local.Target.Space
			a.printer().info("reading space %s, where task %s was sent (the configured space is %s)", spaceName(cp.Space), local.ContextID, spaceName(s.Space))
			s, sameKibana = &cp, true
		default:
			sameKibana = true
		}
	}
	k, err = a.kibana(s)
	return k, spaceName(s.Space), sameKibana, err
}

func spaceName(space string) string {
	if space == "" {
		return "default"
	}
	return space
}

// kibana builds the Agent Builder client for settings.
func (a *App) kibana(s *settings) (*client.Kibana, error) {
	hc, err := a.httpClient(s)
	if err != nil {
		return nil, err
	}
	k, err := client.NewKibana(client.KibanaConfig{
		URL: s.URL, Space: s.Space, APIKey: s.APIKey, HTTPClient: hc, UserAgent: userAgent(),
	})
	if err != nil {
		return nil, configErr("check the Kibana URL and space ("+s.Sources["kibana_url"]+", "+s.Sources["space"]+")", "%s", err.Error())
	}
	return k, nil
}

func describeTarget(s *settings) string {
	sp := s.Space
	if sp == "" {
		sp = "default"
	}
	return fmt.Sprintf("%s (space %s)", s.URL, sp)
}
