// Package buildinfo says which build of a2a-courier runs: its version and
// the commit, Go and platform it was built from.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is the version command's document. Fields are only ever added.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// Read is this build's Info; set is the version set at build time
// (-ldflags), if any, and commit the commit set then (scripts/release
// sets both), which names the build when Go recorded none (a build from a
// Git worktree or a source archive): Go's own record wins.
func Read(set, commit string) Info {
	info := Info{Version: Version(set), Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}

// Version is this build's version (versionOf).
func Version(set string) string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(set, bi)
}

// versionOf is the version to show: the one set at build time (-ldflags)
// wins; else the module's own (go install …@v1.2.3); else, for a build of
// a checkout (go build), dev and the commit Go recorded (vcs.revision,
// "-dirty" for uncommitted changes); else dev.
func versionOf(set string, bi *debug.BuildInfo) string {
	if set != "" {
		return set
	}
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !isPseudoVersion(v) {
		return v
	}
	v, dirty := "dev", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += "-" + s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	return v + dirty
}

// isPseudoVersion reports whether v is a version Go made up from a commit
// (v0.0.0-20261201100839-e926defc4e14): no release.
func isPseudoVersion(v string) bool {
	parts := strings.Split(strings.TrimSuffix(v, "+dirty"), "-")
	if len(parts) < 3 || len(parts[len(parts)-1]) != 12 {
		return false
	}
	stamp := parts[len(parts)-2]
	stamp = stamp[strings.LastIndexByte(stamp, '.')+1:]
	return len(stamp) == 14 && strings.Trim(stamp, "0123456789") == "" && strings.Trim(parts[len(parts)-1], "0123456789abcdef") == ""
}
