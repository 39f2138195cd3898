package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// RequireKibana checks that the settings name a Kibana and its API key.
// Missing ones give the step-by-step set-up, not a bare error.
func RequireKibana(s *Settings) error {
	var missing []string
	if s.URL == "" {
		missing = append(missing, "KIBANA_URL")
	}
	if s.APIKey == "" {
		missing = append(missing, "KIBANA_API_KEY")
	}
	if s.URL != "" && s.APIKey == "" && s.KeyHeldBack != "" {
		return &Error{Code: "not_configured",
			Message: "no API key for " + client.KibanaOrigin(s.URL) + ": " + s.KeyHeldBack,
			Hint:    "a key goes only to its own Kibana: give this one its key (KIBANA_API_KEY beside a matching KIBANA_URL, --api-key-file, or a profile with its own kibana-url and api-key), or drop the URL that overrides it"}
	}
	if len(missing) > 0 {
		e := &Error{Code: "not_configured", Message: "not configured: " + unset(missing, s.EmptyEnv),
			Hint: SetupSteps(), Said: SetupSaid(), Setup: SetupStepList()}
		profileAdvice(s, e, missing)
		return e
	}
	if _, err := client.ParseKibanaURL(s.URL); err != nil {
		return configErr(KibanaURLHint(s.URL, s.Sources["kibana_url"]), "%s", err.Error())
	}
	return nil
}

// unset says of the missing variables which are not set and which are
// set but empty ("KIBANA_URL set but empty and KIBANA_API_KEY not set").
func unset(missing, empty []string) string {
	said := make([]string, len(missing))
	same := true
	for i, m := range missing {
		said[i] = m + " not set"
		if slices.Contains(empty, m) {
			said[i] = m + " set but empty"
		}
		same = same && strings.TrimPrefix(said[i], m) == strings.TrimPrefix(said[0], missing[0])
	}
	if same {
		return strings.Join(missing, " and ") + strings.TrimPrefix(said[0], missing[0])
	}
	return strings.Join(said, " and ")
}

// profileAdvice speaks of the config file's profiles, when it has some: the
// one selected lacks what is missing, or none of them is selected.
func profileAdvice(s *Settings, e *Error, missing []string) {
	if len(s.Profiles) == 0 {
		return
	}
	var names []string
	selected := false
	for _, p := range s.Profiles {
		names = append(names, p.Name)
		selected = selected || p.Selected
	}
	if !selected {
		e.Message += fmt.Sprintf("; no profile is selected: the config file (%s) has %s, and the profile in use, %s, is not one of them",
			s.ConfigFile, plural(len(names), "profile")+" "+strings.Join(names, ", "), s.Profile)
		hint := func(cmd func(string) string) string {
			return fmt.Sprintf("select one: --profile %[1]s, or %[2]s, or make it the default: %[3]s", names[0], shellcmd.EnvSet("A2A_COURIER_PROFILE", names[0]), cmd("a2a-courier config set default-profile "+names[0]))
		}
		e.Hint, e.Said = hint(asIs), perCaller(hint)
		return
	}
	hint := func(cmd func(string) string) string {
		var sets []string
		for _, m := range missing {
			if m == "KIBANA_API_KEY" {
				sets = append(sets, cmd(shellcmd.FromFile("a2a-courier config set api-key --profile "+s.Profile, "key-file")))
			} else {
				sets = append(sets, cmd("a2a-courier config set kibana-url <url> --profile "+s.Profile))
			}
		}
		return "set it in the profile: " + strings.Join(sets, "; ") + "; or select another profile with --profile or A2A_COURIER_PROFILE (profiles: " + strings.Join(names, ", ") + ")"
	}
	if slices.ContainsFunc(missing, func(m string) bool { return slices.Contains(s.EmptyEnv, m) }) {
		them := "it"
		if len(missing) > 1 {
			them = "them"
		}
		e.Message += fmt.Sprintf("; profile %s of %s does not set %s either", s.Profile, s.ConfigFile, them)
	} else {
		e.Message += fmt.Sprintf(", nor in profile %s of %s", s.Profile, s.ConfigFile)
	}
	e.Hint, e.Said = hint(asIs), perCaller(hint)
}

