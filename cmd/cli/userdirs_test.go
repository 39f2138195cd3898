package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// With only the variables a user's session has (HOME; on Windows
// USERPROFILE, APPDATA and LOCALAPPDATA, and no HOME: Windows has none,
// and Git Bash's is not the profile), every command that writes finds its
// place: the config file, the state directory, the skill, each assistant's
// MCP file. Before, on Windows, each of them failed with "HOME is not set".
func TestDefaultPlacesFromTheProfile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home dir")
	env := map[string]string{"A2A_COURIER_TEST_MAIN": "1", "HOME": home}
	want := map[string]string{
		"config":         filepath.Join(home, ".config", "a2a-courier", "config.yaml"),
		"state":          filepath.Join(home, ".local", "state", "a2a-courier"),
		"skill":          filepath.Join(home, ".claude", "skills", "a2a-courier", "SKILL.md"),
		"claude-desktop": filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		"vscode":         filepath.Join(home, ".config", "Code", "User", "mcp.json"),
		"cursor":         filepath.Join(home, ".cursor", "mcp.json"),
		"gemini":         filepath.Join(home, ".gemini", "settings.json"),
	}
	switch runtime.GOOS {
	case "darwin":
		support := filepath.Join(home, "Library", "Application Support")
		want["claude-desktop"] = filepath.Join(support, "Claude", "claude_desktop_config.json")
		want["vscode"] = filepath.Join(support, "Code", "User", "mcp.json")
	case "windows":
		profile := filepath.Join(root, "Zoë Ada")
		roaming, local := filepath.Join(profile, "AppData", "Roaming"), filepath.Join(profile, "AppData", "Local")
		env = map[string]string{"A2A_COURIER_TEST_MAIN": "1", "USERPROFILE": profile, "APPDATA": roaming, "LOCALAPPDATA": local,
			"HOME": home}
		want = map[string]string{
			"config":         filepath.Join(roaming, "a2a-courier", "config.yaml"),
			"state":          filepath.Join(local, "a2a-courier", "state"),
			"skill":          filepath.Join(profile, ".claude", "skills", "a2a-courier", "SKILL.md"),
			"claude-desktop": filepath.Join(roaming, "Claude", "claude_desktop_config.json"),
			"vscode":         filepath.Join(roaming, "Code", "User", "mcp.json"),
			"cursor":         filepath.Join(profile, ".cursor", "mcp.json"),
			"gemini":         filepath.Join(profile, ".gemini", "settings.json"),
		}
	}
	h := &harness{t: t, env: env}
	if r := h.run("config", "path"); r.code != 0 || strings.TrimSpace(r.stdout) != want["config"] {
		t.Errorf("config path: %q, want %q (%s)", r.stdout, want["config"], r.stderr)
	}
	h.run("tasks").expect(t, 0)
	h.run("skill", "install", "--target", "claude").expect(t, 0)
	// The skill names this binary (the test binary stands in for it), and
	// skill show prints what was installed.
	show := h.run("skill", "show")
	installed, err := os.ReadFile(want["skill"])
	if exe, _ := filepath.Abs(os.Args[0]); err != nil || show.stdout != string(installed) || !strings.Contains(show.stdout, exe) {
		t.Errorf("skill show differs from the installed skill, or does not name %s: %v", os.Args[0], err)
	}
	for _, target := range []string{"claude-desktop", "vscode", "cursor", "gemini"} {
		if r := h.run("mcp", "install", "--target", target); r.code != 0 || !strings.Contains(r.stdout, want[target]) {
			t.Errorf("mcp install --target %s: exit %d, %q %s", target, r.code, r.stdout, r.stderr)
		}
		// The directories are the defaults the assistant's process finds
		// too: the entry names none.
		b, err := os.ReadFile(want[target])
		if err != nil {
			t.Fatal(err)
		}
		std, err := hujson.Standardize(b)
		var doc map[string]map[string]struct {
			Command string            `json:"command"`
			Env     map[string]string `json:"env"`
		}
		if err == nil {
			err = json.Unmarshal(std, &doc)
		}
		key := map[bool]string{true: "servers", false: "mcpServers"}[target == "vscode"]
		if e := doc[key]["a2a-courier"]; err != nil || !filepath.IsAbs(e.Command) || len(e.Env) != 0 {
			t.Errorf("%s: %+v %v", target, e, err)
		}
	}
	for what, p := range want {
		if what == "config" {
			continue // config path names it; nothing here writes it
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	if runtime.GOOS == "windows" {
		// HOME is not Windows' home folder: nothing went there.
		if entries, err := os.ReadDir(home); err == nil {
			t.Errorf("%s was written: %v", home, entries)
		}
	}
}
