package courier

import (
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
)

// TestSuggestAgent: a name, letter case aside, or an id misspelt by a slip
// of the keyboard gets the agent meant; anything farther, or as near to two
// agents, gets none.
func TestSuggestAgent(t *testing.T) {
	agents := []client.Agent{
		{ID: "elastic-ai-agent", Name: "Elastic AI Agent"},
		{ID: "audit-agent", Name: "Audit"},
		{ID: "audit-agent-2", Name: "Audit 2"},
		{ID: "ops", Name: "Ops"},
		{ID: "sre-a", Name: "Twin"}, {ID: "sre-b", Name: "twin"},
	}
	for _, c := range []struct {
		name, want string
		byName     bool
	}{
		{"Elastic-AI-Agent", "elastic-ai-agent", false}, // case
		{"audit", "audit-agent", true},                  // its name
		{" Elastic AI agent ", "elastic-ai-agent", true},
		{"audti-agent", "audit-agent", false}, // two letters swapped
		{"audit-agen", "audit-agent", false},  // one missing
		{"elastic-ai-agnet", "elastic-ai-agent", false},
		{"elastc-ai-agnt", "elastic-ai-agent", false}, // two missing
		{"audit-agent-3", "audit-agent-2", false},     // one replaced; audit-agent is two away
		{"elastic-agent", "", false},                  // three missing: not a slip
		{"opz", "", false},                            // too short to guess at
		{"sre-c", "", false},                          // as near to sre-a as to sre-b
		{"twin", "", false},                           // two agents of that name
		{"nothing-like-it", "", false},
	} {
		ag, byName, ok := SuggestAgent(agents, c.name)
		if ok != (c.want != "") || ag.ID != c.want || byName != c.byName {
			t.Errorf("%q: %q %v (by name %v), want %q (by name %v)", c.name, ag.ID, ok, byName, c.want, c.byName)
		}
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"ca", "abc", 3}, {"kitten", "sitting", 3}, {"héllo", "hello", 1}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
