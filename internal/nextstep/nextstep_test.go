package nextstep

import (
	"reflect"
	"testing"
)

// The connection flags go after the command name, quoted, but for one the
// step names itself, and none for a step naming its own --kibana-url or a
// command that reaches no server.
func TestLine(t *testing.T) {
	c := Caller{Conn: []Flag{{"--profile", "my lab"}, {"--kibana-url", "https://a.example.com"}}}
	for _, tc := range []struct {
		step Step
		want string
	}{
		{New("fetch").Pos("c1").Bool("--json"), "a2a-courier fetch --profile 'my lab' --kibana-url https://a.example.com c1 --json"},
		{New("send").Pos("x").Flag("--context", "c").Flag("--kibana-url", "https://b.example.com").ReadsStdin(), "a2a-courier send x --context c --kibana-url https://b.example.com -"},
		{New("show").Pos("c1").Flag("--profile", "other"), "a2a-courier show --kibana-url https://a.example.com c1 --profile other"},
		{New("prune"), "a2a-courier prune"},
		{New("fetch").Flag("--task", "t 1").Hole("--url", "agent URL"), "a2a-courier fetch --profile 'my lab' --kibana-url https://a.example.com --task 't 1' --url <agent URL>"},
	} {
		if got := c.Line(tc.step); got != tc.want {
			t.Errorf("Line\n = %q\nwant %q", got, tc.want)
		}
	}
	if got := New("fetch").Pos("c").String(); got != "a2a-courier fetch c" {
		t.Errorf("no caller: %q", got)
	}
}

// A resume keeps the caller's --timeout for the commands that wait, and
// --json; an answer keeps its "-" last.
func TestResume(t *testing.T) {
	c := Caller{Waits: []Arg{{Flag: "--timeout", Value: "90s"}, {Flag: "--progress", Bool: true}}, JSON: true}
	for _, tc := range []struct {
		step Step
		want string
	}{
		{New("result").Pos("c1").Bool("--wait"), "a2a-courier result c1 --wait --timeout 90s --progress --json"},
		{New("fetch").Pos("c1"), "a2a-courier fetch c1 --json"},
		{New("send").Pos("a").Flag("--context", "c").Bool("--json").ReadsStdin(), "a2a-courier send a --context c --json --timeout 90s --progress -"},
		{Step{}, ""},
	} {
		if got := c.Resume(tc.step); got != tc.want {
			t.Errorf("Resume\n = %q\nwant %q", got, tc.want)
		}
	}
}

// A text renders its steps and settings for the caller where they stand;
// Fix says a check as given, whatever the caller's settings.
func TestText(t *testing.T) {
	where := func(s Setting, check bool) string {
		if s == KibanaAPIKey && check {
			return "check the api_key of profile lab"
		}
		return "the space is x"
	}
	c := Caller{Conn: []Flag{{"--profile", "lab"}}, Where: where}
	txt := Say("%s; `%s` lists them", Check(KibanaAPIKey), New("discover")).Then(" (%s)", Check(KibanaSpace))
	if got, want := c.Text(txt), "check the api_key of profile lab; `a2a-courier discover --profile lab` lists them (the space is x)"; got != want {
		t.Errorf("Text\n = %q\nwant %q", got, want)
	}
	if got, want := txt.String(), "check KIBANA_API_KEY; `a2a-courier discover` lists them (check KIBANA_SPACE_ID)"; got != want {
		t.Errorf("String\n = %q\nwant %q", got, want)
	}
	if got, want := c.Text(txt.Fix(KibanaSpace, "the space is y, where task c was sent")), "check the api_key of profile lab; `a2a-courier discover --profile lab` lists them (the space is y, where task c was sent)"; got != want {
		t.Errorf("Fix\n = %q\nwant %q", got, want)
	}
	if !Plain("").IsZero() || Plain("x").String() != "x" {
		t.Error("Plain")
	}
}

// A step as a tool call: its positionals by the tool's names, its flags
// that are tool arguments, a result of several tasks as context_ids.
func TestTool(t *testing.T) {
	for _, tc := range []struct {
		step Step
		want Call
		ok   bool
	}{
		{New("result").Pos("c1").Bool("--wait").Flag("--timeout", "90s"), Call{Tool: "result", Args: map[string]any{"context_id": "c1", "wait_seconds": 90.0}}, true},
		{New("result").Pos("c1").Pos("c2").Bool("--any"), Call{Tool: "result", Args: map[string]any{"context_ids": []string{"c1", "c2"}, "any": true}}, true},
		{New("send").Pos("a").Flag("--context", "c").Bool("--json").ReadsStdin(), Call{Tool: "send", Args: map[string]any{"agent": "a", "context_id": "c"}, Stdin: true}, true},
		{New("fetch").Flag("--task", "t").Pos("peer"), Call{Tool: "fetch", Args: map[string]any{"task_id": "t", "agent": "peer"}}, true},
		{New("show").Pos("conv").Flag("--round", "2"), Call{Tool: "show", Args: map[string]any{"conversation": "conv", "round": 2}}, true},
		{New("prune"), Call{}, false},
	} {
		got, ok := tc.step.Tool()
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Tool(%s) = %#v, %v; want %#v", tc.step, got, ok, tc.want)
		}
	}
}
