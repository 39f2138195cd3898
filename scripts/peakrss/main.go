//go:build linux

// Command peakrss runs a command and writes its wall time and peak resident
// set size to a file, for scripts/bench-show.sh. The figures come from the
// child's own resource usage (wait4), so no GNU time is needed and nothing
// is sampled.
//
//	peakrss OUTFILE command [args...]
//
// OUTFILE gets one line: "<wall seconds> <peak RSS KiB> <exit code>". The
// command's streams are passed through and its exit code is returned.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peakrss OUTFILE command [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(1)
	}
	var maxRSS int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSS = ru.Maxrss // KiB on Linux
	}
	code := cmd.ProcessState.ExitCode()
	line := fmt.Sprintf("%.4f %d %d\n", wall.Seconds(), maxRSS, code)
	if err := os.WriteFile(os.Args[1], []byte(line), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(1)
	}
	os.Exit(code)
}
