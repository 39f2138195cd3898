package mcpinstall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// A file that is there, empty or white space only, gets the entry added:
// "added", not "created" (which says there was no file).
func TestInstallIntoAnEmptyFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.json": "", "blank.json": "  \n\t\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Install(path, Cursor, entry, false)
		if b, _ := os.ReadFile(path); err != nil || res.Action() != "added" || !strings.Contains(string(b), `"command": "/usr/local/bin/a2a-courier"`) {
			t.Errorf("%s: %v %s\n%s", name, err, res.Action(), b)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v", name, fi.Mode())
		}
	}
	res, err := Install(filepath.Join(dir, "new", "mcp.json"), Cursor, entry, false)
	if err != nil || res.Action() != "created" {
		t.Errorf("no file: %v %s", err, res.Action())
	}
}

// A replaced entry's values are written in the layout of what they
// replace: on one line in an entry written on one line (compact or
// spaced, as it was), on one line where the old value was, on lines of
// their own where it was so. Never an array broken over lines in the
// middle of a line.
func TestPlanReplacesInTheEntrysLayout(t *testing.T) {
	const env = `"env":{"A2A_COURIER_CONFIG_DIR":"/home/ada/.config/a2a-courier","A2A_COURIER_STATE_DIR":"/home/ada/.local/state/a2a-courier"}`
	const spacedEnv = `"env": {"A2A_COURIER_CONFIG_DIR": "/home/ada/.config/a2a-courier", "A2A_COURIER_STATE_DIR": "/home/ada/.local/state/a2a-courier"}`
	for _, tc := range []struct{ name, file, want string }{
		{"compact", `{"mcpServers":{"a2a-courier":{"command":"/old","args":["x","y"]}}}`,
			`{"mcpServers":{"a2a-courier":{"command":"/usr/local/bin/a2a-courier","args":["mcp"],` + env + `}}}` + "\n"},
		{"spaced, one line", "{\n  \"mcpServers\": {\n    \"a2a-courier\": {\"command\": \"/old\", \"args\": [\"x\"]}\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"a2a-courier\": {\"command\": \"/usr/local/bin/a2a-courier\", \"args\": [\"mcp\"], " + spacedEnv + "}\n  }\n}\n"},
		{"args on one line", "{\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/old\",\n      \"args\": [\"x\", \"y\"],\n      \"env\": {}\n    }\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/usr/local/bin/a2a-courier\",\n      \"args\": [\"mcp\"],\n      \"env\": {\n" +
				"        \"A2A_COURIER_CONFIG_DIR\": \"/home/ada/.config/a2a-courier\",\n        \"A2A_COURIER_STATE_DIR\": \"/home/ada/.local/state/a2a-courier\"\n      }\n    }\n  }\n}\n"},
		{"args on lines", "{\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/old\",\n      \"args\": [\n        \"x\"\n      ]\n    }\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/usr/local/bin/a2a-courier\",\n      \"args\": [\n        \"mcp\"\n      ],\n      \"env\": {\n" +
				"        \"A2A_COURIER_CONFIG_DIR\": \"/home/ada/.config/a2a-courier\",\n        \"A2A_COURIER_STATE_DIR\": \"/home/ada/.local/state/a2a-courier\"\n      }\n    }\n  }\n}\n"},
		{"new entry, compact", `{"mcpServers":{"x":{"command":"y"}}}`,
			`{"mcpServers":{"x":{"command":"y"},"a2a-courier":{"command":"/usr/local/bin/a2a-courier","args":["mcp"],` + env + `}}}` + "\n"},
	} {
		res, err := Plan(Cursor, []byte(tc.file), entry)
		if err != nil || string(res.Content) != tc.want {
			t.Errorf("%s: %v\n got %s\nwant %s", tc.name, err, res.Content, tc.want)
		}
	}
}

// A file that starts with a UTF-8 byte order mark (Notepad writes one) is
// edited as any other, and keeps its mark; its entry is found again
// (unchanged on a second run, its profile read by ExistingArgs).
func TestPlanKeepsAByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	for _, file := range []string{bom + existing[Cursor], bom, bom + " \n", bom + `{"mcpServers": {}}`} {
		res, err := Plan(Cursor, []byte(file), entry)
		if err != nil || !strings.HasPrefix(string(res.Content), bom) || strings.Count(string(res.Content), bom) != 1 || !res.Changed {
			t.Errorf("%q: %v\n%q", file, err, res.Content)
			continue
		}
		again, err := Plan(Cursor, res.Content, entry)
		if err != nil || again.Changed {
			t.Errorf("%q again: %v %v", file, err, again.Changed)
		}
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	withProfile := entry
	withProfile.Args = []string{"mcp", "--profile", "lab"}
	res, _ := Plan(Cursor, []byte(bom+"{}"), withProfile)
	os.WriteFile(path, res.Content, 0o600)
	if got := ProfileOf(ExistingArgs(path, Cursor, "a2a-courier")); got != "lab" {
		t.Errorf("the existing entry's profile: %q", got)
	}
}

// The warning of settings this shell's environment alone gives names the
// config set line of each of them only.
func TestEnvOnlyWarningNamesWhatIsSet(t *testing.T) {
	for _, tc := range []struct {
		env       []string
		want, not string
	}{
		{[]string{"KIBANA_URL", "KIBANA_API_KEY"}, "(a2a-courier config set kibana-url <url>; " + shellcmd.FromFile("a2a-courier config set api-key", "key-file") + ")", "config set space"},
		{[]string{"KIBANA_SPACE_ID"}, "the setting KIBANA_SPACE_ID comes from this shell's environment only, which cursor's process will not have: keep it in the config file (a2a-courier config set space <id>)", "kibana-url"},
		{[]string{"KIBANA_API_KEY"}, "keep it in the config file (" + shellcmd.FromFile("a2a-courier config set api-key", "key-file") + "), then", "space"},
	} {
		w := Setup{Executable: "/usr/local/bin/a2a-courier", EnvOnly: tc.env}.Warnings(Cursor)
		if len(w) != 1 || !strings.Contains(w[0], tc.want) || strings.Contains(w[0], tc.not) {
			t.Errorf("%v: %q", tc.env, w)
		}
	}
}
