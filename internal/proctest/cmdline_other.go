//go:build !linux && !darwin && !windows

package proctest

import (
	"errors"
	"fmt"
	"runtime"
)

// CommandLine is not implemented on this system.
func CommandLine(pid int) (string, error) {
	return "", fmt.Errorf("the arguments of process %d: %w on %s", pid, errors.ErrUnsupported, runtime.GOOS)
}

// Environment is not implemented on this system.
func Environment(pid int) (string, error) {
	return "", fmt.Errorf("the environment of process %d: %w on %s", pid, errors.ErrUnsupported, runtime.GOOS)
}
