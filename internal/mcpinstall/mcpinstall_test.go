package mcpinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
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
	// hujson quotes the literal it could not read as it is: a newline or
	// a terminal's escape of the file stays out of the one-line error.
	_, err := Plan(Cursor, []byte("\"\x1b]52;c;aGk=\x07\n"+strings.Repeat("x", 1000)+"\""), entry)
	if !errors.Is(err, ErrCannotEdit) || strings.ContainsAny(err.Error(), "\n\x1b\x07") || len([]rune(err.Error())) > 250 ||
		!strings.Contains(err.Error(), `\x1b]52;c;aGk=\a\n`) {
		t.Errorf("a literal with control characters: %q", err)
	}
}

// Each target's file on each system (docs/windows.md gives the sources).
func TestPath(t *testing.T) {
	win := map[string]string{"USERPROFILE": `C:\Users\Ada L`, "APPDATA": `C:\Users\Ada L\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\Ada L\AppData\Local`, "HOME": "/c/Users/ada", "XDG_CONFIG_HOME": "/xdg"}
	for _, tc := range []struct {
		target Target
		goos   string
		env    map[string]string
		want   string
	}{
		{ClaudeDesktop, "darwin", nil, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "linux", nil, "/Users/ada/.config/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "linux", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/xdg/Claude/claude_desktop_config.json"},
		{ClaudeDesktop, "windows", win, `C:\Users\Ada L\AppData\Roaming\Claude\claude_desktop_config.json`},
		{VSCode, "darwin", nil, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
		{VSCode, "darwin", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
		{VSCode, "linux", map[string]string{"XDG_CONFIG_HOME": "relative"}, "/Users/ada/.config/Code/User/mcp.json"},
		{VSCode, "windows", win, `C:\Users\Ada L\AppData\Roaming\Code\User\mcp.json`},
		{Cursor, "linux", nil, "/Users/ada/.cursor/mcp.json"},
		{Cursor, "windows", win, `C:\Users\Ada L\.cursor\mcp.json`},
		{Gemini, "darwin", nil, "/Users/ada/.gemini/settings.json"},
		{Gemini, "linux", map[string]string{"GEMINI_CLI_HOME": "/g"}, "/g/.gemini/settings.json"},
		{Gemini, "windows", win, `C:\Users\Ada L\.gemini\settings.json`},
	} {
		vars := map[string]string{"HOME": "/Users/ada"}
		if tc.goos == "windows" {
			vars = map[string]string{}
		}
		for k, v := range tc.env {
			vars[k] = v
		}
		got, err := Path(tc.target, userdirs.Env{GOOS: tc.goos, Getenv: func(k string) string { return vars[k] }})
		if err != nil || got != tc.want {
			t.Errorf("%s on %s: %q %v", tc.target, tc.goos, got, err)
		}
	}
	for goos, want := range map[string]string{"linux": "HOME is not set", "windows": "%USERPROFILE% is not set"} {
		if _, err := Path(Cursor, userdirs.Env{GOOS: goos}); err == nil || err.Error() != "cannot find cursor's configuration file: "+want {
			t.Errorf("no home on %s: %v", goos, err)
		}
	}
	if _, err := Path(VSCode, userdirs.Env{GOOS: "windows"}); err == nil || !strings.Contains(err.Error(), "%APPDATA% is not set") {
		t.Errorf("no APPDATA: %v", err)
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

// TestPlanKeepsTheUsersKeys: an update sets the members of ours (command,
// args, type, our env variables) and keeps every other: Gemini's timeout
// and trust, a cwd, a variable added to env by hand, comments inside the
// entry. An env that held ours only goes when ours are the defaults,
// leaving valid JSON; a second run changes nothing.
func TestPlanKeepsTheUsersKeys(t *testing.T) {
	gemini := `{
  "mcpServers": {
    "a2a-courier": {
      "command": "/opt/old/a2a-courier",
      "args": ["mcp"],
      "timeout": 700000,
      "trust": true,
      "cwd": "/home/ada"
    }
  }
}
`
	res, err := Plan(Gemini, []byte(gemini), entry)
	if err != nil || !res.Changed || !res.Replaced {
		t.Fatalf("%v %+v", err, res)
	}
	golden(t, "gemini-user-keys", res.Content)
	for _, keep := range []string{`"timeout": 700000,`, `"trust": true,`, `"cwd": "/home/ada"`, `"command": "/usr/local/bin/a2a-courier"`} {
		if !strings.Contains(string(res.Content), keep) {
			t.Errorf("lost %s", keep)
		}
	}
	if again, err := Plan(Gemini, res.Content, entry); err != nil || again.Changed {
		t.Errorf("a second run changed the file: %v %+v", err, again.Changed)
	}

	vscode := `{
	"servers": {
		"a2a-courier": {
			// started by the assistant
			"type": "stdio",
			"command": "/opt/old/a2a-courier",
			"args": ["mcp"],
			"env": {"HTTPS_PROXY": "http://proxy:3128", "A2A_COURIER_STATE_DIR": "/old/state"},
		},
	},
}
`
	res, err = Plan(VSCode, []byte(vscode), entry)
	if err != nil || !res.Replaced {
		t.Fatalf("%v %+v", err, res)
	}
	golden(t, "vscode-user-keys", res.Content)
	for _, keep := range []string{"// started by the assistant", `"HTTPS_PROXY": "http://proxy:3128"`, `"A2A_COURIER_STATE_DIR": "/home/ada/.local/state/a2a-courier"`,
		`"A2A_COURIER_CONFIG_DIR": "/home/ada/.config/a2a-courier"`} {
		if !strings.Contains(string(res.Content), keep) {
			t.Errorf("vscode: lost %s", keep)
		}
	}

	// Ours only in env, now the defaults: env goes, and the JSON stays
	// JSON (no trailing comma left behind).
	claude := `{"mcpServers": {"a2a-courier": {"command": "/usr/local/bin/a2a-courier", "args": ["mcp"], "env": {"A2A_COURIER_STATE_DIR": "/x"}}}}`
	plain := entry
	plain.Env = map[string]string{}
	res, err = Plan(ClaudeDesktop, []byte(claude), plain)
	if err != nil || !res.Replaced || strings.Contains(string(res.Content), "env") || !json.Valid(res.Content) {
		t.Errorf("env of ours only: %v %s", err, res.Content)
	}
}

// TestInstallThroughALink: a configuration file that is a symbolic link
// (kept in a dotfiles repository) stays a link; the file it points to is
// updated, in place of the link's target directory.
func TestInstallThroughALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	if err := os.WriteFile(real, []byte(existing[Cursor]), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "home", ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(link, Cursor, entry, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link became a file: %v %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(real)
	if fi, _ := os.Stat(real); !strings.Contains(string(b), `"command": "/usr/local/bin/a2a-courier"`) || !strings.Contains(string(b), "github-mcp-server") ||
		fi.Mode().Perm() != 0o640 {
		t.Errorf("the link's target: %v\n%s", fi.Mode(), b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(link)); len(entries) != 1 {
		t.Errorf("beside the link: %v", entries)
	}

	dangling := filepath.Join(dir, "home", "dangling.json")
	os.Symlink(filepath.Join(dir, "nowhere", "mcp.json"), dangling)
	if _, err := Install(dangling, Cursor, entry, false); err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "a symbolic link to") {
		t.Errorf("a dangling link: %v", err)
	}
}

// TestInstallRefusesWhatIsNotAFile: a named pipe is refused before it is
// opened (reading it would block for ever), with a one-line error; so is
// a file too large to be a configuration.
func TestInstallRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "mcp.json")
	if err := fifotest.Make(fifo); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		_, err := Install(fifo, Cursor, entry, dry)
		if err == nil || err.Error() != "not a regular file (a named pipe): a2a-courier edits a JSON file only" {
			t.Errorf("a named pipe (dry run %v): %v", dry, err)
		}
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Truncate(big, maxFileSize+1)
	if _, err := Install(big, Cursor, entry, false); err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "larger than an MCP configuration can be") {
		t.Errorf("a large file: %v", err)
	}
}

// The profile an entry names: the one chosen here, else the existing
// entry's (said so), none with --profile default (said so when one is
// dropped).
func TestChooseProfile(t *testing.T) {
	for _, tc := range []struct {
		chosen   string
		drop     bool
		previous string
		want     string
		note     string
	}{
		{"prod", false, "", "prod", ""},
		{"prod", false, "sim", "prod", ""},
		{"", false, "sim", "sim", "kept --profile sim of the existing entry (--profile <name> chooses another, --profile default drops it)"},
		{"", true, "sim", "", "dropped --profile sim of the existing entry: its process takes the config file's default profile"},
		{"", true, "", "", ""},
		{"", false, "", "", ""},
	} {
		if got, note := ChooseProfile(tc.chosen, tc.drop, tc.previous); got != tc.want || note != tc.note {
			t.Errorf("%+v: %q %q", tc, got, note)
		}
	}
	for args, want := range map[string]string{"mcp --profile sim --space x": "sim", "mcp --profile=lab": "lab", "mcp": "", "mcp --profile": ""} {
		if got := ProfileOf(strings.Fields(args)); got != want {
			t.Errorf("%q: %q", args, got)
		}
	}
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte(`{
	// a comment
	"servers": {"a2a-courier": {"type": "stdio", "command": "/x", "args": ["mcp", "--profile", "sim"],},},
}`), 0o600)
	if got := ExistingArgs(path, VSCode, "a2a-courier"); strings.Join(got, " ") != "mcp --profile sim" {
		t.Errorf("existing args %q", got)
	}
	if got := ExistingArgs(path, Cursor, "a2a-courier"); got != nil {
		t.Errorf("another target's key: %q", got)
	}
	if TargetNames() != "claude-desktop, cursor, vscode or gemini" {
		t.Errorf("%q", TargetNames())
	}
}

// TestPlanEmptyServers: the most common starting file, an empty servers
// object (alone, beside other keys, on one line or several, with a
// comment), gets the entry written out in it, as a person would.
func TestPlanEmptyServers(t *testing.T) {
	for _, tc := range []struct {
		target     Target
		file, want string
	}{
		{Cursor, `{"mcpServers": {}}`, "{\"mcpServers\": {\n  \"a2a-courier\": {\n    \"command\": \"/x\",\n    \"args\": [\n      \"mcp\"\n    ]\n  }\n}}\n"},
		{VSCode, "{\"servers\": {}}\n", "{\"servers\": {\n  \"a2a-courier\": {\n    \"type\": \"stdio\",\n    \"command\": \"/x\",\n    \"args\": [\n      \"mcp\"\n    ]\n  }\n}}\n"},
		{ClaudeDesktop, "{\n  \"globalShortcut\": \"\",\n  \"mcpServers\": {}\n}\n",
			"{\n  \"globalShortcut\": \"\",\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/x\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"},
		{Gemini, "{\n  \"mcpServers\": { /* none yet */ },\n  \"theme\": \"GitHub\"\n}\n",
			"{\n  \"mcpServers\": { /* none yet */\n    \"a2a-courier\": {\n      \"command\": \"/x\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  },\n  \"theme\": \"GitHub\"\n}\n"},
		{Cursor, "{}", "{\n  \"mcpServers\": {\n    \"a2a-courier\": {\n      \"command\": \"/x\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"},
	} {
		e := Entry{Name: "a2a-courier", Command: "/x", Args: []string{"mcp"}}
		res, err := Plan(tc.target, []byte(tc.file), e)
		if err != nil || !res.Changed || string(res.Content) != tc.want {
			t.Errorf("%s %q: %v\n%s", tc.target, tc.file, err, res.Content)
			continue
		}
		checkPlan(t, tc.target, []byte(tc.file), e, res)
	}
}

// TestPlanRefusesDuplicateKeys: a key of the path the entry is written
// along given twice (the servers, the entry, a member of ours in it) is
// refused, naming it: the assistant's JSON.parse keeps the last, so an
// edit of the first would never be loaded. A duplicate elsewhere is not
// ours to judge.
func TestPlanRefusesDuplicateKeys(t *testing.T) {
	for file, want := range map[string]string{
		`{"mcpServers": {"a": {}}, "theme": 1, "mcpServers": {}}`:                                              `the file has "mcpServers" twice at its top level`,
		`{"\u006dcpServers": {}, "mcpServers": {}}`:                                                            `the file has "mcpServers" twice at its top level`,
		`{"mcpServers": {"a2a-courier": {}, "a2a-courier": {"command": "/old"}}}`:                              `the file has "a2a-courier" twice in "mcpServers"`,
		`{"mcpServers": {"a2a-courier": {"command": "/a", "command": "/b"}}}`:                                  `the file has "command" twice in "a2a-courier" of "mcpServers"`,
		`{"mcpServers": {"a2a-courier": {"env": {"A2A_COURIER_STATE_DIR": "", "A2A_COURIER_STATE_DIR": ""}}}}`: `the file has "A2A_COURIER_STATE_DIR" twice in "env" of "a2a-courier" of "mcpServers"`,
	} {
		_, err := Plan(Cursor, []byte(file), entry)
		if !errors.Is(err, ErrCannotEdit) || !strings.HasPrefix(err.Error(), want+": the assistant reads only the last") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", file, err)
		}
	}
	for _, file := range []string{`{"theme": 1, "theme": 2}`, `{"mcpServers": {"other": {}, "other": {}}}`, `{"mcpServers": {"a2a-courier": {"cwd": "/a", "cwd": "/b"}}}`} {
		if res, err := Plan(Cursor, []byte(file), entry); err != nil || !res.Changed {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// TestPlanRefusesDeepNesting: a file nesting deeper than maxNesting is
// refused before it is parsed (hujson recurses once a level: four million
// levels overflowed the stack), brackets in strings and comments not
// counted; ExistingArgs, which reads the file before Plan, gives up on it
// too. One level fewer is parsed.
func TestPlanRefusesDeepNesting(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`{"x": ` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	for _, file := range [][]byte{deep(maxNesting + 1), []byte(strings.Repeat("[", 4_000_000))} {
		_, err := Plan(Cursor, file, entry)
		if !errors.Is(err, ErrCannotEdit) || err.Error() != "the file nests deeper than 1000 levels: not an MCP configuration" {
			t.Errorf("%d bytes: %v", len(file), err)
		}
	}
	if _, err := Plan(Cursor, deep(maxNesting), entry); err != nil {
		t.Errorf("%d levels: %v", maxNesting, err)
	}
	brackets := strings.Repeat("[{", maxNesting)
	quiet := `{"x": "` + brackets + `", // ` + brackets + "\n /* " + brackets + ` */ "y": "\"` + brackets + `"}`
	if _, err := Plan(Cursor, []byte(quiet), entry); err != nil {
		t.Errorf("brackets in strings and comments: %v", err)
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"a2a-courier": {"args": ["mcp", "--profile", "x"], "y": `+strings.Repeat("[", 4_000_000)), 0o600)
	if got := ExistingArgs(path, Cursor, "a2a-courier"); got != nil {
		t.Errorf("ExistingArgs: %q", got)
	}
	for _, dry := range []bool{true, false} {
		if _, err := Install(path, Cursor, entry, dry); !errors.Is(err, ErrCannotEdit) {
			t.Errorf("Install (dry run %v): %v", dry, err)
		}
	}
}
