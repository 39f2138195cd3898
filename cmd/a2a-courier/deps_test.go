package main

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists the packages a build of this command links.
func deps(t *testing.T, tags ...string) map[string]bool {
	t.Helper()
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, ".")...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set
}

// TestReleaseBinaryCarriesNoSimulator: the binary users install (go build,
// go install) does not link the Agent Builder simulator, which is test
// code; a build with the tag simulator does, for demo and dev-server.
func TestReleaseBinaryCarriesNoSimulator(t *testing.T) {
	t.Parallel()
	const sim = "github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	release := deps(t)
	for p := range release {
		if p == sim || strings.HasPrefix(p, sim+"/") || strings.HasSuffix(p, "/internal/simulator/agentbuilder") {
			t.Errorf("the release binary links %s", p)
		}
	}
	if !release["github.com/a2a-courier/a2a-courier/internal/courier"] {
		t.Error("the release binary does not link the engine: go list failed to say")
	}
	if !deps(t, "simulator")[sim] {
		t.Errorf("a build with -tags simulator does not link %s", sim)
	}
}
