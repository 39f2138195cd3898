package mcpinstall

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var entry = Entry{Name: "a2a-courier", Command: "/usr/local/bin/a2a-courier", Args: []string{"mcp"},
	Env: map[string]string{"A2A_COURIER_CONFIG_DIR": "/home/ada/.config/a2a-courier", "A2A_COURIER_STATE_DIR": "/home/ada/.local/state/a2a-courier"}}

// The files people have: what each assistant writes or documents, with
// other servers and settings, comments where the format takes them.
var existing = map[Target]string{
	ClaudeDesktop: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ada/Desktop"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`,
	Cursor: `{
    "mcpServers": {
        "github": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"]}
    }
}
`,
	VSCode: `{
	// Servers of this profile.
	"servers": {
		"memory": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-memory"], // keep this comment
		},
	},
	"inputs": [],
}
`,
	Gemini: `{
  "theme": "GitHub",
  "selectedAuthType": "oauth-personal"
}
`,
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, got, 0o644)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/mcpinstall -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got:\n%s\n--- want:\n%s", name, got, want)
	}
}

// TestPlanGolden: for every target, a new file, an existing one (the rest
// kept byte for byte), an older entry replaced, and a second run that
// changes nothing.
func TestPlanGolden(t *testing.T) {
	for _, target := range Targets {
		t.Run(string(target), func(t *testing.T) {
			res, err := Plan(target, nil, entry)
			if err != nil || !res.Changed {
				t.Fatalf("new file: %v %+v", err, res)
			}
			golden(t, string(target)+"-new", res.Content)

			res, err = Plan(target, []byte(existing[target]), entry)
			if err != nil || !res.Changed || res.Replaced {
				t.Fatalf("existing file: %v %+v", err, res)
			}
			golden(t, string(target)+"-existing", res.Content)
			for _, keep := range strings.Split(strings.TrimSpace(existing[target]), "\n") {
				if keep = strings.TrimSpace(keep); keep != "}" && keep != "}," && !strings.Contains(string(res.Content), keep) {
					t.Errorf("lost the line %q", keep)
				}
			}
			again, err := Plan(target, res.Content, entry)
			if err != nil || again.Changed || !bytes.Equal(again.Content, res.Content) {
				t.Errorf("a second run changed the file: %v %+v", err, again.Changed)
			}

			older := entry
			older.Command, older.Args = "/opt/old/a2a-courier", []string{"mcp", "--old"}
			prev, _ := Plan(target, []byte(existing[target]), older)
			res, err = Plan(target, prev.Content, entry)
			if err != nil || !res.Changed || !res.Replaced {
				t.Fatalf("older entry: %v %+v", err, res)
			}
			golden(t, string(target)+"-replaced", res.Content)
		})
	}
}

func TestPlanRefusesWhatItCannotEdit(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"not JSON", "servers = 1", "not JSON"},
		{"an array", "[]", "top level is not a JSON object"},
		{"servers not an object", `{"mcpServers": []}`, `"mcpServers" in the file is not an object`},
	} {
		if _, err := Plan(Cursor, []byte(tc.file), entry); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := Plan(Cursor, nil, Entry{Name: "x"}); err == nil {
		t.Error("an entry without a command")
	}
}

func TestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		target Target
		goos   string
		env    map[string]string
		want   string
	}{
		{ClaudeDesktop, "darwin", nil, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "linux", nil, "/Users/ada/.config/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "linux", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/xdg/Claude/claude_desktop_config.json"},
		{VSCode, "darwin", nil, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
		{VSCode, "linux", map[string]string{"XDG_CONFIG_HOME": "relative"}, "/Users/ada/.config/Code/User/mcp.json"},
		{Cursor, "linux", nil, "/Users/ada/.cursor/mcp.json"},
		{Gemini, "darwin", nil, "/Users/ada/.gemini/settings.json"},
	} {
		got, err := Path(tc.target, Where{GOOS: tc.goos, Home: "/Users/ada", Getenv: env(tc.env)})
		if err != nil || got != tc.want {
			t.Errorf("%s on %s: %q %v", tc.target, tc.goos, got, err)
		}
	}
	if _, err := Path(ClaudeDesktop, Where{GOOS: "windows", Home: "C:/Users/ada"}); err == nil {
		t.Error("windows")
	}
	if _, err := Path(Cursor, Where{GOOS: "linux"}); err == nil {
		t.Error("no home")
	}
}

// TestInstallWrites: the file is written atomically, keeps its mode (0600
// for a new one, in a new 0700 directory), and --dry-run writes nothing.
func TestInstallWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "mcp.json")
	res, err := Install(path, Cursor, entry, true)
	if err != nil || !res.Changed {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("--dry-run wrote the file")
	}
	if _, err := Install(path, Cursor, entry, false); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v", fi.Mode(), di.Mode())
	}
	os.Chmod(path, 0o644)
	other := entry
	other.Command = "/elsewhere/a2a-courier"
	if _, err := Install(path, Cursor, other, false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("the mode was not kept: %v", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if _, err := Install(dir, Cursor, entry, false); err == nil {
		t.Error("a directory as the file")
	}
}
