package proctest

import (
	"fmt"
	"os"
)

// CommandLine returns the process's arguments as the system keeps them,
// NUL-separated (/proc/<pid>/cmdline).
func CommandLine(pid int) (string, error) { return procFile(pid, "cmdline") }

// Environment returns the process's environment as the system keeps it,
// NUL-separated (/proc/<pid>/environ).
func Environment(pid int) (string, error) { return procFile(pid, "environ") }

func procFile(pid int, name string) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	return string(b), err
}
