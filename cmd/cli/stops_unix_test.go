//go:build unix

package cli

// mcpStops are the ways TestMCPServerStopEndsItsCalls stops the server
// process: a SIGTERM, and its stdin closed.
var mcpStops = []string{"SIGTERM", "stdin closed"}
