//go:build simulator

package main

import "github.com/a2a-courier/a2a-courier/internal/simulator/agentbuilder"

// builtinSimulator serves demo and dev-server: this build has the Agent Builder
// simulator (client/agentbuildertest) in it.
var builtinSimulator = agentbuilder.Start
