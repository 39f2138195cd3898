package skill

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

func TestContentIsTheRepositorySkill(t *testing.T) {
	root, err := os.ReadFile(filepath.Join("..", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, Content()) {
		t.Fatal("the embedded SKILL.md differs from the repository's")
	}
}

func TestFrontMatter(t *testing.T) {
	s := string(Content())
	if !strings.HasPrefix(s, "---\n") {
		t.Fatal("no front matter")
	}
	end := strings.Index(s[4:], "\n---\n")
	if end < 0 {
		t.Fatal("front matter not closed")
	}
	fields := map[string]string{}
	for _, line := range strings.Split(s[4:4+end], "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok {
			fields[k] = v
		}
	}
	if fields["name"] != Name {
		t.Errorf("name %q, want %q (it must match the folder)", fields["name"], Name)
	}
	if d := fields["description"]; d == "" || len(d) > 1024 {
		t.Errorf("description has %d characters, want 1 to 1024", len(d))
	}
	if c := fields["compatibility"]; c == "" || len(c) > 500 || !strings.Contains(c, "a2a-courier") {
		t.Errorf("compatibility %q must name the binary in at most 500 characters", c)
	}
	if lines := strings.Count(s, "\n"); lines > 500 {
		t.Errorf("SKILL.md has %d lines; keep it under 500", lines)
	}
}

func TestInstallIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	path, action, err := Install(dir, true)
	if err != nil || action != Created {
		t.Fatalf("dry run: %s %v", action, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a dry run wrote the file")
	}
	for i, want := range []string{Created, Unchanged} {
		p, action, err := Install(dir, false)
		if err != nil || action != want || p != filepath.Join(dir, "a2a-courier", "SKILL.md") {
			t.Fatalf("install %d: %s %s %v", i, p, action, err)
		}
	}
	os.WriteFile(path, []byte("old"), 0o644)
	if _, action, _ := Install(dir, false); action != Updated {
		t.Errorf("action %s, want updated", action)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, Content()) {
		t.Error("content not replaced")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}

// The skills folders, on each system: under the home folder (HOME, on
// Windows %USERPROFILE%), or the current directory.
func TestTargetDir(t *testing.T) {
	dirs := func(goos string, vars map[string]string) userdirs.Env {
		return userdirs.Env{GOOS: goos, Getenv: func(k string) string { return vars[k] }}
	}
	unix := dirs("linux", map[string]string{"HOME": "/home/u"})
	mac := dirs("darwin", map[string]string{"HOME": "/Users/u"})
	// HOME, as Git Bash sets it, is not Windows' home folder.
	win := dirs("windows", map[string]string{"USERPROFILE": `C:\Users\Ada L`, "HOME": "/c/Users/ada"})
	for _, c := range []struct {
		dirs        userdirs.Env
		target, cwd string
		want        string
	}{
		{unix, "claude", "/work", "/home/u/.claude/skills"},
		{unix, "workbuddy", "/work", "/home/u/.workbuddy/skills"},
		{unix, "agents", "/work", "/work/.agents/skills"},
		{mac, "claude", "/work", "/Users/u/.claude/skills"},
		{win, "claude", `D:\work`, `C:\Users\Ada L\.claude\skills`},
		{win, "workbuddy", `D:\work`, `C:\Users\Ada L\.workbuddy\skills`},
		{win, "agents", `D:\work`, `D:\work\.agents\skills`},
	} {
		got, err := TargetDir(c.target, c.dirs, c.cwd)
		if err != nil || got != c.want {
			t.Errorf("%s on %s: %s %v", c.target, c.dirs.GOOS, got, err)
		}
	}
	if _, err := TargetDir("vim", unix, "/w"); err == nil {
		t.Error("unknown target accepted")
	}
	if _, err := TargetDir("claude", dirs("windows", nil), `D:\w`); err == nil || err.Error() != "%USERPROFILE% is not set" {
		t.Errorf("no home folder: %v", err)
	}
	if got, err := TargetDir("agents", dirs("windows", nil), `D:\w`); err != nil || got != `D:\w\.agents\skills` {
		t.Errorf("agents needs no home folder: %s %v", got, err)
	}
}

func TestParse(t *testing.T) {
	d, err := Parse()
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != Name || !strings.HasPrefix(d.Description, "Delegate a task") || !strings.Contains(d.Compatibility, "a2a-courier") ||
		!strings.HasPrefix(d.Body, "# a2a-courier") || d.Content != string(Content()) {
		t.Errorf("%+v", d)
	}
}
