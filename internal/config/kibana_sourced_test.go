package config

import "testing"

// A hint names a setting's source when it is not the variable the hint
// names: a profile's value points at the profile and its config set.
func TestSourced(t *testing.T) {
	s := &Settings{Profile: "lab", Sources: map[string]string{"kibana_url": "file (profile lab)", "api_key": "env KIBANA_API_KEY"}}
	for in, want := range map[string]string{
		"check KIBANA_URL and that Kibana is up":    "check the kibana_url of profile lab in the config file (a2a-courier config set kibana-url --profile lab) and that Kibana is up",
		"is KIBANA_URL the Kibana URL?":             "is the kibana_url of profile lab in the config file (a2a-courier config set kibana-url --profile lab) the Kibana URL?",
		"the key was refused: check KIBANA_API_KEY": "the key was refused: check KIBANA_API_KEY",
		"try again later":                           "try again later",
	} {
		if got := s.Sourced(in); got != want {
			t.Errorf("Sourced(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	s.Sources["api_key"] = "file (profile lab) api_key_file"
	if got := s.Sourced("check KIBANA_API_KEY"); got != "check the key in the file api_key_file of profile lab names" {
		t.Errorf("api_key_file: %q", got)
	}
	s.Sources["kibana_url"] = "default"
	if got := s.Sourced("check KIBANA_URL (or the agent's URL)"); got != "check KIBANA_URL (or the agent's URL)" {
		t.Errorf("unset: %q", got)
	}
	s.Sources["api_key"] = "flag --api-key-file"
	if got := s.Sourced("check KIBANA_API_KEY"); got != "check --api-key-file" {
		t.Errorf("flag: %q", got)
	}
}
