// Command a2a-courier hands work to remote A2A agents and brings back the
// final reply. See `a2a-courier --help`.
//
// A release build (go build, go install) carries no simulator: demo and
// dev-server then say how to get one. go build -tags simulator builds them
// in (sim.go).
package main

import (
	"os"

	"github.com/a2a-courier/a2a-courier/cmd/cli"
)

func main() { os.Exit(cli.Main(builtinSimulator)) }
