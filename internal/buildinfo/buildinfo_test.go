package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// The version: the one set at build time wins; go install's module
// version; for go build of a checkout, dev and the commit (-dirty when
// modified); dev with nothing recorded.
func TestVersionOf(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201100839-e926defc4e14+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "e926defc4e14ff258e5075fdbe0e687bc7f7b813"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct{ set, want string }{{"", "dev-e926defc4e14-dirty"}, {"v1.4.0", "v1.4.0"}} {
		if got := versionOf(tc.set, bi); got != tc.want {
			t.Errorf("versionOf(%q) = %q, want %q", tc.set, got, tc.want)
		}
	}
	if got := versionOf("", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}); got != "v1.2.3" {
		t.Errorf("go install's version: %q", got)
	}
	if got := versionOf("", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); got != "dev" {
		t.Errorf("no vcs: %q", got)
	}
	if got := versionOf("", nil); got != "dev" {
		t.Errorf("no build info: %q", got)
	}
	if info := Read("v9.9.9", ""); info.Version != "v9.9.9" || info.Go != runtime.Version() || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("%+v", info)
	}
	// A commit set at build time names a build Go recorded none for; Go's
	// record wins.
	info := Read("v9.9.9", "0123456789abcdef0123456789abcdef01234567")
	if bi, _ := debug.ReadBuildInfo(); revision(bi) == "" && info.Commit != "0123456789abcdef0123456789abcdef01234567" ||
		revision(bi) != "" && info.Commit != revision(bi) {
		t.Errorf("commit %q, Go's record %q", info.Commit, revision(bi))
	}
}

// revision is the commit Go recorded in bi, if any.
func revision(bi *debug.BuildInfo) string {
	if bi != nil {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}
