package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
	"github.com/a2a-courier/a2a-courier/skill"
)

// skillInstallOptions are skill install's dependencies and flags.
type skillInstallOptions struct {
	Process *Process
	Printer func() *printer

	dir    string
	target string
	dryRun bool
}

// skillShowOptions are skill show's dependencies.
type skillShowOptions struct {
	Process *Process
	Printer func() *printer
}

// newCmdSkill builds skill, the group of skill install and skill show.
func newCmdSkill(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "Install or print the skill (SKILL.md) that teaches an assistant to use a2a-courier",
		Example: `  a2a-courier skill install --target claude
  a2a-courier skill show`,
		Args: exactArgs(0, "a subcommand: install or show"),
		RunE: f.GroupRun,
	}
	cmd.AddCommand(newCmdSkillInstall(f, nil), newCmdSkillShow(f, nil))
	return cmd
}

// newCmdSkillInstall builds skill install; runF, when not nil, runs in
// place of skillInstallRun (a test's, which gets the options as parsed).
func newCmdSkillInstall(f *Factory, runF func(*skillInstallOptions) error) *cobra.Command {
	opts := &skillInstallOptions{Process: f.Process, Printer: f.Printer}
	install := &cobra.Command{
		Use:   "install",
		Short: "Write <dir>/a2a-courier/SKILL.md where an assistant looks for skills",
		Long: `Write the skill to <dir>/a2a-courier/SKILL.md. --target picks an assistant's
usual folder: claude (~/.claude/skills), workbuddy (~/.workbuddy/skills) or
agents (./.agents/skills). It is idempotent: an up-to-date file is left alone.
The skill is the SKILL.md of the repository, embedded in the binary.`,
		Example: `  a2a-courier skill install --target claude
  a2a-courier skill install --dir ./skills --dry-run`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return skillInstallRun(opts)
		},
	}
	install.Flags().StringVar(&opts.dir, "dir", "", "skills folder to install into")
	install.Flags().StringVar(&opts.target, "target", "", "an assistant's usual skills folder: claude, workbuddy or agents")
	install.Flags().BoolVar(&opts.dryRun, "dry-run", false, "say what would be written, write nothing")
	return install
}

// newCmdSkillShow builds skill show; runF, when not nil, runs in place of
// skillShowRun.
func newCmdSkillShow(f *Factory, runF func(*skillShowOptions) error) *cobra.Command {
	opts := &skillShowOptions{Process: f.Process, Printer: f.Printer}
	return &cobra.Command{
		Use:   "show",
		Short: "Print the skill (SKILL.md) on stdout",
		Long: `Print SKILL.md on stdout, as skill install writes it: naming this
binary's full path, for an assistant whose PATH lacks it. --json prints
{"name","description","compatibility","body","content"}: the front
matter's fields, the text after it, and the whole file.`,
		Example: "  a2a-courier skill show > SKILL.md\n  a2a-courier skill show --json",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return skillShowRun(opts)
		},
	}
}

func skillShowRun(opts *skillShowOptions) error {
	exe, _ := binaryPath(opts.Process)
	if pr := opts.Printer(); pr.json {
		d, err := skill.Parse(exe)
		if err != nil {
			return err
		}
		return pr.writeJSON(d)
	}
	_, err := opts.Process.Stdout.Write(skill.Content(exe))
	return err
}

func skillInstallRun(opts *skillInstallOptions) error {
	dir := opts.dir
	switch {
	case opts.dir != "" && opts.target != "":
		return usageErr("give one of them", "--dir and --target exclude each other")
	case opts.dir == "" && opts.target == "":
		return usageErr("e.g. --target claude, or --dir ~/.claude/skills", "skill install needs --dir or --target")
	case opts.target != "":
		cwd, _ := os.Getwd()
		d, err := skill.TargetDir(opts.target, userdirs.Host(opts.Process.getenv), cwd)
		switch _, known := skill.Targets[opts.target]; {
		case err != nil && !known:
			return usageErr("targets: claude, workbuddy, agents", "%v", err)
		case err != nil:
			return configErr("give the skills folder with --dir", "cannot find the home folder: %v", err)
		}
		dir = d
	}
	exe, err := binaryPath(opts.Process)
	if err != nil {
		return &cliError{exit: ExitUnexpected, code: "unexpected", message: "cannot find this binary's path: " + err.Error()}
	}
	path, action, err := skill.Install(dir, exe, opts.dryRun)
	if re := (*skill.ReplaceError)(nil); errors.As(err, &re) {
		return configErr("an assistant that is running may hold the file open: close it (Claude Code, WorkBuddy) and run skill install again", "cannot install the skill: %s: %v", path, err)
	}
	if err != nil {
		if ce := config.UnreadableFileError("the installed skill", err, "move it away, or choose another folder with --dir"); ce != nil {
			return ce
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return configErr("choose a folder you can write with --dir", "cannot install the skill: %v", err)
		}
		return err
	}
	pr := opts.Printer()
	var warnings []string
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		warnings = append(warnings, exe+" is a temporary build of go run, gone when it exits: install the binary (go install) and run skill install with it")
	}
	if pr.json {
		return pr.writeJSON(map[string]any{"path": path, "action": action, "dry_run": opts.dryRun, "binary": exe, "warnings": append([]string{}, warnings...)})
	}
	for _, w := range warnings {
		pr.warn("%s", w)
	}
	if opts.dryRun {
		pr.payload("would be " + action + ": " + path)
		return nil
	}
	pr.payload(action + ": " + path)
	return nil
}
