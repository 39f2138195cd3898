package proctest

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// CommandLine returns the process's arguments as the system keeps them
// (sysctl kern.procargs2: argc, the executable's path, then argv and the
// environment, each NUL-terminated).
func CommandLine(pid int) (string, error) {
	args, _, err := procArgs(pid)
	return args, err
}

// Environment returns the process's environment as the system keeps it
// (kern.procargs2, after argv).
func Environment(pid int) (string, error) {
	_, env, err := procArgs(pid)
	return env, err
}

func procArgs(pid int) (args, env string, err error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", "", err
	}
	if len(b) < 4 {
		return "", "", errors.New("kern.procargs2: too short")
	}
	argc := int(binary.LittleEndian.Uint32(b))
	rest := b[4:]
	// The executable's path, then NUL padding.
	i := 0
	for i < len(rest) && rest[i] != 0 {
		i++
	}
	for i < len(rest) && rest[i] == 0 {
		i++
	}
	rest = rest[i:]
	n := 0
	for i = 0; i < len(rest) && n < argc; i++ {
		if rest[i] == 0 {
			n++
		}
	}
	return string(rest[:i]), string(rest[i:]), nil
}
