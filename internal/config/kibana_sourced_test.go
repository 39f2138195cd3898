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

// The space of a hint's "check KIBANA_SPACE_ID" is named with where it
// came from and how to use another, by what set it.
func TestSourcedSpace(t *testing.T) {
	const hint = "the key lacks a privilege in the space; check KIBANA_SPACE_ID"
	for _, tc := range []struct {
		space, src string
		want       string
	}{
		{"", "default", "the space is the default one (no --space, KIBANA_SPACE_ID or profile space is set): if the agents live in another, give its id with --space <id> or KIBANA_SPACE_ID"},
		{"", "flag --space", "the space is default, from --space: if the agents live in another, give its id with --space"},
		{"prod", "env KIBANA_SPACE_ID", "the space is prod, from KIBANA_SPACE_ID: if the agents live in another, set KIBANA_SPACE_ID to its id, or give --space <id>"},
		{"prod", "file (profile lab)", "the space is prod, from profile lab: if the agents live in another, a2a-courier config set space <id> --profile lab, or give --space <id>"},
		{"prod", "task 3f6c2e1a", "the space is prod, where task 3f6c2e1a was sent"},
	} {
		s := &Settings{Profile: "lab", Space: tc.space, Sources: map[string]string{"space": tc.src}}
		if got, want := s.Sourced(hint), "the key lacks a privilege in the space; "+tc.want; got != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.src, got, want)
		}
	}
	s := &Settings{Space: "prod", Sources: map[string]string{"space": "flag --space"}}
	if got := s.Sourced("check the id"); got != "check the id" {
		t.Errorf("a hint without the space: %q", got)
	}
}
