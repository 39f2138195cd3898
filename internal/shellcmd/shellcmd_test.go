package shellcmd

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"lab": "lab", "": "''", "my lab": "'my lab'", "it's": `'it'\''s'`, "https://x.example.com:9243/p": "https://x.example.com:9243/p",
		"$(rm -rf ~)": "'$(rm -rf ~)'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The flags go after each command that reaches a server, quoted, but for
// one the command names itself; other commands, the "a2a-courier:" label
// and texts without a command stay as they are.
func TestWithFlags(t *testing.T) {
	flags := []Flag{{"--profile", "my lab"}, {"--kibana-url", "https://a.example.com"}}
	for in, want := range map[string]string{
		"a2a-courier fetch c1 --json":                                           "a2a-courier fetch --profile 'my lab' --kibana-url https://a.example.com c1 --json",
		"run `a2a-courier send-async x -` then `a2a-courier result c`":          "run `a2a-courier send-async --profile 'my lab' --kibana-url https://a.example.com x -` then `a2a-courier result --profile 'my lab' --kibana-url https://a.example.com c`",
		"`a2a-courier send x --context c --kibana-url https://b.example.com -`": "`a2a-courier send x --context c --kibana-url https://b.example.com -`",
		"a2a-courier send's reply":                                              "a2a-courier send's reply",
		"a2a-courier fetch c1; then a2a-courier show c1 --profile other":        "a2a-courier fetch --profile 'my lab' --kibana-url https://a.example.com c1; then a2a-courier show --kibana-url https://a.example.com c1 --profile other",
		"a2a-courier: no agent; see `a2a-courier prune`":                        "a2a-courier: no agent; see `a2a-courier prune`",
		"a2a-courier sender":                                                    "a2a-courier sender",
		"nothing to run":                                                        "nothing to run",
		"a2a-courier show c\na2a-courier tasks":                                 "a2a-courier show --profile 'my lab' --kibana-url https://a.example.com c\na2a-courier tasks --profile 'my lab' --kibana-url https://a.example.com",
	} {
		if got := WithFlags(in, flags); got != want {
			t.Errorf("WithFlags(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	if got := WithFlags("a2a-courier fetch c", nil); got != "a2a-courier fetch c" {
		t.Errorf("no flags: %q", got)
	}
}
