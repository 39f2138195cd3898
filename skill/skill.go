// Package skill installs the a2a-courier skill (SKILL.md, in the
// agentskills.io format) where desktop assistants look for skills.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"go.yaml.in/yaml/v3"

	a2acourier "github.com/a2a-courier/a2a-courier"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

// maxSkillBytes bounds the read of an installed SKILL.md: one larger is
// not ours, and is replaced.
const maxSkillBytes = 1 << 20

// Name is the skill's name and the folder it is installed in.
const Name = "a2a-courier"

// Repository returns the embedded SKILL.md, the repository's.
func Repository() []byte { return a2acourier.SkillMD }

// BinaryLine is the line of the repository's SKILL.md that names the
// binary. Content replaces it with the path of the binary that installs
// (or shows) the skill, so that an assistant whose PATH lacks a2a-courier
// still finds it.
const BinaryLine = "The binary: `a2a-courier`, on PATH. A copy of this file that `a2a-courier skill install` wrote names the binary's full path here."

// Content returns SKILL.md as the binary at exe installs it and shows it
// (skill show): the repository's, with BinaryLine naming exe, an absolute
// path; exe "" leaves it as it is.
func Content(exe string) []byte {
	if exe == "" {
		return Repository()
	}
	return bytes.Replace(Repository(), []byte(BinaryLine), []byte(binaryLine(exe, runtime.GOOS)), 1)
}

// binaryLine names the binary at exe, on the system goos: the commands
// keep the name a2a-courier, and the line says what to run in its place.
func binaryLine(exe, goos string) string {
	if goos == "windows" {
		// No shell quoting fits every shell there (cmd, PowerShell, Git
		// Bash): the path as it is, and how to run a quoted one.
		return "The binary: `" + exe + "` (this skill was installed from it). Where `a2a-courier` is not on PATH, run that file " +
			"in its place in every command below: in double quotes, and in PowerShell after `&` (`& \"" + exe + "\" discover --json`)."
	}
	q := shellcmd.Quote(exe)
	return "The binary: `" + q + "` (this skill was installed from it). Where `a2a-courier` is not on PATH, run `" + q +
		"` in its place in every command below (`" + q + " discover --json`)."
}

// Doc is the skill as `skill show --json` prints it: the front matter's
// fields and the whole file.
type Doc struct {
	Name          string `json:"name" yaml:"name"`
	Description   string `json:"description" yaml:"description"`
	Compatibility string `json:"compatibility,omitempty" yaml:"compatibility"`
	// Body is the text after the front matter; Content the whole SKILL.md.
	Body    string `json:"body" yaml:"-"`
	Content string `json:"content" yaml:"-"`
}

// Parse reads the front matter of SKILL.md as the binary at exe shows it
// (Content).
func Parse(exe string) (Doc, error) {
	s := string(Content(exe))
	rest, ok := strings.CutPrefix(s, "---\n")
	front, body, closed := strings.Cut(rest, "\n---\n")
	var d Doc
	if !ok || !closed {
		return d, errors.New("SKILL.md has no front matter")
	}
	if err := yaml.Unmarshal([]byte(front), &d); err != nil {
		return d, fmt.Errorf("SKILL.md's front matter: %w", err)
	}
	d.Body, d.Content = strings.TrimLeft(body, "\n"), s
	return d, nil
}

// Targets maps an assistant to its usual skills folder, relative to the
// home folder ("~/": HOME, on Windows %USERPROFILE%) or to the current
// directory ("./"). docs/windows.md says where each comes from.
var Targets = map[string]string{
	"claude":    "~/.claude/skills",
	"workbuddy": "~/.workbuddy/skills",
	"agents":    "./.agents/skills",
}

// TargetDir resolves an assistant's skills folder on the system dirs
// describes.
func TargetDir(target string, dirs userdirs.Env, cwd string) (string, error) {
	rel, ok := Targets[target]
	if !ok {
		return "", fmt.Errorf("unknown target %q: use claude, workbuddy or agents", target)
	}
	base, elems := cwd, strings.Split(rel[2:], "/")
	if rel[:2] == "~/" {
		home, err := dirs.Home()
		if err != nil {
			return "", err
		}
		base = home
	}
	return dirs.Join(append([]string{base}, elems...)...), nil
}

// Actions Install reports.
const (
	Created   = "created"
	Updated   = "updated"
	Unchanged = "unchanged"
)

// ReplaceError is a new SKILL.md that could not take the place of the old
// one (on Windows most often because an assistant holds it open, which
// ownfile.Rename waited for in vain).
type ReplaceError struct{ Err error }

func (e *ReplaceError) Error() string {
	var le *os.LinkError
	if errors.As(e.Err, &le) {
		return "the new version could not replace the file: " + le.Err.Error()
	}
	return "the new version could not replace the file: " + e.Err.Error()
}

func (e *ReplaceError) Unwrap() error { return e.Err }

// Install writes <dir>/a2a-courier/SKILL.md, naming the binary at exe
// (Content). It is idempotent: the same content is left alone; a skill
// installed from another binary is updated. With dryRun it only reports
// what it would do.
func Install(dir, exe string, dryRun bool) (path, action string, err error) {
	content := Content(exe)
	folder := filepath.Join(dir, Name)
	path = filepath.Join(folder, "SKILL.md")
	// Bounded and only a regular file: a FIFO in its place would block
	// the read for ever.
	old, _, err := boundedfile.Read(path, maxSkillBytes)
	var tooLarge *boundedfile.TooLargeError
	switch {
	case err == nil && bytes.Equal(old, content):
		return path, Unchanged, nil
	case err == nil, errors.As(err, &tooLarge):
		action = Updated
	case errors.Is(err, os.ErrNotExist):
		action = Created
	default:
		return path, "", err
	}
	if dryRun {
		return path, action, nil
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return path, "", err
	}
	tmp, err := os.CreateTemp(folder, ".SKILL.md.tmp-*")
	if err != nil {
		return path, "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return path, "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return path, "", err
	}
	if err := tmp.Close(); err != nil {
		return path, "", err
	}
	if err := ownfile.Rename(tmp.Name(), path); err != nil {
		return path, "", &ReplaceError{Err: err}
	}
	return path, action, nil
}
