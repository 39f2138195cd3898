package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
)

// Load resolves every setting: flag > environment > config file (the
// profile) > default. getenv looks up the environment. It does not require
// the connection to be configured (RequireKibana does).
func Load(getenv func(string) string, flags Flags) (*Settings, error) {
	// A variable of spaces alone is not set: it does not hide the
	// profile's value (LoadEnv says it is empty when nothing else gives one).
	trimmed := func(k string) string { return strings.TrimSpace(getenv(k)) }
	l := &loader{getenv: trimmed, flags: flags, s: &Settings{Sources: map[string]string{}, ConfigFile: Path(getenv)}}
	if err := l.profile(); err != nil {
		return nil, err
	}
	l.connection()
	if err := l.key(); err != nil {
		return nil, err
	}
	if err := l.switches(); err != nil {
		return nil, err
	}
	if err := l.durations(); err != nil {
		return nil, err
	}
	l.s.StateDir, l.s.Sources["state_dir"] = StateDir(getenv)
	return l.s, nil
}

// LoadEnv is Load reading the environment through lookup, which also tells
// a variable set empty from one not set: the set-up error then says that
// KIBANA_URL is empty (an assistant's config written with "KIBANA_URL": ""
// to fill in later), not that it is not set.
func LoadEnv(lookup func(string) (string, bool), flags Flags) (*Settings, error) {
	s, err := Load(func(k string) string { v, _ := lookup(k); return v }, flags)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"KIBANA_URL", "KIBANA_API_KEY"} {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) == "" {
			s.EmptyEnv = append(s.EmptyEnv, k)
		}
	}
	return s, nil
}

// loader is one resolution of the settings, step by step.
type loader struct {
	getenv func(string) string
	flags  Flags
	s      *Settings
	// prof is the profile of the config file in use (empty without one),
	// fileSrc how its values are sourced.
	prof    Profile
	fileSrc string
}

// profile reads the config file and picks the profile.
func (l *loader) profile() error {
	s := l.s
	var cf *File
	if s.ConfigFile != "" {
		var err error
		if cf, err = ReadFile(s.ConfigFile); err != nil {
			return err
		}
	}
	if cf == nil {
		s.ConfigFile = ""
	}
	defaultProfile := ""
	if cf != nil {
		defaultProfile = cf.DefaultProfile
	}
	var from string
	s.Profile, from = ProfileName(l.getenv, l.flags, defaultProfile)
	s.Sources["profile"] = from
	if cf != nil {
		p, ok := cf.Profiles[strings.ToLower(s.Profile)]
		if !ok && from != "default" {
			return configErr("profiles in "+s.ConfigFile+": "+profileList(cf), "no profile %q in the config file", s.Profile)
		}
		l.prof = p
		s.Peers = cf.Peers
		s.Profiles = summarize(cf, s.Profile)
	} else if from != "default" {
		e := configErr("", "no profile %q: there is no config file (%s)", s.Profile, Path(l.getenv))
		hint := func(cmd func(string) string) string {
			return "create it with: " + cmd("a2a-courier config set kibana-url <url> --profile "+s.Profile)
		}
		e.Hint, e.Said = hint(asIs), perCaller(hint)
		return e
	}
	l.fileSrc = fmt.Sprintf("file (profile %s)", s.Profile)
	return nil
}

// str resolves a string setting: the flag, the environment variable, the
// profile's value, else empty.
func (l *loader) str(name, flagName, flagVal, env, fileVal string) string {
	switch {
	case flagVal != "":
		l.s.Sources[name] = "flag --" + flagName
		return flagVal
	case env != "" && l.getenv(env) != "":
		l.s.Sources[name] = "env " + env
		return strings.TrimSpace(l.getenv(env))
	case fileVal != "":
		l.s.Sources[name] = l.fileSrc
		return fileVal
	}
	l.s.Sources[name] = "default"
	return ""
}

// profileFits reports whether the profile speaks of the Kibana in use: a
// profile that names its Kibana speaks of that Kibana only, so that its
// space and key do not follow another URL.
func (l *loader) profileFits() bool {
	return l.prof.KibanaURL == "" || client.KibanaOrigin(l.prof.KibanaURL) == client.KibanaOrigin(l.s.URL)
}

// connection resolves the Kibana URL, the space and the CA bundle.
func (l *loader) connection() {
	s := l.s
	s.URL = l.str("kibana_url", "kibana-url", l.flags.KibanaURL, "KIBANA_URL", l.prof.KibanaURL)
	profSpace := l.prof.Space
	if !l.profileFits() {
		profSpace = ""
	}
	s.Space = l.str("space", "space", l.flags.Space, "KIBANA_SPACE_ID", profSpace)
	if s.Space == "default" {
		s.Space = ""
	}
	s.CAFile = l.str("ca_cert", "", "", "A2A_COURIER_CA_CERT", ExpandHome(l.prof.CACert, l.getenv))
}

