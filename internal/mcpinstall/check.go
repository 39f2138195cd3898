package mcpinstall

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// TargetNames lists the targets as a sentence: "claude-desktop, cursor,
// vscode or gemini".
func TargetNames() string {
	n := make([]string, len(Targets))
	for i, t := range Targets {
		n[i] = string(t)
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// ExistingArgs returns the args of the entry named name in the target's
// file at path: nil when there is no such file or entry, or when it cannot
// be read (Install says why).
func ExistingArgs(path string, t Target, name string) []string {
	real, err := resolveLink(path)
	if err != nil {
		return nil
	}
	b, _, _, err := readConfig(real)
	if err != nil || len(b) == 0 {
		return nil
	}
	_, b = splitBOM(b)
	v, err := parseConfig(b)
	if err != nil {
		return nil
	}
	// Member by member, as Plan finds them: what else the file holds is
	// not read.
	args := &v
	for _, k := range []string{serversKey(t), name, "args"} {
		obj, ok := args.Value.(*hujson.Object)
		if !ok {
			return nil
		}
		if args = member(obj, k); args == nil {
			return nil
		}
	}
	c := args.Clone()
	c.Standardize()
	var got []string
	if json.Unmarshal(c.Pack(), &got) != nil {
		return nil
	}
	return got
}

// ProfileOf returns the value of --profile in an entry's args ("" without
// one).
func ProfileOf(args []string) string {
	for i, a := range args {
		if a == "--profile" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--profile="); ok {
			return v
		}
	}
	return ""
}

// ChooseProfile is the profile the entry names, and a note when it is not
// the one chosen here: chosen is the profile --profile or
// A2A_COURIER_PROFILE chose ("" for none), drop is --profile default, and
// previous the --profile of the entry already in the file. An entry
// installed with a profile keeps it when nothing chooses another (it is
// the one that worked); --profile default writes none.
func ChooseProfile(chosen string, drop bool, previous string) (string, string) {
	switch {
	case drop && previous != "":
		return "", "dropped --profile " + previous + " of the existing entry: its process takes the config file's default profile"
	case drop || chosen != "":
		return chosen, ""
	case previous != "":
		return previous, "kept --profile " + previous + " of the existing entry (--profile <name> chooses another, --profile default drops it)"
	}
	return "", ""
}

// flags are the connection flags of the entry's command line.
func (s Setup) flags() config.Flags {
	f := config.Flags{Profile: s.Profile}
	for i := 0; i+1 < len(s.Flags); i += 2 {
		v := s.Flags[i+1]
		switch s.Flags[i] {
		case "--kibana-url":
			f.KibanaURL = v
		case "--space":
			f.Space = v
		case "--api-key-file":
			f.APIKeyFile = v
		case "--token-file":
			f.TokenFile = v
		}
	}
	return f
}

// Check compares this shell's settings with those the entry's process
// will resolve (profile, the environment of the profile alone: HOME, or
// on Windows USERPROFILE, APPDATA and LOCALAPPDATA; the entry's env and
// flags) and
// notes, for Warnings, what that process lacks: a setting this shell
// takes from its environment that the entry's profile or config file does
// not give (EnvOnly, EnvTLS), the Kibana URL or key it finds nowhere
// (Missing), or why it cannot load its settings at all (Broken).
func (s *Setup) Check(shell *config.Settings, profile func(string) string) {
	e := s.Entry()
	getenv := func(k string) string {
		if v, ok := e.Env[k]; ok {
			return v
		}
		return profile(k)
	}
	got, err := config.Load(getenv, s.flags())
	if err != nil {
		s.Broken = strings.ReplaceAll(err.Error(), "\n", " ")
		return
	}
	s.EnvOnly, s.EnvTLS, s.Missing = nil, nil, nil
	for _, k := range []string{"kibana_url", "api_key", "space", "ca_cert", "insecure"} {
		v, fromEnv := strings.CutPrefix(shell.Sources[k], "env ")
		switch {
		case !fromEnv || got.Sources[k] != "default":
		case strings.HasPrefix(v, "KIBANA_"):
			s.EnvOnly = append(s.EnvOnly, v)
		default:
			s.EnvTLS = append(s.EnvTLS, v)
		}
	}
	for _, m := range []struct {
		unset        bool
		env, setting string
	}{{got.URL == "", "KIBANA_URL", "kibana-url"}, {got.APIKey == "", "KIBANA_API_KEY", "api-key"}} {
		if m.unset && !contains(s.EnvOnly, m.env) {
			s.Missing = append(s.Missing, m.setting)
		}
	}
	s.peers = len(got.Peers) > 0
	s.configFile, s.entryProfile = got.ConfigFile, got.Profile
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// missingText is what a Missing setting is, and the config set command
// line that sets it in a profile.
var missingText = map[string][2]string{"kibana-url": {"no Kibana URL", "kibana-url <url> --profile %s"}, "api-key": {"no API key", "api-key --profile %s"}}

// configWarnings are the warnings of Check: a process that cannot load its
// settings, or finds no Kibana URL or key (every tool would answer "not
// configured"), with where to configure them.
func (s Setup) configWarnings(t Target) []string {
	if s.Broken != "" {
		return []string{fmt.Sprintf("%s's a2a-courier server cannot load its settings (%s): every tool would answer so; fix it, then check with a2a-courier doctor", t, s.Broken)}
	}
	if len(s.Missing) == 0 {
		return nil
	}
	var lacks []string
	for _, m := range s.Missing {
		lacks = append(lacks, missingText[m][0])
	}
	where := "there is no config file"
	if s.configFile != "" {
		where = "in profile " + s.entryProfile + " of " + s.configFile
	}
	answers := `every tool would answer "not configured"`
	if s.peers {
		answers = `the tools would answer "not configured" for Kibana's agents (the config file's peers still work)`
	}
	// The profile named: config set writes to the one this shell
	// selects, which may be another.
	other := ""
	if s.Profile == "" {
		other = " (or in another profile: the same with its --profile, then mcp install --profile <name>)"
	}
	var sets []string
	for _, m := range s.Missing {
		set := "a2a-courier config set " + fmt.Sprintf(missingText[m][1], s.entryProfile)
		if m == "api-key" {
			set = shellcmd.FromFile(set, "key-file")
		}
		sets = append(sets, set)
	}
	return []string{fmt.Sprintf("%s's a2a-courier server is not configured: %s (%s): %s; configure it: %s%s, then check with a2a-courier doctor",
		t, strings.Join(lacks, " and "), where, answers, strings.Join(sets, "; "), other)}
}
