package shellcmd

import (
	"runtime"
	"strings"
)

// Shell is the shell a set-up hint is written for: a POSIX shell (sh,
// bash, zsh) on Unix, PowerShell on Windows, where `export` and `<` do not
// exist.
type Shell int

const (
	POSIX Shell = iota
	PowerShell
)

// ShellOf is the shell people use on the system goos (runtime.GOOS).
func ShellOf(goos string) Shell {
	if goos == "windows" {
		return PowerShell
	}
	return POSIX
}

// Native is this system's shell.
var Native = ShellOf(runtime.GOOS)

// EnvSet is the command that sets the environment variable name to value
// in the shell: `export NAME=value`, or `$env:NAME = "value"`. A value
// with a <placeholder> in it is written as it is.
func (s Shell) EnvSet(name, value string) string {
	if s == PowerShell {
		return "$env:" + name + ` = "` + strings.NewReplacer("`", "``", `"`, "`\"", "$", "`$").Replace(value) + `"`
	}
	if strings.Contains(value, "<") {
		return "export " + name + "=" + value
	}
	return "export " + name + "=" + Quote(value)
}

// FromFile is the command line that runs command with the file's content
// on its stdin: `command < file`, or `Get-Content file | command`.
func (s Shell) FromFile(command, file string) string {
	if s == PowerShell {
		return "Get-Content " + file + " | " + command
	}
	return command + " < " + file
}

// EnvSet is Native.EnvSet.
func EnvSet(name, value string) string { return Native.EnvSet(name, value) }

// FromFile is Native.FromFile.
func FromFile(command, file string) string { return Native.FromFile(command, file) }
