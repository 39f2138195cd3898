// Command gendocs writes the command reference (Markdown) and the man pages
// from the command tree, so they never drift from --help:
//
//	go run ./scripts/gendocs
//
// A test (TestGeneratedDocsAreCurrent, here) fails when they are stale. The
// generator lives here rather than in cmd/cli so that cobra/doc and its
// Markdown and man-page packages are not in the binary, whose every start
// ran their initialisation (docs/performance.md).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/a2a-courier/a2a-courier/cmd/cli"
)

func main() {
	if err := generateDocs("docs/reference", "docs/man"); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// generateDocs writes the Markdown command reference to mdDir and the man
// pages to manDir, replacing what is there.
func generateDocs(mdDir, manDir string) error {
	for _, d := range []string{mdDir, manDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	root := cli.RootCommand()
	root.InitDefaultCompletionCmd()
	hideHelp(root)
	if err := doc.GenMarkdownTree(root, mdDir); err != nil {
		return err
	}
	// A fixed date keeps the pages identical from one generation to the next.
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return doc.GenManTree(root, &doc.GenManHeader{Title: "A2A-COURIER", Section: "1", Source: "a2a-courier", Manual: "a2a-courier manual", Date: &date}, manDir)
}

// hideHelp drops cobra's generated help command from the reference.
func hideHelp(c *cobra.Command) {
	c.InitDefaultHelpCmd()
	for _, sub := range c.Commands() {
		if sub.Name() == "help" {
			sub.Hidden = true
		}
	}
}
