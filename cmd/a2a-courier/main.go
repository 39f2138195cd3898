// Command a2a-courier hands work to remote A2A agents and brings back the
// final reply. See `a2a-courier --help`.
package main

import (
	"os"

	"github.com/a2a-courier/a2a-courier/cmd/cli"
)

func main() { os.Exit(cli.Main()) }
