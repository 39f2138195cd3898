package mcpinstall

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tailscale/hujson"
)

// A Windows binary's path (backslashes, a space, a non-ASCII letter) is
// written JSON-escaped, reads back as the same path from every file the
// editor writes (a new one, one with comments and another server, one
// whose entry it replaces), and a second install changes nothing.
func TestWindowsCommandPath(t *testing.T) {
	exe := `C:\Users\Zoë Ada\AppData\Local\Programs\a2a-courier\a2a-courier.exe`
	state := `C:\Users\Zoë Ada\AppData\Local\a2a-courier\state`
	e := Entry{Name: "a2a-courier", Command: exe, Args: []string{"mcp", "--api-key-file", `D:\keys\prod.key`},
		Env: map[string]string{"A2A_COURIER_STATE_DIR": state}}
	files := map[string]string{
		"new": "",
		"with comments": `{
  // Claude's settings
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "other": {"command": "C:\\tools\\other.exe", "args": []}, // kept
  },
}`,
		"older entry": `{"mcpServers": {"a2a-courier": {"command": "C:\\old\\a2a-courier.exe", "args": ["mcp"]}}}`,
	}
	for name, file := range files {
		for _, target := range []Target{ClaudeDesktop, VSCode} {
			res, err := Plan(target, []byte(file), e)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, target, err)
			}
			if !bytes.Contains(res.Content, []byte(`"C:\\Users\\Zoë Ada\\AppData\\Local\\Programs\\a2a-courier\\a2a-courier.exe"`)) {
				t.Errorf("%s, %s: the path is not written JSON-escaped:\n%s", name, target, res.Content)
			}
			std, err := hujson.Standardize(bytes.Clone(res.Content))
			if err != nil {
				t.Fatalf("%s, %s: %v\n%s", name, target, err, res.Content)
			}
			var top map[string]json.RawMessage
			var servers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			}
			if err := json.Unmarshal(std, &top); err != nil {
				t.Fatalf("%s, %s: %v", name, target, err)
			}
			if err := json.Unmarshal(top[serversKey(target)], &servers); err != nil {
				t.Fatalf("%s, %s: %v", name, target, err)
			}
			got := servers["a2a-courier"]
			if got.Command != exe || len(got.Args) != 3 || got.Args[2] != `D:\keys\prod.key` || got.Env["A2A_COURIER_STATE_DIR"] != state {
				t.Errorf("%s, %s: read back %+v", name, target, got)
			}
			if name == "with comments" && target == ClaudeDesktop && (!bytes.Contains(res.Content, []byte("// Claude's settings")) || servers["other"].Command != `C:\tools\other.exe`) {
				t.Errorf("%s, %s: the rest of the file changed:\n%s", name, target, res.Content)
			}
			again, err := Plan(target, res.Content, e)
			if err != nil || again.Changed || !bytes.Equal(again.Content, res.Content) {
				t.Errorf("%s, %s: a second install changed the file (%v):\n%s", name, target, err, again.Content)
			}
		}
	}
}
