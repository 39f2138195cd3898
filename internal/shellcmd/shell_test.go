package shellcmd

import "testing"

// The set-up hints in each system's shell: PowerShell has no `export` and
// no `<` (it says "The '<' operator is reserved for future use").
func TestShellForms(t *testing.T) {
	for _, c := range []struct {
		goos, env, envPlaceholder, fromFile string
	}{
		{"linux", "export KIBANA_URL=https://x.example.com:9243", "export KIBANA_API_KEY=<the encoded value>", "a2a-courier config set api-key < key-file"},
		{"darwin", "export KIBANA_URL=https://x.example.com:9243", "export KIBANA_API_KEY=<the encoded value>", "a2a-courier config set api-key < key-file"},
		{"windows", `$env:KIBANA_URL = "https://x.example.com:9243"`, `$env:KIBANA_API_KEY = "<the encoded value>"`, "Get-Content key-file | a2a-courier config set api-key"},
	} {
		sh := ShellOf(c.goos)
		if got := sh.EnvSet("KIBANA_URL", "https://x.example.com:9243"); got != c.env {
			t.Errorf("%s: EnvSet = %q, want %q", c.goos, got, c.env)
		}
		if got := sh.EnvSet("KIBANA_API_KEY", "<the encoded value>"); got != c.envPlaceholder {
			t.Errorf("%s: EnvSet = %q, want %q", c.goos, got, c.envPlaceholder)
		}
		if got := sh.FromFile("a2a-courier config set api-key", "key-file"); got != c.fromFile {
			t.Errorf("%s: FromFile = %q, want %q", c.goos, got, c.fromFile)
		}
	}
	// Values are quoted for the shell they are pasted into.
	if got := POSIX.EnvSet("X", "a b'c"); got != `export X='a b'\''c'` {
		t.Errorf("posix: %s", got)
	}
	if got := PowerShell.EnvSet("X", "a\"$b`"); got != "$env:X = \"a`\"`$b``\"" {
		t.Errorf("powershell: %s", got)
	}
}