// perCaller is a text said with its commands as command lines to people,
// and to the MCP server's tools as commands to run in a terminal.
func perCaller(said func(cmd func(string) string) string) nextstep.Text {
	return nextstep.Per(nextstep.Plain(said(asIs)), nextstep.Plain(said(inTerminal)))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprint(n) + " " + word + "s"
}

// KibanaURLHint is the hint for a Kibana URL that ParseKibanaURL refused;
// source says where it came from ("env KIBANA_URL").
func KibanaURLHint(raw, source string) string {
	if !strings.Contains(raw, "://") {
		return "write the scheme in the Kibana URL (" + source + "): https://, or http:// for a Kibana without TLS, e.g. https://my-deployment.kb.europe-west1.gcp.cloud.es.io or http://localhost:5601"
	}
	return "the Kibana URL (" + source + ") is Kibana's address, e.g. https://my-deployment.kb.europe-west1.gcp.cloud.es.io"
}

// SetupStepList is the guided set-up, one step per entry, said per
// caller: to the MCP server's tools, which run no shell, a command of it
// is one to "run `a2a-courier doctor` in a terminal".
func SetupStepList() []nextstep.Text {
	people, tools := setupStepList(asIs), setupStepList(inTerminal)
	steps := make([]nextstep.Text, len(people))
	for i := range people {
		steps[i] = nextstep.Per(nextstep.Plain(people[i]), nextstep.Plain(tools[i]))
	}
	return steps
}

func setupStepList(cmd func(string) string) []string {
	return []string{
		`In Kibana, open Stack Management > API keys > Create API key. Give it the Kibana privilege "Agent Builder: Read" (feature_agentBuilder.read) in the space your agents live in, and copy the "encoded" value.`,
		`Set the variables (in your shell profile, or in the assistant's environment): ` + shellcmd.EnvSet("KIBANA_URL", exampleURL) + "; " + shellcmd.EnvSet("KIBANA_API_KEY", "<the encoded value>") + "; " + shellcmd.EnvSet("KIBANA_SPACE_ID", "<space id>") + ` (only for a space other than "default"). Or keep them in a profile: ` + cmd("a2a-courier config set kibana-url <url>") + ", then " + cmd(shellcmd.FromFile("a2a-courier config set api-key", "key-file")) + ".",
		`Check it: ` + cmd("a2a-courier doctor"),
	}
}

// asIs says a command of the set-up as its command line; inTerminal says
// it to the MCP server's tools, which run no shell.
func asIs(line string) string { return line }

func inTerminal(line string) string { return "run `" + line + "` in a terminal" }

// exampleURL is the Kibana URL the set-up steps show.
const exampleURL = "https://<your-deployment>.kb.<region>.cloud.es.io"

// SetupSteps is the guided set-up printed when nothing is configured, in
// this system's shell.
func SetupSteps() string { return setupSteps(shellcmd.Native, asIs) }

// SetupSaid is SetupSteps said per caller (SetupStepList).
func SetupSaid() nextstep.Text {
	return nextstep.Per(nextstep.Plain(SetupSteps()), nextstep.Plain(setupSteps(shellcmd.Native, inTerminal)))
}

