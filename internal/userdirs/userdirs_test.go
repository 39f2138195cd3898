package userdirs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func env(goos string, vars map[string]string) Env {
	return Env{GOOS: goos, Getenv: func(k string) string { return vars[k] }}
}

// The layout of each system, checked on every system.
func TestLayouts(t *testing.T) {
	unix := map[string]string{"HOME": "/home/ada"}
	xdg := map[string]string{"HOME": "/home/ada", "XDG_CONFIG_HOME": "/xdg/config", "XDG_STATE_HOME": "/xdg/state"}
	relXDG := map[string]string{"HOME": "/home/ada", "XDG_CONFIG_HOME": "config", "XDG_STATE_HOME": "state"}
	mac := map[string]string{"HOME": "/Users/ada"}
	win := map[string]string{"USERPROFILE": `C:\Users\Ada Lovelace`, "APPDATA": `C:\Users\Ada Lovelace\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\Ada Lovelace\AppData\Local`, "HOME": "/c/Users/ada", "XDG_CONFIG_HOME": "/xdg", "XDG_STATE_HOME": "/xdg"}
	for _, c := range []struct {
		name, goos                             string
		vars                                   map[string]string
		home, config, state, source, appConfig string
	}{
		{"linux", "linux", unix, "/home/ada", "/home/ada/.config/a2a-courier", "/home/ada/.local/state/a2a-courier", "default", "/home/ada/.config"},
		{"linux, XDG", "linux", xdg, "/home/ada", "/xdg/config/a2a-courier", "/xdg/state/a2a-courier", "env XDG_STATE_HOME", "/xdg/config"},
		{"linux, relative XDG ignored", "linux", relXDG, "/home/ada", "/home/ada/.config/a2a-courier", "/home/ada/.local/state/a2a-courier", "default", "/home/ada/.config"},
		{"freebsd", "freebsd", unix, "/home/ada", "/home/ada/.config/a2a-courier", "/home/ada/.local/state/a2a-courier", "default", "/home/ada/.config"},
		// macOS: a2a-courier's own files as on Linux (where they have
		// always been), the applications' under Application Support.
		{"darwin", "darwin", mac, "/Users/ada", "/Users/ada/.config/a2a-courier", "/Users/ada/.local/state/a2a-courier", "default",
			"/Users/ada/Library/Application Support"},
		{"darwin, XDG", "darwin", map[string]string{"HOME": "/Users/ada", "XDG_CONFIG_HOME": "/x"}, "/Users/ada", "/x/a2a-courier",
			"/Users/ada/.local/state/a2a-courier", "default", "/Users/ada/Library/Application Support"},
		// Windows: the profile's folders; HOME (Git Bash sets one) and
		// XDG_* mean nothing there.
		{"windows", "windows", win, `C:\Users\Ada Lovelace`, `C:\Users\Ada Lovelace\AppData\Roaming\a2a-courier`,
			`C:\Users\Ada Lovelace\AppData\Local\a2a-courier\state`, "default", `C:\Users\Ada Lovelace\AppData\Roaming`},
	} {
		e := env(c.goos, c.vars)
		home, err1 := e.Home()
		config, err2 := e.ConfigDir()
		state, source, err3 := e.StateDir()
		app, err4 := e.AppConfig()
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			t.Errorf("%s: %v %v %v %v", c.name, err1, err2, err3, err4)
			continue
		}
		if home != c.home || config != c.config || state != c.state || source != c.source || app != c.appConfig {
			t.Errorf("%s:\n home %q\n config %q\n state %q (%s)\n applications %q", c.name, home, config, state, source, app)
		}
	}
}

// A2A_COURIER_CONFIG_DIR and A2A_COURIER_STATE_DIR win on every system,
// and need nothing else.
func TestOverridesWin(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		e := env(goos, map[string]string{"A2A_COURIER_CONFIG_DIR": "cfg", "A2A_COURIER_STATE_DIR": "st"})
		config, err := e.ConfigDir()
		state, source, err2 := e.StateDir()
		if config != "cfg" || state != "st" || source != "env A2A_COURIER_STATE_DIR" || err != nil || err2 != nil {
			t.Errorf("%s: %q %q %q %v %v", goos, config, state, source, err, err2)
		}
	}
}

