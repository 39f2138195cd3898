package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/buildinfo"
)

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build information",
		Example: `  a2a-courier version
  a2a-courier version --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			info := buildinfo.Read(Version, Commit)
			pr := app.printer()
			if pr.json {
				return pr.writeJSON(info)
			}
			s := fmt.Sprintf("a2a-courier %s (%s, %s)", info.Version, info.Go, info.Platform)
			switch {
			case info.Commit != "":
				s += strings.TrimRight(fmt.Sprintf("\ncommit %s %s", info.Commit, info.CommitTime), " ")
				if info.Modified {
					s += " (modified)"
				}
			case info.Version == "dev":
				s += "\nno commit recorded: built with -buildvcs=false, from a Git worktree or outside a Git checkout"
			}
			pr.payload(s)
			return nil
		},
	}
}
