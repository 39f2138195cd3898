package serve

import (
	"encoding/json"
	"strings"
)

// card builds the agent card: A2A 1.0 (supportedInterfaces: JSON-RPC 1.0,
// HTTP+JSON 1.0, JSON-RPC 0.3, all at the base URL) and, unless v1 only
// is asked for, A2A 0.3's top-level fields too (url, protocolVersion,
// preferredTransport, additionalInterfaces, security), as a2a-js's
// compatibility layer serves them. Streaming is offered; push
// notifications are not.
func card(o Options, base string, tokens, v1 bool) []byte {
	url := base + "/"
	skills := []map[string]any{}
	for _, sk := range o.Skills {
		skills = append(skills, map[string]any{"id": sk.ID, "name": sk.Name, "description": sk.Description, "tags": []string{}})
	}
	if len(skills) == 0 {
		skills = append(skills, map[string]any{"id": "exec", "name": o.Name, "description": o.Description, "tags": []string{"exec"}})
	}
	c := map[string]any{
		"name":        o.Name,
		"description": o.Description,
		"version":     nonEmpty(o.Version, "dev"),
		"supportedInterfaces": []map[string]any{
			{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
			{"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
			{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
		},
		"capabilities":       map[string]any{"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
		"defaultInputModes":  []string{"text/plain", "application/octet-stream"},
		"defaultOutputModes": []string{"text/plain"},
		"skills":             skills,
	}
	if tokens {
		c["securitySchemes"] = map[string]any{"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer"}}}
		c["securityRequirements"] = []map[string]any{{"schemes": map[string]any{"bearer": map[string]any{"list": []string{}}}}}
	}
	if !v1 {
		c["protocolVersion"] = "0.3.0"
		c["url"] = url
		c["preferredTransport"] = "JSONRPC"
		c["additionalInterfaces"] = []map[string]any{{"url": url, "transport": "JSONRPC"}, {"url": url, "transport": "HTTP+JSON"}}
		c["capabilities"].(map[string]any)["stateTransitionHistory"] = false
		if tokens {
			c["securitySchemes"] = map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}
			c["security"] = []map[string]any{{"bearer": []string{}}}
		}
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	return append(b, '\n')
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