// Without the variables, the error names the one to set, in the
// system's own notation.
func TestMissingVariables(t *testing.T) {
	e := env("linux", nil)
	_, err := e.ConfigDir()
	_, _, err2 := e.StateDir()
	_, err3 := e.Home()
	for _, err := range []error{err, err2, err3} {
		if err == nil || err.Error() != "HOME is not set" {
			t.Errorf("linux: %v", err)
		}
	}
	w := env("windows", map[string]string{"HOME": "/home/ada", "APPDATA": "relative"})
	if _, err := w.ConfigDir(); err == nil || err.Error() != "%APPDATA% is not set" {
		t.Errorf("windows config: %v", err)
	}
	if _, _, err := w.StateDir(); err == nil || err.Error() != "%LOCALAPPDATA% is not set" {
		t.Errorf("windows state: %v", err)
	}
	if _, err := w.Home(); err == nil || err.Error() != "%USERPROFILE% is not set" {
		t.Errorf("windows home: %v", err)
	}
	// The system's known folder stands in for a variable not set.
	w.Known = func(f Folder) string { return []string{`C:\P`, `C:\P\Roaming`, `C:\P\Local`}[f] }
	home, _ := w.Home()
	config, _ := w.ConfigDir()
	state, _, _ := w.StateDir()
	if home != `C:\P` || config != `C:\P\Roaming\a2a-courier` || state != `C:\P\Local\a2a-courier\state` {
		t.Errorf("known folders: %q %q %q", home, config, state)
	}
}

// An assistant's process has the profile's variables only: the shell's
// XDG_* and A2A_COURIER_* are not in it.
func TestProfileOnly(t *testing.T) {
	vars := map[string]string{"HOME": "/home/ada", "XDG_CONFIG_HOME": "/xdg", "A2A_COURIER_STATE_DIR": "/s", "USERPROFILE": `C:\U`}
	e := env("linux", vars).ProfileOnly()
	config, _ := e.ConfigDir()
	state, _, _ := e.StateDir()
	if config != "/home/ada/.config/a2a-courier" || state != "/home/ada/.local/state/a2a-courier" {
		t.Errorf("linux: %q %q", config, state)
	}
	w := env("windows", map[string]string{"USERPROFILE": `C:\U`, "APPDATA": `C:\U\R`, "LOCALAPPDATA": `C:\U\L`, "A2A_COURIER_CONFIG_DIR": `D:\c`}).ProfileOnly()
	config, _ = w.ConfigDir()
	if config != `C:\U\R\a2a-courier` {
		t.Errorf("windows: %q", config)
	}
	if v := (Env{GOOS: "linux"}).ProfileOnly().Getenv("HOME"); v != "" {
		t.Errorf("no environment: %q", v)
	}
}

func TestExpandHome(t *testing.T) {
	u := env("linux", map[string]string{"HOME": "/home/ada"})
	w := env("windows", map[string]string{"USERPROFILE": `C:\Users\ada`})
	for _, c := range []struct {
		e       Env
		in, out string
	}{
		{u, "~/keys/k", "/home/ada/keys/k"},
		{u, "~", "/home/ada"},
		{u, "~ada/k", "~ada/k"},
		{u, `~\k`, `~\k`},
		{u, "/abs/k", "/abs/k"},
		{w, `~\keys\k`, `C:\Users\ada\keys\k`},
		{w, "~/keys/k", `C:\Users\ada\keys\k`},
		{env("linux", nil), "~/k", "~/k"},
	} {
		if got := c.e.ExpandHome(c.in); got != c.out {
			t.Errorf("%s %q: %q, want %q", c.e.GOOS, c.in, got, c.out)
		}
	}
}

// On the running system, the layout agrees with Go's own answers: the
// home folder with os.UserHomeDir, and on Windows the config folder with
// os.UserConfigDir (%APPDATA%) and the state's base with os.UserCacheDir
// (%LOCALAPPDATA%). Under Wine, the known folders too: with the variables
// hidden, Windows' answer is the same folder.
func TestHostAgreesWithTheSystem(t *testing.T) {
	h := Host(os.Getenv)
	home, err := h.Home()
	if want, werr := os.UserHomeDir(); werr == nil && (err != nil || home != want) {
		t.Errorf("home %q %v, os.UserHomeDir %q", home, err, want)
	}
	if runtime.GOOS != "windows" {
		if os.Getenv("HOME") != "" && knownFolder(Profile) != "" {
			t.Error("a known folder off Windows")
		}
		return
	}
	wantConfig, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	wantLocal, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	hidden := Host(func(k string) string {
		if k == "USERPROFILE" || k == "APPDATA" || k == "LOCALAPPDATA" {
			return ""
		}
		return os.Getenv(k)
	})
	for name, e := range map[string]Env{"environment": h, "known folders": hidden} {
		config, err := e.ConfigDir()
		state, _, err2 := e.StateDir()
		home, err3 := e.Home()
		if err != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", name, err, err2, err3)
		}
		if !strings.EqualFold(config, filepath.Join(wantConfig, Name)) || !strings.EqualFold(state, filepath.Join(wantLocal, Name, "state")) ||
			!strings.EqualFold(home, os.Getenv("USERPROFILE")) {
			t.Errorf("%s: config %q state %q home %q; APPDATA %q LOCALAPPDATA %q USERPROFILE %q", name, config, state, home,
				wantConfig, wantLocal, os.Getenv("USERPROFILE"))
		}
	}
}
