package configfile

import (
	"strings"
	"testing"
)

// handWritten is a config file as a person writes it: comments at the top,
// inline and inside peers, blank lines, quoting, a key this version does
// not know.
const handWritten = `# a2a-courier config
# top comment

default_profile: prod   # the one I use

profiles:
  # production
  prod:
    kibana_url: https://prod.example.com  # prod
    space: security
    poll_interval: 30s

  lab:
    kibana_url: "http://localhost:5601"
    max_wait: 10m
    # trailing comment in lab

# peers by hand
peers:
  research:
    url: https://research.example.com   # the research agent
    token_env: RESEARCH_TOKEN
    # no_stream: true
custom_key: [a, b]   # not ours
`

type editCase struct {
	name    string
	doc     string
	unset   bool
	path    string // dotted
	val     string
	boolean bool
	want    string // "" for the same as doc
	changed bool
	// rewritten: the file cannot be edited in place and is encoded anew.
	rewritten bool
}

func runEdit(t *testing.T, c editCase) *Edit {
	t.Helper()
	d, err := Parse([]byte(c.doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	path := strings.Split(c.path, ".")
	var e *Edit
	if c.unset {
		e, err = d.Unset(path, true)
	} else {
		val := Str(c.val)
		if c.boolean {
			val = Bool(c.val)
		}
		e, err = d.Set(path, val)
	}
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	return e
}

// replaceLine returns doc with the line old replaced by new ("" removes it).
func replaceLine(t *testing.T, doc, old, new string) string {
	t.Helper()
	if strings.Count(doc, old+"\n") != 1 {
		t.Fatalf("line %q is not once in the document", old)
	}
	if new == "" {
		return strings.Replace(doc, old+"\n", "", 1)
	}
	return strings.Replace(doc, old+"\n", new+"\n", 1)
}

func TestConfigEditInPlace(t *testing.T) {
	t.Parallel()
	hw := handWritten
	cases := []editCase{
		{name: "replace a value, keep its inline comment", doc: hw, path: "profiles.prod.kibana_url", val: "https://new.example.com",
			want: replaceLine(t, hw, "    kibana_url: https://prod.example.com  # prod", "    kibana_url: https://new.example.com  # prod"), changed: true},
		{name: "replace a quoted value, keep the quotes", doc: hw, path: "profiles.lab.kibana_url", val: "http://lab:5601",
			want: replaceLine(t, hw, `    kibana_url: "http://localhost:5601"`, `    kibana_url: "http://lab:5601"`), changed: true},
		{name: "replace a duration", doc: hw, path: "profiles.prod.poll_interval", val: "1m0s",
			want: replaceLine(t, hw, "    poll_interval: 30s", "    poll_interval: 1m0s"), changed: true},
		{name: "the same value changes nothing", doc: hw, path: "profiles.prod.poll_interval", val: "30s"},
		{name: "the same value, quoted differently, changes nothing", doc: hw, path: "profiles.lab.kibana_url", val: "http://localhost:5601"},
		{name: "a new key goes after the profile's last key", doc: hw, path: "profiles.prod.max_wait", val: "1h0m0s",
			want: replaceLine(t, hw, "    poll_interval: 30s", "    poll_interval: 30s\n    max_wait: 1h0m0s"), changed: true},
		{name: "a new key goes after the comments that close the profile", doc: hw, path: "profiles.lab.insecure", val: "true", boolean: true,
			want: replaceLine(t, hw, "    # trailing comment in lab", "    # trailing comment in lab\n    insecure: true"), changed: true},
		{name: "a new profile goes after the last one", doc: hw, path: "profiles.staging.space", val: "ops",
			want: replaceLine(t, hw, "    # trailing comment in lab", "    # trailing comment in lab\n  staging:\n    space: ops"), changed: true},
		{name: "a value that reads as a number is quoted", doc: hw, path: "profiles.prod.space", val: "123",
			want: replaceLine(t, hw, "    space: security", `    space: "123"`), changed: true},
		{name: "default profile, inline comment kept", doc: hw, path: "default_profile", val: "lab",
			want: replaceLine(t, hw, "default_profile: prod   # the one I use", "default_profile: lab   # the one I use"), changed: true},
		{name: "unset removes the key's line only", doc: hw, unset: true, path: "profiles.prod.space",
			want: replaceLine(t, hw, "    space: security", ""), changed: true},
		{name: "unset default profile", doc: hw, unset: true, path: "default_profile",
			want: replaceLine(t, hw, "default_profile: prod   # the one I use", ""), changed: true},
		{name: "unset of a key that is not set", doc: hw, unset: true, path: "profiles.prod.max_wait"},
		{name: "unset in a profile that does not exist", doc: hw, unset: true, path: "profiles.nosuch.space"},
		{name: "unset of the last key removes the profile, keeps its comments",
			doc: "profiles:\n  # lab\n  lab:   # mine\n    # the only key\n    space: x\n  prod:\n    space: y\n", unset: true, path: "profiles.lab.space",
			want: "profiles:\n  # lab\n    # the only key\n  prod:\n    space: y\n", changed: true},
		{name: "keys are matched without regard to case, as they are read", doc: "Profiles:\n  Prod:\n    Max_Wait: 1h # long\n", path: "profiles.prod.max_wait", val: "2h0m0s",
			want: "Profiles:\n  Prod:\n    Max_Wait: 2h0m0s # long\n", changed: true},
		{name: "empty file", doc: "", path: "profiles.default.kibana_url", val: "https://x.example.com",
			want: "profiles:\n  default:\n    kibana_url: https://x.example.com\n", changed: true},
		{name: "comments only", doc: "# my config\n\n# nothing yet\n", path: "profiles.default.space", val: "ops",
			want: "# my config\n\n# nothing yet\nprofiles:\n  default:\n    space: ops\n", changed: true},
		{name: "no end of line at the end", doc: "profiles:\n  p:\n    space: a", path: "profiles.p.max_wait", val: "5m0s",
			want: "profiles:\n  p:\n    space: a\n    max_wait: 5m0s\n", changed: true},
		{name: "CRLF", doc: "# c\r\nprofiles:\r\n  p:\r\n    space: a\r\n", path: "profiles.p.max_wait", val: "5m0s",
			want: "# c\r\nprofiles:\r\n  p:\r\n    space: a\r\n    max_wait: 5m0s\r\n", changed: true},
		{name: "CRLF replace", doc: "profiles:\r\n  p:\r\n    space: a # c\r\n", path: "profiles.p.space", val: "b",
			want: "profiles:\r\n  p:\r\n    space: b # c\r\n", changed: true},
		{name: "an empty profile is filled in", doc: "profiles:\n  p:   # to do\n  q:\n    space: a\n", path: "profiles.p.space", val: "b",
			want: "profiles:\n  p:   # to do\n    space: b\n  q:\n    space: a\n", changed: true},
		{name: "an empty value is filled in", doc: "profiles:\n  p:\n    space:   # which?\n", path: "profiles.p.space", val: "b",
			want: "profiles:\n  p:\n    space: b   # which?\n", changed: true},
		{name: "the file's indentation is kept", doc: "profiles:\n    p:\n        space: a\n", path: "profiles.q.space", val: "b",
			want: "profiles:\n    p:\n        space: a\n    q:\n        space: b\n", changed: true},
		{name: "profiles added after peers", doc: "peers:\n  x:\n    url: https://x # agent\n# end\n", path: "profiles.default.space", val: "ops",
			want: "peers:\n  x:\n    url: https://x # agent\n# end\nprofiles:\n  default:\n    space: ops\n", changed: true},
		{name: "a tagged value", doc: "profiles:\n  p:\n    space: !!str 42\n", path: "profiles.p.space", val: "b",
			want: "profiles:\n  p:\n    space: b\n", changed: true},
		{name: "an alias as a value is replaced, not its anchor", doc: "x: &s ops\nprofiles:\n  p:\n    space: *s\n", path: "profiles.p.space", val: "b",
			want: "x: &s ops\nprofiles:\n  p:\n    space: b\n", changed: true},
		{name: "a flow profile is encoded anew", doc: "# keep me\nprofiles:\n  p: {space: a}   # flow\n", path: "profiles.p.max_wait", val: "1m0s",
			want: "# keep me\nprofiles:\n  p: {space: a, max_wait: 1m0s} # flow\n", changed: true, rewritten: true},
		{name: "a block scalar is encoded anew", doc: "profiles:\n  p:\n    space: |\n      a\n", path: "profiles.p.space", val: "b",
			want: "profiles:\n  p:\n    space: b\n", changed: true, rewritten: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := runEdit(t, c)
			want := c.want
			if want == "" {
				want = c.doc
			}
			if string(e.Out) != want || e.Changed != c.changed || (e.Rewritten != "") != c.rewritten {
				t.Errorf("changed %v (want %v), rewritten %q (want %v)\n--- got:\n%s\n--- want:\n%s", e.Changed, c.changed, e.Rewritten, c.rewritten, e.Out, want)
			}
		})
	}
}

func TestConfigEditRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, path, want string }{
		{"profiles:\n  a: &a\n    space: x\n  b: *a\n", "profiles.b.space", "profiles.b is an alias (*a)"},
		{"profiles:\n  a:\n    space: &s x\n  b:\n    space: *s\n", "profiles.a.space", "profiles.a.space is anchored (&s)"},
		{"profiles:\n  a: 3\n", "profiles.a.space", "profiles.a: not a mapping"},
		{"profiles: [a]\n", "profiles.a.space", "profiles: not a mapping"},
	} {
		d, err := Parse([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Set(strings.Split(c.path, "."), Str("v")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("set %s in %q: %v, want %q", c.path, c.doc, err, c.want)
		}
	}
	for doc, want := range map[string]string{
		"profiles: [":        "yaml: ",
		"a: 1\na: 2\n":       "already defined",
		"- a\n- b\n":         "top level is not a mapping",
		"a: 1\n---\nb: 2\n":  "more than one YAML document",
		"profiles:\n\t- p\n": "yaml: ",
		"a: b: c\n":          "yaml: ",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
