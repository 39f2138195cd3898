package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/buildinfo"
)

// versionOptions are the version command's dependencies and flags.
type versionOptions struct {
	Printer func() *printer
	// Info reads the build information.
	Info func() buildinfo.Info
}

// newCmdVersion builds version; runF, when not nil, runs in place of
// versionRun (a test's, which gets the options as parsed).
func newCmdVersion(f *Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{Printer: f.Printer, Info: func() buildinfo.Info { return buildinfo.Read(Version, Commit) }}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build information",
		Example: `  a2a-courier version
  a2a-courier version --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *versionOptions) error {
	info := opts.Info()
	pr := opts.Printer()
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
}
