package skill

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

func TestContentIsTheRepositorySkill(t *testing.T) {
	root, err := os.ReadFile(filepath.Join("..", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(root, Repository()) || !bytes.Equal(Content(""), Repository()) {
		t.Fatal("the embedded SKILL.md differs from the repository's")
	}
	if n := bytes.Count(root, []byte(BinaryLine)); n != 1 {
		t.Fatalf("SKILL.md has the line that names the binary %d times, want once", n)
	}
}

func TestFrontMatter(t *testing.T) {
	s := string(Content("/usr/local/bin/a2a-courier"))
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
	exe := filepath.Join(dir, "bin", "a2a-courier")
	path, action, err := Install(dir, exe, true)
	if err != nil || action != Created {
		t.Fatalf("dry run: %s %v", action, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a dry run wrote the file")
	}
	for i, want := range []string{Created, Unchanged} {
		p, action, err := Install(dir, exe, false)
		if err != nil || action != want || p != filepath.Join(dir, "a2a-courier", "SKILL.md") {
			t.Fatalf("install %d: %s %s %v", i, p, action, err)
		}
	}
	os.WriteFile(path, []byte("old"), 0o644)
	if _, action, _ := Install(dir, exe, false); action != Updated {
		t.Errorf("action %s, want updated", action)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, Content(exe)) {
		t.Error("content not replaced")
	}
	// Installed from another binary: the file names that one.
	other := filepath.Join(dir, "other", "a2a-courier")
	if _, action, _ := Install(dir, other, false); action != Updated {
		t.Errorf("from another binary: action %s, want updated", action)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, Content(other)) {
		t.Error("content does not name the other binary")
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
	d, err := Parse("/usr/local/bin/a2a-courier")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != Name || !strings.HasPrefix(d.Description, "Delegate a task") || !strings.Contains(d.Compatibility, "a2a-courier") ||
		!strings.HasPrefix(d.Body, "# a2a-courier") || d.Content != string(Content("/usr/local/bin/a2a-courier")) {
		t.Errorf("%+v", d)
	}
}

// The installed SKILL.md names the binary it was installed from, by its
// full path, in the one line the repository's reserves for it; the rest is
// the repository's, byte for byte.
func TestContentNamesTheBinary(t *testing.T) {
	for _, c := range []struct{ exe, goos, want string }{
		{"/usr/local/bin/a2a-courier", "linux", "The binary: `/usr/local/bin/a2a-courier` (this skill was installed from it). " +
			"Where `a2a-courier` is not on PATH, run `/usr/local/bin/a2a-courier` in its place in every command below (`/usr/local/bin/a2a-courier discover --json`)."},
		{"/Users/Ada L/bin/a2a-courier", "darwin", "The binary: `'/Users/Ada L/bin/a2a-courier'` (this skill was installed from it). " +
			"Where `a2a-courier` is not on PATH, run `'/Users/Ada L/bin/a2a-courier'` in its place in every command below (`'/Users/Ada L/bin/a2a-courier' discover --json`)."},
		{`C:\Users\Zoë Ada\AppData\Local\Programs\a2a-courier\a2a-courier.exe`, "windows",
			"The binary: `C:\\Users\\Zoë Ada\\AppData\\Local\\Programs\\a2a-courier\\a2a-courier.exe` (this skill was installed from it). " +
				"Where `a2a-courier` is not on PATH, run that file in its place in every command below: in double quotes, and in PowerShell after `&` " +
				"(`& \"C:\\Users\\Zoë Ada\\AppData\\Local\\Programs\\a2a-courier\\a2a-courier.exe\" discover --json`)."},
	} {
		if got := binaryLine(c.exe, c.goos); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.goos, got, c.want)
		}
	}
	exe := "/opt/a2a courier/a2a-courier"
	got := Content(exe)
	if want := bytes.Replace(Repository(), []byte(BinaryLine), []byte(binaryLine(exe, runtime.GOOS)), 1); !bytes.Equal(got, want) ||
		bytes.Contains(got, []byte(BinaryLine)) || bytes.Equal(got, Repository()) {
		t.Error("Content does not replace the binary's line, and only it")
	}
	front, err := Parse(exe)
	repo, err2 := Parse("")
	if err != nil || err2 != nil || front.Name != repo.Name || front.Description != repo.Description || front.Compatibility != repo.Compatibility {
		t.Errorf("the front matter changed: %v %v", err, err2)
	}
}

// A real binary, copied to a folder whose name has spaces (and, on
// Windows, is a backslashed path), installs a SKILL.md that names
// os.Executable's path: the test binary stands in for a2a-courier.
func TestInstalledSkillNamesItsBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bin := filepath.Join(root, "Program Files", "a2a courier", "a2a-courier"+filepath.Ext(self))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	skills := filepath.Join(root, "skills")
	cmd := exec.Command(bin, "-test.run=^TestMain$")
	cmd.Env = append(os.Environ(), "SKILL_TEST_INSTALL_INTO="+skills)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(skills, Name, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Content(bin)) || !strings.Contains(string(got), "The binary: `"+map[bool]string{true: bin, false: "'" + bin + "'"}[runtime.GOOS == "windows"]+"`") {
		t.Errorf("the installed skill does not name %s:\n%.600s", bin, got)
	}
	if runtime.GOOS == "windows" && !strings.Contains(bin, `\Program Files\a2a courier\`) {
		t.Errorf("not a Windows path: %s", bin)
	}
}

// TestMain runs the child of TestInstalledSkillNamesItsBinary: it installs
// the skill as the binary it is, and exits.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SKILL_TEST_INSTALL_INTO"); dir != "" {
		exe, err := os.Executable()
		if err == nil {
			_, _, err = Install(dir, exe, false)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
