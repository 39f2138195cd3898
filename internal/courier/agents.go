package courier

import (
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
)

// SuggestAgent finds the agent someone most likely meant by a name that is
// not an agent id: an agent whose id or name is that name, letter case
// aside (`send Chat` for the agent named "Chat": byName); else the one
// agent whose id is that name misspelt (`send audti-agent` for
// "audit-agent": at most a letter in four wrong, missing, extra or two
// swapped, at most two in all). Several agents of that name, or equally
// near: none is suggested.
func SuggestAgent(agents []client.Agent, name string) (ag client.Agent, byName, ok bool) {
	var found []client.Agent
	for _, ag := range agents {
		if strings.EqualFold(ag.ID, name) {
			return ag, false, true
		}
		if strings.EqualFold(strings.TrimSpace(ag.Name), strings.TrimSpace(name)) {
			found = append(found, ag)
		}
	}
	switch len(found) {
	case 0:
		ag, ok = nearestAgent(agents, strings.ToLower(strings.TrimSpace(name)))
		return ag, false, ok
	case 1:
		return found[0], true, true
	}
	return client.Agent{}, false, false
}

// nearestAgent is the one agent whose id is nearest to name, if it is near
// enough to be a slip of the keyboard.
func nearestAgent(agents []client.Agent, name string) (client.Agent, bool) {
	limit := min(2, len([]rune(name))/4)
	best, ties, nearest := client.Agent{}, 0, limit+1
	for _, ag := range agents {
		switch d := editDistance(strings.ToLower(ag.ID), name); {
		case d > limit:
		case d < nearest:
			best, ties, nearest = ag, 1, d
		case d == nearest:
			ties++
		}
	}
	if ties != 1 {
		return client.Agent{}, false
	}
	return best, true
}

// editDistance is the optimal string alignment distance between a and b:
// the fewest letters inserted, deleted, replaced, or swapped with the next
// one, that make one the other.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// rows[i%3][j] is the distance between x[:i] and y[:j]; the rows of
	// i-1 and i-2 are all a swap needs.
	var rows [3][]int
	for i := range rows {
		rows[i] = make([]int, len(y)+1)
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur, prev := rows[i%3], rows[(i-1)%3]
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], rows[(i-2)%3][j-2]+1)
			}
		}
	}
	return rows[len(x)%3][len(y)]
}
