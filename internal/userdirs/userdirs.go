// Package userdirs says where things live for the user, on each system:
// a2a-courier's configuration and state directories, the user's home
// folder (for ~ in a configured path and the assistants' folders), and the
// folder where desktop applications keep their settings (Claude Desktop,
// VS Code). It is the one place that reads HOME, XDG_*, USERPROFILE,
// APPDATA and LOCALAPPDATA: every default path is resolved here.
//
// The layout of each system is a function of its name (Env.GOOS), so that
// a test on one system checks the paths of all three. Host is the one
// place that names the running system.
//
//	                 Linux, other Unix                 macOS                              Windows
//	config           $XDG_CONFIG_HOME or ~/.config     the same                           %APPDATA%
//	  a2a-courier's  …/a2a-courier                     …/a2a-courier                      %APPDATA%\a2a-courier
//	state            $XDG_STATE_HOME or ~/.local/state the same                           %LOCALAPPDATA%
//	  a2a-courier's  …/a2a-courier                     …/a2a-courier                      %LOCALAPPDATA%\a2a-courier\state
//	home             $HOME                             $HOME                              %USERPROFILE%
//	applications'    $XDG_CONFIG_HOME or ~/.config     ~/Library/Application Support      %APPDATA%
//
// macOS keeps the XDG layout of the command-line tools (gh, git, helix):
// it is where a2a-courier has always kept its files there, a path without
// a space to type in a shell, and what a user who set XDG_CONFIG_HOME
// expects. Only the desktop applications' own files are under
// ~/Library/Application Support, because that is where those applications
// read them. On Windows the XDG variables mean nothing and are not read.
package userdirs

