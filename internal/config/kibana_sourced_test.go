package config

import (
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/nextstep"
)

// sourced renders a hint for s.
func sourced(s *Settings, t nextstep.Text) string {
	return nextstep.Caller{Where: s.Where}.Text(t)
}

// A hint names a setting's source when it is not the variable the hint
// names: a profile's value points at the profile and its config set.
func TestWhere(t *testing.T) {
	s := &Settings{Profile: "lab", Sources: map[string]string{"kibana_url": "file (profile lab)", "api_key": "env KIBANA_API_KEY"}}
	for _, tc := range []struct {
		in   nextstep.Text
		want string
	}{
		{nextstep.Say("%s and that Kibana is up", nextstep.Check(nextstep.KibanaURL)), "check the kibana_url of profile lab in the config file (a2a-courier config set kibana-url --profile lab) and that Kibana is up"},
		{nextstep.Say("is %s the Kibana URL?", nextstep.KibanaURL), "is the kibana_url of profile lab in the config file (a2a-courier config set kibana-url --profile lab) the Kibana URL?"},
		{nextstep.Say("the key was refused: %s", nextstep.Check(nextstep.KibanaAPIKey)), "the key was refused: check KIBANA_API_KEY"},
		{nextstep.Plain("try again later"), "try again later"},
	} {
		if got := sourced(s, tc.in); got != tc.want {
			t.Errorf("%q\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	key := nextstep.Say("%s", nextstep.Check(nextstep.KibanaAPIKey))
	s.Sources["api_key"] = "file (profile lab) api_key_file"
	if got := sourced(s, key); got != "check the key in the file api_key_file of profile lab names" {
		t.Errorf("api_key_file: %q", got)
	}
	s.Sources["kibana_url"] = "default"
	if got := sourced(s, nextstep.Say("%s (or the agent's URL)", nextstep.Check(nextstep.KibanaURL))); got != "check KIBANA_URL (or the agent's URL)" {
		t.Errorf("unset: %q", got)
	}
	s.Sources["api_key"] = "flag --api-key-file"
	if got := sourced(s, key); got != "check --api-key-file" {
		t.Errorf("flag: %q", got)
	}
}

// The space of a hint's "check KIBANA_SPACE_ID" is named with where it
// came from and how to use another, by what set it.
func TestWhereSpace(t *testing.T) {
	hint := nextstep.Say("the key lacks a privilege in the space; %s", nextstep.Check(nextstep.KibanaSpace))
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
		if got, want := sourced(s, hint), "the key lacks a privilege in the space; "+tc.want; got != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.src, got, want)
		}
	}
	if got := hint.String(); got != "the key lacks a privilege in the space; check KIBANA_SPACE_ID" {
		t.Errorf("settings not loaded: %q", got)
	}
}
