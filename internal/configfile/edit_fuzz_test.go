package configfile

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzConfigEdit edits arbitrary YAML as config set and unset do. It
// checks:
//
//   - it never panics, and a document that does not parse is refused;
//   - the result is one config document, in which the key set reads back
//     as the value, and the key unset is gone;
//   - an edit that changes nothing returns the text as it was;
//   - the top-level keys other than the one edited (peers, say) decode as
//     before;
//   - an edit made in place keeps every comment line of the file, in order.
func FuzzConfigEdit(f *testing.F) {
	for _, doc := range []string{
		handWritten, commented + commentedPeers, twoProfiles, "", "# only\n",
		"profiles:\n  p:   # to do\n  q:\n    space: a\n",
		"profiles:\n  p: {space: a}   # flow\n",
		"Profiles:\n  Prod:\n    Max_Wait: 1h # long\n",
		"profiles:\r\n  prod:\r\n    space: a # c\r\n",
		"profiles:\n    prod:\n        space: a\n",
		"x: &s ops\nprofiles:\n  prod:\n    space: *s\n",
		"profiles:\n  prod:\n    space: |\n      a\n",
		"profiles:\n  a: &a\n    space: x\n  b: *a\n",
		"profiles:\n  prod:\n    space: \"a\\\"b\" # q\n    max_wait: 'it''s'\n",
		"default_profile: prod\nprofiles:\n  prod:\n    space:   # which?\n",
		"profiles:\n  prod:\n    <<: {space: x}\n    max_wait: 1h\n",
	} {
		for op := range uint8(8) {
			f.Add([]byte(doc), op)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, op uint8) {
		d, err := Parse(src)
		if err != nil {
			return
		}
		profile := []string{"prod", "lab", "default", "Prod"}[op>>4%4]
		var path []string
		var val *yaml.Node
		unset := false
		switch op % 8 {
		case 0:
			path, val = []string{"profiles", profile, "space"}, Str("ops")
		case 1:
			path, val = []string{"profiles", profile, "max_wait"}, Str("1h0m0s")
		case 2:
			path, val = []string{"default_profile"}, Str("lab")
		case 3:
			path, val = []string{"profiles", profile, "insecure"}, Bool("true")
		case 4:
			path, val = []string{"profiles", profile, "api_key"}, Str("dGVzdDprZXk=")
		case 5:
			path, unset = []string{"profiles", profile, "space"}, true
		case 6:
			path, unset = []string{"default_profile"}, true
		case 7:
			path, unset = []string{"profiles", profile, "max_wait"}, true
		}
		var e *Edit
		if unset {
			e, err = d.Unset(path, true)
		} else {
			e, err = d.Set(path, val)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "alias") && !strings.Contains(err.Error(), "anchored") && !errors.Is(err, errNotMapping) && !errors.Is(err, errNoRoundTrip) {
				t.Fatalf("%v", err)
			}
			return
		}
		if !e.Changed && string(e.Out) != string(src) {
			t.Fatalf("nothing changed, yet the text did:\n%s", e.Out)
		}
		d2, err := Parse(e.Out)
		if err != nil {
			t.Fatalf("the result does not parse: %v\n%s", err, e.Out)
		}
		got := d2.Lookup(path...)
		if unset {
			if m := d2.Lookup(path[:len(path)-1]...); m != nil && m.Kind == yaml.MappingNode && len(foldKeys(m, path[len(path)-1])) > 0 {
				t.Fatalf("%v is still there:\n%s", path, e.Out)
			}
		} else if got == nil || !sameData(got, val) {
			t.Fatalf("%v does not read back as %q:\n%s", path, val.Value, e.Out)
		}
		if a, b := otherKeys(d, path[0]), otherKeys(d2, path[0]); !reflect.DeepEqual(a, b) {
			t.Fatalf("other keys changed: %v -> %v", a, b)
		}
		if e.Rewritten == "" {
			checkCommentsKept(t, src, e.Out)
		}
	})
}

// otherKeys decodes the top-level keys of d other than edited (and merge
// keys).
func otherKeys(d *Doc, edited string) map[string]any {
	out := map[string]any{}
	if top := d.top(); top != nil {
		for i := 0; i+1 < len(top.Content); i += 2 {
			if k := top.Content[i].Value; !strings.EqualFold(k, edited) && k != "<<" {
				var v any
				top.Content[i+1].Decode(&v)
				out[k] = v
			}
		}
	}
	return out
}

// checkCommentsKept checks that every comment line of src is in out, in
// order.
func checkCommentsKept(t *testing.T, src, out []byte) {
	t.Helper()
	var comments []string
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			comments = append(comments, strings.TrimRight(l, "\r"))
		}
	}
	rest := strings.Split(string(out), "\n")
	for _, c := range comments {
		for len(rest) > 0 && strings.TrimRight(rest[0], "\r") != c {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			t.Fatalf("comment line %q is lost:\n%s", c, out)
		}
		rest = rest[1:]
	}
}