// key resolves the API key. A key and its Kibana go together: a profile
// that names its own Kibana and key uses that key, whatever KIBANA_API_KEY
// holds (that key is for KIBANA_URL's Kibana); a profile's key never goes
// to another Kibana than the profile's; and KIBANA_API_KEY does not go to
// another Kibana than KIBANA_URL's (one named by --kibana-url or a
// profile). A key held back so says why in KeyHeldBack.
func (l *loader) key() error {
	s, prof := l.s, l.prof
	profKeyFits := l.profileFits()
	profHasKey := prof.APIKeyFile != "" || prof.APIKey != ""
	envURL := strings.TrimSpace(l.getenv("KIBANA_URL"))
	envKeyFits := envURL == "" || client.KibanaOrigin(envURL) == client.KibanaOrigin(s.URL)
	envKey := l.getenv("KIBANA_API_KEY") != "" && envKeyFits && !(s.Sources["kibana_url"] == l.fileSrc && profHasKey)
	s.Sources["api_key"] = "default"
	switch {
	case l.flags.APIKeyFile == "" && l.getenv("KIBANA_API_KEY") != "" && !envKeyFits && !(profHasKey && profKeyFits):
		s.KeyHeldBack = fmt.Sprintf("KIBANA_API_KEY was not used: it belongs to KIBANA_URL's Kibana (%s), not to %s (%s)",
			client.KibanaOrigin(envURL), client.KibanaOrigin(s.URL), s.Sources["kibana_url"])
	case l.flags.APIKeyFile != "":
		key, err := readKeyFile(l.flags.APIKeyFile)
		if err != nil {
			return err
		}
		s.APIKey, s.Sources["api_key"] = key, "flag --api-key-file"
	case envKey:
		s.APIKey, s.Sources["api_key"] = client.Secret(strings.TrimSpace(l.getenv("KIBANA_API_KEY"))), "env KIBANA_API_KEY"
	case !profKeyFits:
		// The profile's key is for the profile's Kibana, not this one.
		if profHasKey {
			s.KeyHeldBack = fmt.Sprintf("the key of profile %s was not used: it belongs to the profile's Kibana (%s), not to %s (%s)",
				s.Profile, client.KibanaOrigin(prof.KibanaURL), client.KibanaOrigin(s.URL), s.Sources["kibana_url"])
		}
	case prof.APIKeyFile != "":
		key, err := readKeyFile(ExpandHome(prof.APIKeyFile, l.getenv))
		if err != nil {
			return err
		}
		s.APIKey, s.Sources["api_key"] = key, l.fileSrc+" api_key_file"
	case prof.APIKey != "":
		s.APIKey, s.Sources["api_key"] = client.Secret(strings.TrimSpace(prof.APIKey)), l.fileSrc
	}
	return nil
}

// switches resolves non_blocking and insecure: the environment, else the
// profile.
func (l *loader) switches() error {
	s := l.s
	s.Sources["non_blocking"] = "default"
	if v := l.getenv("A2A_COURIER_NON_BLOCKING"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return configErr("use true or false", "A2A_COURIER_NON_BLOCKING=%q is not a boolean", v)
		}
		s.NonBlocking, s.Sources["non_blocking"] = &b, "env A2A_COURIER_NON_BLOCKING"
	} else if l.prof.NonBlocking != nil {
		b := *l.prof.NonBlocking
		s.NonBlocking, s.Sources["non_blocking"] = &b, l.fileSrc
	}
	s.Sources["insecure"] = "default"
	if v := l.getenv("A2A_COURIER_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return configErr("use true or false", "A2A_COURIER_INSECURE=%q is not a boolean", v)
		}
		s.Insecure, s.Sources["insecure"] = b, "env A2A_COURIER_INSECURE"
	} else if l.prof.Insecure != nil {
		s.Insecure, s.Sources["insecure"] = *l.prof.Insecure, l.fileSrc
	}
	return nil
}

// durations resolves the timing settings: the environment, else the
// profile, else the default.
func (l *loader) durations() error {
	for _, d := range []struct {
		name, env    string
		fileVal, def time.Duration
		to           *time.Duration
	}{
		{"poll_interval", "A2A_COURIER_POLL_INTERVAL", l.prof.PollInterval, DefaultPollInterval, &l.s.PollInterval},
		{"max_wait", "A2A_COURIER_MAX_WAIT", l.prof.MaxWait, DefaultMaxWait, &l.s.MaxWait},
		{"send_timeout", "A2A_COURIER_SEND_TIMEOUT", l.prof.SendTimeout, DefaultSendTimeout, &l.s.SendTimeout},
		{"wait_timeout", "A2A_COURIER_WAIT_TIMEOUT", l.prof.WaitTimeout, DefaultWaitTimeout, &l.s.WaitTimeout},
	} {
		switch v := l.getenv(d.env); {
		case v != "":
			dur, err := time.ParseDuration(v)
			if err != nil || dur <= 0 {
				return configErr(DurationHint(v), "%s=%q is not a positive duration", d.env, v)
			}
			*d.to, l.s.Sources[d.name] = dur, "env "+d.env
		case d.fileVal > 0:
			*d.to, l.s.Sources[d.name] = d.fileVal, l.fileSrc
		default:
			*d.to, l.s.Sources[d.name] = d.def, "default"
		}
	}
	return nil
}