func setupSteps(sh shellcmd.Shell, cmd func(string) string) string {
	return `set up a2a-courier in three steps:
  1. In Kibana, open Stack Management > API keys > Create API key. Give it the
     Kibana privilege "Agent Builder: Read" (feature_agentBuilder.read) in the
     space your agents live in, and copy the "encoded" value.
  2. Set the variables (in your shell profile, or in the assistant's environment):
       ` + sh.EnvSet("KIBANA_URL", exampleURL) + `
       ` + sh.EnvSet("KIBANA_API_KEY", "<the encoded value>") + `
       ` + sh.EnvSet("KIBANA_SPACE_ID", "<space id>") + `     # only for a space other than "default"
     or keep them in a profile of the config file:
       ` + cmd("a2a-courier config set kibana-url "+exampleURL) + `
       ` + cmd(sh.FromFile("a2a-courier config set api-key", "key-file")) + `      # read from stdin, never an argument
  3. Check it: ` + cmd("a2a-courier doctor") + `
To try the tool without a Kibana, run its demo (a build with the simulator):
  go run -tags simulator github.com/a2a-courier/a2a-courier/cmd/a2a-courier@latest demo`
}

// Where names, in a hint, where a setting it speaks of came from when that
// is not the variable itself (nextstep.Caller.Where): "check
// KIBANA_API_KEY" of a key from a profile is "check the api_key of profile
// lab in the config file (a2a-courier config set api-key --profile lab)".
// check is a hint's "check <setting>"; for the space, that is said whole
// (SpaceWhere).
func (s *Settings) Where(v nextstep.Setting, check bool) string { return s.WhereTo(v, check, false) }

// WhereTo is Where said to the MCP server's tools (tool), which run no
// shell: a command it names is one to run in a terminal.
func (s *Settings) WhereTo(v nextstep.Setting, check, tool bool) string {
	cmd := asIs
	if tool {
		cmd = inTerminal
	}
	said := func(w string) string {
		if check {
			return "check " + w
		}
		return w
	}
	var key, verb string
	switch v {
	case nextstep.KibanaSpace:
		if check {
			return spaceWhere(s.Space, s.Sources["space"], s.Profile, cmd)
		}
		return said(string(v))
	case nextstep.KibanaAPIKey:
		key, verb = "api_key", "api-key"
	case nextstep.KibanaURL:
		key, verb = "kibana_url", "kibana-url"
	default:
		return said(string(v))
	}
	src := s.Sources[key]
	switch {
	case src == "" || src == "default" || src == "env "+string(v):
		return said(string(v))
	case strings.HasSuffix(src, " api_key_file"):
		return said(fmt.Sprintf("the key in the file api_key_file of profile %s names", s.Profile))
	case strings.HasPrefix(src, "file (profile "):
		return said(fmt.Sprintf("the %s of profile %s in the config file (%s)", key, s.Profile, cmd("a2a-courier config set "+verb+" --profile "+s.Profile)))
	}
	return said(strings.TrimPrefix(src, "flag ")) // --api-key-file
}

// SpaceWhere is a hint's "check KIBANA_SPACE_ID" said whole: which space
// is in use, where that came from (src, a source of Settings.Sources)
// and how to use another: the flag, the variable or the profile that set
// it. A source "task <id>" is the space a recorded task was sent to,
// which is where it is read.
func SpaceWhere(space, src, profile string) string { return spaceWhere(space, src, profile, asIs) }

func spaceWhere(space, src, profile string, cmd func(string) string) string {
	name := space
	if name == "" {
		name = "default"
	}
	const other = ": if the agents live in another, "
	switch {
	case src == "" || src == "default":
		return "the space is the default one (no --space, KIBANA_SPACE_ID or profile space is set)" + other + "give its id with --space <id> or KIBANA_SPACE_ID"
	case src == "flag --space":
		return "the space is " + name + ", from --space" + other + "give its id with --space"
	case src == "env KIBANA_SPACE_ID":
		return "the space is " + name + ", from KIBANA_SPACE_ID" + other + "set KIBANA_SPACE_ID to its id, or give --space <id>"
	case strings.HasPrefix(src, "file (profile "):
		return fmt.Sprintf("the space is %s, from profile %s%s%s, or give --space <id>", name, profile, other, cmd("a2a-courier config set space <id> --profile "+profile))
	case strings.HasPrefix(src, "task "):
		return "the space is " + name + ", where " + src + " was sent"
	}
	return "the space is " + name + " (" + src + ")"
}
