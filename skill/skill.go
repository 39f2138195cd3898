// Package skill installs the a2a-courier skill (SKILL.md, in the
// agentskills.io format) where desktop assistants look for skills.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	a2acourier "github.com/a2a-courier/a2a-courier"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

// maxSkillBytes bounds the read of an installed SKILL.md: one larger is
// not ours, and is replaced.
const maxSkillBytes = 1 << 20

// Name is the skill's name and the folder it is installed in.
const Name = "a2a-courier"

// Content returns the embedded SKILL.md.
func Content() []byte { return a2acourier.SkillMD }

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

// Parse reads the embedded SKILL.md's front matter.
func Parse() (Doc, error) {
	s := string(Content())
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

// Install writes <dir>/a2a-courier/SKILL.md. It is idempotent: the same
// content is left alone. With dryRun it only reports what it would do.
func Install(dir string, dryRun bool) (path, action string, err error) {
	folder := filepath.Join(dir, Name)
	path = filepath.Join(folder, "SKILL.md")
	// Bounded and only a regular file: a FIFO in its place would block
	// the read for ever.
	old, _, err := boundedfile.Read(path, maxSkillBytes)
	var tooLarge *boundedfile.TooLargeError
	switch {
	case err == nil && bytes.Equal(old, Content()):
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
	if _, err := tmp.Write(Content()); err != nil {
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return path, "", err
	}
	return path, action, nil
}
