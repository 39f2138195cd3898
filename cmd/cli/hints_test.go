package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// The hints of issue 23: each names what the caller can change, where it
// came from, and the value it most likely meant.

// TestForbiddenHintNamesTheSpace: a 403 in a space the key may not use
// (exit 4) names the space in use, where it came from, and how to change
// it; a task read in the space it was sent to names that one.
func TestForbiddenHintNamesTheSpace(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	const prodKey = "bm9zcGFjZTprZXk=" // a key of space prod only
	for _, tc := range []struct {
		name    string
		env     map[string]string
		profile string
		args    []string
		want    []string
	}{
		{"no space set: the default one", nil, "", nil,
			[]string{"the space is the default one", "--space <id>", "KIBANA_SPACE_ID"}},
		{"KIBANA_SPACE_ID", map[string]string{"KIBANA_SPACE_ID": "staging"}, "", nil,
			[]string{"the space is staging, from KIBANA_SPACE_ID", "set KIBANA_SPACE_ID to its id", "--space <id>"}},
		{"--space over KIBANA_SPACE_ID", map[string]string{"KIBANA_SPACE_ID": "prod"}, "", []string{"--space", "staging"},
			[]string{"the space is staging, from --space", "give its id with --space"}},
		{"a profile's space", nil, "profiles:\n  lab:\n    space: staging\n", []string{"--profile", "lab"},
			[]string{"the space is staging, from profile lab", "a2a-courier config set space <id> --profile lab", "--space <id>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sim)
			h.env["KIBANA_API_KEY"] = prodKey
			for k, v := range tc.env {
				h.env[k] = v
			}
			if tc.profile != "" {
				writeConfig(t, h, tc.profile, 0o600)
			}
			for _, json := range []bool{false, true} {
				args := append(append([]string{"discover"}, tc.args...), map[bool][]string{true: {"--json"}}[json]...)
				r := h.run(args...)
				r.expect(t, ExitAuth)
				hint := r.stderr
				if json {
					hint = decodeError(t, r.stdout).Hint
				} else {
					checkOneLineError(t, r, ExitAuth, "HTTP 403")
				}
				for _, w := range tc.want {
					if !strings.Contains(hint, w) {
						t.Errorf("%v: the hint does not say %q:\n%s", args, w, hint)
					}
				}
			}
		})
	}

	t.Run("a send refused, and its result", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: 403}}
		})
		h := newHarness(t, sim)
		r := h.run("send", "elastic-ai-agent", "hi", "--space", "default", "--json")
		r.expect(t, ExitAuth)
		d := decodeTask(t, r.stdout)
		if d.State != "rejected" || d.Error == nil || !strings.Contains(d.Error.Hint, "the space is default, from --space") {
			t.Fatalf("send: %s", r.stdout)
		}
		// Read later with another space configured: the task's own.
		h.env["KIBANA_SPACE_ID"] = "prod"
		for _, args := range [][]string{{"result", d.ContextID}, {"result", d.ContextID, "--json"}} {
			r = h.run(args...)
			r.expect(t, ExitAuth)
			if !strings.Contains(r.stdout+r.stderr, "the space is default, where task "+d.ContextID+" was sent") {
				t.Errorf("%v: stdout %s stderr %s", args, r.stdout, r.stderr)
			}
		}
	})

	t.Run("a task read in its own space", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "prod-agent", Name: "Prod", Space: "prod", RunTime: 10 * time.Millisecond})
		})
		h := newHarness(t, sim)
		h.env["KIBANA_SPACE_ID"] = "prod"
		d := decodeTask(t, h.run("send", "prod-agent", "in prod", "--json").stdout)
		delete(h.env, "KIBANA_SPACE_ID")
		sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 403}}})
		r := h.run("show", d.ContextID)
		r.expect(t, ExitAuth)
		if !strings.Contains(r.stderr, "the space is prod, where task "+d.ContextID+" was sent") || strings.Contains(r.stderr, "default one") {
			t.Errorf("stderr %s", r.stderr)
		}
	})
}

func decodeError(t *testing.T, stdout string) errorDoc {
	t.Helper()
	var doc struct{ Error *errorDoc }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Error == nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return *doc.Error
}

