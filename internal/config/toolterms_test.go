package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// The hints of a missing setting, said to the MCP server's tools, which
// run no shell, name each command as one to run in a terminal; to people
// they stay the command lines (Hint, byte for byte).
func TestHintsSayCommandsToRunInATerminal(t *testing.T) {
	people, tools := nextstep.Caller{}, nextstep.Caller{Tool: true}
	check := func(what string, err error, want string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Said.IsZero() {
			t.Fatalf("%s: %v", what, err)
		}
		if people.Text(e.Said) != e.Hint || !strings.Contains(tools.Text(e.Said), want) {
			t.Errorf("%s: people %q (hint %q), tools %q, want it to hold %q", what, people.Text(e.Said), e.Hint, tools.Text(e.Said), want)
		}
		for i, step := range e.Setup {
			if said := tools.Text(step); strings.Contains(inTerminalRe(said), "a2a-courier ") {
				t.Errorf("%s: set-up step %d to the tools: %q", what, i+1, said)
			}
		}
	}
	lab := &Settings{ConfigFile: "/c/config.yaml", Profile: "lab", URL: "https://kb.example.com",
		Profiles: []ProfileSummary{{Name: "lab", Selected: true}, {Name: "prod"}}, Sources: map[string]string{}}
	check("a profile without its key", RequireKibana(lab), "set it in the profile: run `"+shellcmd.FromFile("a2a-courier config set api-key --profile lab", "key-file")+"` in a terminal")
	none := &Settings{ConfigFile: "/c/config.yaml", Profile: "other", Profiles: []ProfileSummary{{Name: "lab"}}, Sources: map[string]string{}}
	check("no profile selected", RequireKibana(none), "or make it the default: run `a2a-courier config set default-profile lab` in a terminal")
	check("nothing configured", RequireKibana(&Settings{Sources: map[string]string{}}), "3. Check it: run `a2a-courier doctor` in a terminal")
	_, err := Load(func(k string) string {
		return map[string]string{"A2A_COURIER_PROFILE": "lab", "A2A_COURIER_CONFIG_DIR": t.TempDir()}[k]
	}, Flags{})
	check("no config file", err, "create it with: run `a2a-courier config set kibana-url <url> --profile lab` in a terminal")

	key := &Settings{Profile: "lab", Sources: map[string]string{"api_key": "file (profile lab)", "space": "file (profile lab)"}, Space: "ops"}
	if got := key.WhereTo(nextstep.KibanaAPIKey, true, true); got != "check the api_key of profile lab in the config file (run `a2a-courier config set api-key --profile lab` in a terminal)" {
		t.Errorf("the key's source to the tools: %q", got)
	}
	if key.WhereTo(nextstep.KibanaAPIKey, true, false) != key.Where(nextstep.KibanaAPIKey, true) || key.Where(nextstep.KibanaAPIKey, true) != "check the api_key of profile lab in the config file (a2a-courier config set api-key --profile lab)" {
		t.Errorf("the key's source to people: %q", key.Where(nextstep.KibanaAPIKey, true))
	}
	if got := key.WhereTo(nextstep.KibanaSpace, true, true); !strings.Contains(got, "run `a2a-courier config set space <id> --profile lab` in a terminal") {
		t.Errorf("the space's source to the tools: %q", got)
	}
}

// inTerminalRe is s without its commands to run in a terminal.
func inTerminalRe(s string) string {
	for {
		i := strings.Index(s, "run `")
		j := strings.Index(s[max(i, 0):], "` in a terminal")
		if i < 0 || j < 0 {
			return s
		}
		s = s[:i] + s[i+j+len("` in a terminal"):]
	}
}
