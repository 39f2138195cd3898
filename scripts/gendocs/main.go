// Command gendocs writes the command reference (Markdown) and the man pages
// from the command tree, so they never drift from --help:
//
//	go run ./scripts/gendocs
//
// A test (cmd/cli TestGeneratedDocsAreCurrent) fails when they are stale.
package main

import (
	"fmt"
	"os"

	"github.com/a2a-courier/a2a-courier/cmd/cli"
)

func main() {
	if err := cli.GenerateDocs("docs/reference", "docs/man"); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
