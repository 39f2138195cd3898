//go:build !simulator

package main

import "github.com/a2a-courier/a2a-courier/internal/simulator"

// builtinSimulator is none in a release build: the simulator is test code, and
// the binary users install does not carry it.
var builtinSimulator simulator.Start