import (
	"errors"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Name is the folder a2a-courier's directories are named after.
const Name = "a2a-courier"

// The variables that override the defaults; they always win.
const (
	ConfigDirEnv = "A2A_COURIER_CONFIG_DIR"
	StateDirEnv  = "A2A_COURIER_STATE_DIR"
)

// Folder is a Windows known folder, looked up when its variable is not set.
type Folder int

// The known folders used: %USERPROFILE%, %APPDATA%, %LOCALAPPDATA%.
const (
	Profile Folder = iota
	RoamingAppData
	LocalAppData
)

// variable is the environment variable Windows sets to a known folder.
func (f Folder) variable() string {
	return [...]string{"USERPROFILE", "APPDATA", "LOCALAPPDATA"}[f]
}

// Env is what the directories are resolved from.
type Env struct {
	// GOOS is the system whose layout applies ("linux", "darwin",
	// "windows"; any other is laid out as Linux).
	GOOS string
	// Getenv reads the environment.
	Getenv func(string) string
	// Known answers, on Windows, where a known folder is when its variable
	// is not set (an assistant may start its tools without APPDATA): the
	// system's own answer (SHGetKnownFolderPath). nil: none.
	Known func(Folder) string
}

// Host is the running system's Env, reading the environment through getenv.
func Host(getenv func(string) string) Env {
	return Env{GOOS: runtime.GOOS, Getenv: getenv, Known: knownFolder}
}

func (e Env) windows() bool { return e.GOOS == "windows" }

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Var is the environment variable k ("" without an environment).
func (e Env) Var(k string) string { return e.getenv(k) }

// Join joins path elements with the separator of e's system.
func (e Env) Join(elem ...string) string {
	if !e.windows() {
		return path.Join(elem...)
	}
	if runtime.GOOS == "windows" {
		return filepath.Join(elem...)
	}
	// A Windows path computed elsewhere (a test): join with backslashes,
	// as filepath.Join does there.
	parts := make([]string, 0, len(elem))
	for i, p := range elem {
		p = strings.ReplaceAll(p, "/", `\`)
		if i > 0 {
			p = strings.Trim(p, `\/`)
		} else {
			p = strings.TrimRight(p, `\/`)
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, `\`)
}

// IsAbs reports whether p is absolute on e's system.
func (e Env) IsAbs(p string) bool {
	switch {
	case !e.windows():
		return strings.HasPrefix(p, "/")
	case runtime.GOOS == "windows":
		return filepath.IsAbs(p)
	}
	// C:\x or C:/x, or a UNC path \\server\share.
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') ||
		strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//")
}

// notSet is the error for a variable that a default path needs.
func (e Env) notSet(name string) error {
	if e.windows() {
		return errors.New("%" + name + "% is not set")
	}
	return errors.New(name + " is not set")
}

// known is a Windows known folder: its variable when that is set to an
// absolute path, else the system's answer.
func (e Env) known(f Folder) (string, error) {
	if v := e.getenv(f.variable()); e.IsAbs(v) {
		return v, nil
	}
	if e.Known != nil {
		if v := e.Known(f); v != "" {
			return v, nil
		}
	}
	return "", e.notSet(f.variable())
}

// Home is the user's home folder: HOME, or on Windows USERPROFILE. It is
// where the assistants keep their dot-folders (~/.cursor, ~/.gemini,
// ~/.claude) and what ~ means in a configured path.
func (e Env) Home() (string, error) {
	if e.windows() {
		return e.known(Profile)
	}
	if h := e.getenv("HOME"); h != "" {
		return h, nil
	}
	return "", e.notSet("HOME")
}

// xdg is an XDG base directory: the variable when it holds an absolute
// path (the specification says to ignore a relative one), else the
// default under the home folder.
func (e Env) xdg(name string, dflt ...string) (string, error) {
	if d := e.getenv(name); e.IsAbs(d) {
		return d, nil
	}
	home, err := e.Home()
	if err != nil {
		return "", err
	}
	return e.Join(append([]string{home}, dflt...)...), nil
}

// AppConfig is the folder where desktop applications keep their per-user
// settings: $XDG_CONFIG_HOME or ~/.config, ~/Library/Application Support
// on macOS, %APPDATA% on Windows.
func (e Env) AppConfig() (string, error) {
	switch e.GOOS {
	case "windows":
		return e.known(RoamingAppData)
	case "darwin":
		home, err := e.Home()
		if err != nil {
			return "", err
		}
		return e.Join(home, "Library", "Application Support"), nil
	}
	return e.xdg("XDG_CONFIG_HOME", ".config")
}

// ConfigDir is a2a-courier's config directory: A2A_COURIER_CONFIG_DIR,
// else %APPDATA%\a2a-courier on Windows, else
// $XDG_CONFIG_HOME/a2a-courier or ~/.config/a2a-courier.
func (e Env) ConfigDir() (string, error) {
	if d := e.getenv(ConfigDirEnv); d != "" {
		return d, nil
	}
	base, err := e.known(RoamingAppData)
	if !e.windows() {
		base, err = e.xdg("XDG_CONFIG_HOME", ".config")
	}
	if err != nil {
		return "", err
	}
	return e.Join(base, Name), nil
}

// StateDir is a2a-courier's state directory and where it comes from:
// A2A_COURIER_STATE_DIR ("env A2A_COURIER_STATE_DIR"), else
// %LOCALAPPDATA%\a2a-courier\state on Windows (local, not roaming: task
// records and locks belong to this machine's workers), else
// $XDG_STATE_HOME/a2a-courier ("env XDG_STATE_HOME") or
// ~/.local/state/a2a-courier ("default").
func (e Env) StateDir() (dir, source string, err error) {
	if d := e.getenv(StateDirEnv); d != "" {
		return d, "env " + StateDirEnv, nil
	}
	if e.windows() {
		base, err := e.known(LocalAppData)
		if err != nil {
			return "", "default", err
		}
		return e.Join(base, Name, "state"), "default", nil
	}
	if d := e.getenv("XDG_STATE_HOME"); e.IsAbs(d) {
		return e.Join(d, Name), "env XDG_STATE_HOME", nil
	}
	home, err := e.Home()
	if err != nil {
		return "", "default", err
	}
	return e.Join(home, ".local", "state", Name), "default", nil
}

// ProfileVars are the variables that give the defaults and that a process
// an assistant starts has too (it has no A2A_COURIER_* or XDG_* of the
// user's shell): HOME, or on Windows USERPROFILE, APPDATA and LOCALAPPDATA.
func (e Env) ProfileVars() []string {
	if e.windows() {
		return []string{"USERPROFILE", "APPDATA", "LOCALAPPDATA"}
	}
	return []string{"HOME"}
}

// ProfileOnly is e with only ProfileVars in its environment: the
// directories an assistant's process finds.
func (e Env) ProfileOnly() Env {
	vars, get := e.ProfileVars(), e.getenv
	e.Getenv = func(k string) string {
		for _, v := range vars {
			if strings.EqualFold(k, v) {
				return get(k)
			}
		}
		return ""
	}
	return e
}

// ExpandHome expands a leading ~ (~/x, and ~\x on Windows) to the home
// folder; p is unchanged when it has none or the home folder is unknown.
func (e Env) ExpandHome(p string) string {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok || rest != "" && rest[0] != '/' && !(e.windows() && rest[0] == '\\') {
		return p
	}
	home, err := e.Home()
	if err != nil {
		return p
	}
	return e.Join(home, rest)
}
