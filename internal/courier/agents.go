package courier

import (
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
)

// SuggestAgent finds the agent someone most likely meant by a name that is
// not an agent id: an agent whose id or name is that name, letter case
// aside (`send Chat` for the agent named "Chat"). Several agents of that
// name: none is suggested.
func SuggestAgent(agents []client.Agent, name string) (client.Agent, bool) {
	var found []client.Agent
	for _, ag := range agents {
		if strings.EqualFold(ag.ID, name) {
			return ag, true
		}
		if strings.EqualFold(strings.TrimSpace(ag.Name), strings.TrimSpace(name)) {
			found = append(found, ag)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return client.Agent{}, false
}
