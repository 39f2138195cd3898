package mcpinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// FuzzPlan edits arbitrary files as mcp install does, for every target,
// with an entry whose command is fuzzed too. For every input it checks:
//
//   - Plan never panics, and it refuses only with an error of ours
//     (ErrCannotEdit), on one line, never for a byte order mark (the
//     file without it is refused too; two marks are refused);
//   - the file it writes is JSON with comments that hujson.Standardize
//     makes standard JSON, and standard JSON when the input was (Claude
//     Desktop and Cursor read it with JSON.parse);
//   - our entry is under the target's key, with exactly the command, args
//     and (VS Code) type we wrote, and in env exactly our variables;
//   - every other member of the input is kept: the standardized input and
//     output, read with encoding/json, are the same once the members of
//     ours (the entry's command, args, type, and our env variables) are
//     taken out of both, and the objects left empty;
//   - a UTF-8 byte order mark that starts the input starts the output,
//     once, and the rest is checked without it; none is added;
//   - it reports a file created only when there was none (nil);
//   - it is idempotent: a second Plan of its output changes nothing.
func FuzzPlan(f *testing.F) {
	seeds := []string{
		"", "  \n", "{}", "{}\n", "[]", "null", `{"mcpServers": {}}`, `{"servers": {}}`, "{\"mcpServers\": {}}\n",
		`{"mcpServers": {}, "theme": "x"}`, `{"theme": "x", "servers": {}}`, "{\n  \"mcpServers\": {\n  }\n}\n",
		"{\n\t\"servers\": {},\n}\n", `{"mcpServers": {"a2a-courier": 5}}`, `{"mcpServers": {"a2a-courier": {"env": 5}}}`,
		`{"mcpServers": {"a2a-courier": {"command": "x", "env": {}}}}`, `{"mcpServers": {"x": {"command": "y"}}, }`,
		`{"mcpServers": {"a2a-courier": {"command": 1e999}}}`, "{\"mcpServers\": {} // c\n}", "{/* c */}",
		`{"mcpServers": {}, "mcpServers": {}}`, `{"mcpServers": {"a2a-courier": {}, "a2a-courier": {}}}`,
		`{"mcpServers": {"a2a-courier": {"command": "a", "command": "b"}}}`, `{"\u006dcpServers": {}}`,
		"[[[[[[[[[[]]]]]]]]]]", `{"a": [{"b": {}}]}`, `{"mcpServers":{"a2a-courier":{"type":"sse","url":"http://x"}}}`,
	}
	for _, e := range existing {
		seeds = append(seeds, e)
	}
	for _, s := range seeds[:12] {
		seeds = append(seeds, "\ufeff"+s) // a byte order mark (Notepad's)
	}
	seeds = append(seeds, "\ufeff\ufeff{}", "{}\ufeff", "\ufeff"+existing[VSCode])
	for _, s := range seeds {
		for target := range uint8(8) {
			f.Add([]byte(s), target, "/usr/local/bin/a2a-courier")
		}
	}
	f.Fuzz(func(t *testing.T, file []byte, pick uint8, command string) {
		if command == "" || !utf8.ValidString(command) {
			return
		}
		target := Targets[int(pick)%len(Targets)]
		e := entry
		if pick&4 != 0 {
			e.Env = map[string]string{} // the default directories: none of ours in env
		}
		e.Command = command
		res, err := Plan(target, file, e)
		if err != nil {
			if !errors.Is(err, ErrCannotEdit) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("an error not of ours, or not one line: %q", err)
			}
			if rest, ok := bytes.CutPrefix(file, []byte("\ufeff")); ok && !bytes.HasPrefix(rest, []byte("\ufeff")) {
				if _, err := Plan(target, rest, e); err == nil {
					t.Fatalf("refused for its byte order mark alone: %q", file)
				}
			}
			return
		}
		checkPlan(t, target, file, e, res)
	})
}

// checkPlan checks what Plan made of file (see FuzzPlan).
func checkPlan(t *testing.T, target Target, file []byte, e Entry, res Result) {
	t.Helper()
	if res.Created != (file == nil) {
		t.Fatalf("created %v of a file %q", res.Created, file)
	}
	bom := []byte("\ufeff")
	if bytes.HasPrefix(res.Content, bom) != bytes.HasPrefix(file, bom) {
		t.Fatalf("the byte order mark was not kept as it was:\n%q\n---\n%q", file, res.Content)
	}
	whole := res.Content
	out := bytes.TrimPrefix(res.Content, bom)
	file = bytes.TrimPrefix(file, bom)
	std, err := hujson.Standardize(bytes.Clone(out))
	if err != nil || !json.Valid(std) {
		t.Fatalf("the output is not JSON once standardized (%v):\n%s", err, out)
	}
	if json.Valid(file) && !json.Valid(out) {
		t.Fatalf("a standard JSON input became non-standard JSON:\n%s", out)
	}
	key := serversKey(target)
	doc := decode(t, std)
	got, _ := doc[key].(map[string]any)[e.Name].(map[string]any)
	want := e.value(target)
	if got == nil || got["command"] != want.Command || !reflect.DeepEqual(got["args"], strAny(want.Args)) {
		t.Fatalf("the entry is not ours: %v\n%s", got, out)
	}
	if typ, has := got["type"]; target == VSCode && typ != "stdio" || has && typ != "stdio" {
		t.Fatalf("the entry's type: %v", got)
	}
	env, _ := got["env"].(map[string]any)
	for _, k := range OwnedEnv {
		if v, ok := e.Env[k]; ok && env[k] != v || !ok && env[k] != nil {
			t.Fatalf("env %s: %v, want %q", k, env[k], v)
		}
	}
	before := map[string]any{}
	if len(bytes.TrimSpace(file)) > 0 {
		in, err := hujson.Standardize(bytes.Clone(file))
		if err != nil {
			t.Fatalf("Plan took what hujson refuses: %v", err)
		}
		before = decode(t, in)
	}
	withoutOurs(before, key, e.Name)
	withoutOurs(doc, key, e.Name)
	if !reflect.DeepEqual(before, doc) {
		t.Fatalf("the other members changed:\nbefore %v\nafter  %v\n%s", before, doc, out)
	}
	again, err := Plan(target, whole, e)
	if err != nil || again.Changed || !bytes.Equal(again.Content, whole) {
		t.Fatalf("a second install changed the file (%v, %+v):\n%s\n---\n%s", err, again.Changed, whole, again.Content)
	}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func strAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

// withoutOurs takes out of a configuration the members of ours: in the
// entry named name of its servers, command, args, type and our env
// variables; then the env, entry and servers left empty (an entry that is
// not an object is ours to replace: it goes too).
func withoutOurs(doc map[string]any, key, name string) {
	servers, ok := doc[key].(map[string]any)
	if !ok {
		return
	}
	if ent, ok := servers[name].(map[string]any); ok {
		delete(ent, "command")
		delete(ent, "args")
		delete(ent, "type")
		if env, ok := ent["env"].(map[string]any); ok {
			for _, k := range OwnedEnv {
				delete(env, k)
			}
			if len(env) == 0 {
				delete(ent, "env")
			}
		} else {
			delete(ent, "env")
		}
		if len(ent) == 0 {
			delete(servers, name)
		}
	} else {
		delete(servers, name)
	}
	if len(servers) == 0 {
		delete(doc, key)
	}
}