// TestDurationWithoutAUnit: a duration given as a bare number, in a flag,
// a variable, the config file or config set, is a usage error of one line
// whose hint suggests the number in seconds (an age, in days).
func TestDurationWithoutAUnit(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	for _, tc := range []struct {
		name   string
		env    map[string]string
		config string
		args   []string
		want   string // in the message
		hint   string
	}{
		{"send --timeout", nil, "", []string{"send", "elastic-ai-agent", "hi", "--timeout", "90"}, "--timeout", "did you mean 90s?"},
		{"send --poll-interval", nil, "", []string{"send", "elastic-ai-agent", "hi", "--poll-interval", "5"}, "--poll-interval", "did you mean 5s?"},
		{"send-async --max-wait", nil, "", []string{"send-async", "elastic-ai-agent", "hi", "--max-wait", "7200"}, "--max-wait", "did you mean 7200s?"},
		{"result --timeout=", nil, "", []string{"result", "0b5c9a70-2b1e-4d7e-9d3c-51c1f0a5e0aa", "--wait", "--timeout=1.5"}, "--timeout", "did you mean 1.5s?"},
		{"discover --timeout, not a number", nil, "", []string{"discover", "--timeout", "soon"}, "--timeout", "use a positive duration with a unit: ms, s, m or h"},
		{"A2A_COURIER_POLL_INTERVAL", map[string]string{"A2A_COURIER_POLL_INTERVAL": "90"}, "", []string{"send", "elastic-ai-agent", "hi"}, "A2A_COURIER_POLL_INTERVAL", "did you mean 90s?"},
		{"A2A_COURIER_SEND_TIMEOUT", map[string]string{"A2A_COURIER_SEND_TIMEOUT": "30"}, "", []string{"send", "elastic-ai-agent", "hi"}, "A2A_COURIER_SEND_TIMEOUT", "did you mean 30s?"},
		{"A2A_COURIER_WORKER_STALE_AFTER", map[string]string{"A2A_COURIER_WORKER_STALE_AFTER": "10"}, "", []string{"send-async", "elastic-ai-agent", "hi"}, "A2A_COURIER_WORKER_STALE_AFTER", "did you mean 10s?"},
		{"the config file", nil, "profiles:\n  default:\n    max_wait: 600\n", []string{"send", "elastic-ai-agent", "hi"}, "max_wait", "did you mean 600s?"},
		{"config set", nil, "", []string{"config", "set", "poll-interval", "20"}, "poll-interval", "did you mean 20s?"},
		{"prune --older-than", nil, "", []string{"prune", "--older-than", "30"}, "--older-than", "did you mean 30d?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sim)
			for k, v := range tc.env {
				h.env[k] = v
			}
			if tc.config != "" {
				writeConfig(t, h, tc.config, 0o600)
			} else {
				h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
			}
			r := h.run(tc.args...)
			checkOneLineError(t, r, ExitUsage, tc.want)
			if !strings.Contains(r.stderr, "\nhint: "+tc.hint) {
				t.Errorf("the hint does not say %q:\n%s", tc.hint, r.stderr)
			}
			if tc.args[0] == "send" || tc.args[0] == "send-async" {
				if n := sim.TotalRuns(); n != 0 {
					t.Errorf("%d runs", n)
				}
			}
			r = h.run(append(tc.args, "--json")...)
			r.expect(t, ExitUsage)
			if e := decodeError(t, r.stdout); !strings.HasPrefix(e.Hint, tc.hint) || !strings.Contains(e.Message, tc.want) {
				t.Errorf("%+v", e)
			}
		})
	}
}

// discover in a space with no agents says where the space came from and
// how to name another: from the variable, the flag or the default; in
// --json as the document's hint.
func TestDiscoverInAnEmptySpaceNamesWhereTheSpaceCameFrom(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	h.env["KIBANA_SPACE_ID"] = "nospace"
	r := h.run("discover")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "no agents in ") || !strings.Contains(r.stderr, "hint: ") ||
		!strings.Contains(r.stderr, "the space is nospace, from KIBANA_SPACE_ID: if the agents live in another, set KIBANA_SPACE_ID to its id, or give --space <id>") {
		t.Errorf("from the variable: %s", r.stderr)
	}
	r = h.run("discover", "--space", "other", "--json")
	r.expect(t, ExitOK)
	var doc struct {
		Agents []discovered
		Hint   string
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Agents == nil || len(doc.Agents) != 0 ||
		!strings.Contains(doc.Hint, "the space is other, from --space: if the agents live in another, give its id with --space") {
		t.Errorf("--json, from the flag: %v %s", err, r.stdout)
	}
	delete(h.env, "KIBANA_SPACE_ID")
	r = h.run("discover", "--json")
	if doc := r.stdout; !strings.Contains(doc, "elastic-ai-agent") || strings.Contains(doc, `"hint"`) {
		t.Errorf("a space with agents has a hint: %s", doc)
	}
}
