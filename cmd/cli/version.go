package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

func readBuildInfo() buildInfo {
	info := buildInfo{Version: versionString(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	return info
}

func newVersionCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build information",
		Example: `  a2a-courier version
  a2a-courier version --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			info := readBuildInfo()
			pr := app.printer()
			if pr.json {
				return pr.writeJSON(info)
			}
			s := fmt.Sprintf("a2a-courier %s (%s, %s)", info.Version, info.Go, info.Platform)
			switch {
			case info.Commit != "":
				s += fmt.Sprintf("\ncommit %s %s", info.Commit, info.CommitTime)
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
