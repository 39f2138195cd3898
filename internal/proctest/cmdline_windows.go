package proctest

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// CommandLine returns the process's command line as the system keeps it:
// RTL_USER_PROCESS_PARAMETERS.CommandLine in its PEB.
func CommandLine(pid int) (string, error) {
	return fromParams(pid, func(h windows.Handle, p *windows.RTL_USER_PROCESS_PARAMETERS) ([]uint16, error) {
		return readUTF16(h, uintptr(unsafe.Pointer(p.CommandLine.Buffer)), int(p.CommandLine.Length)/2)
	})
}

// Environment returns the process's environment block as the system keeps
// it (its variables NUL-separated): RTL_USER_PROCESS_PARAMETERS.Environment
// in its PEB, EnvironmentSize bytes long (where the system fills that in;
// else read up to the block's closing double NUL, within 1 MiB).
func Environment(pid int) (string, error) {
	return fromParams(pid, func(h windows.Handle, p *windows.RTL_USER_PROCESS_PARAMETERS) ([]uint16, error) {
		if p.EnvironmentSize > 0 {
			return readUTF16(h, uintptr(p.Environment), int(p.EnvironmentSize)/2)
		}
		var out []uint16
		for off := 0; off < 1<<20; off += 4096 {
			chunk, err := readUTF16(h, uintptr(p.Environment)+uintptr(off), 2048)
			if err != nil && len(out) == 0 {
				return nil, err
			}
			out = append(out, chunk...)
			for i := 1; i < len(out); i++ {
				if out[i] == 0 && out[i-1] == 0 {
					return out[:i], nil
				}
			}
			if err != nil {
				break
			}
		}
		return out, nil
	})
}

func fromParams(pid int, read func(windows.Handle, *windows.RTL_USER_PROCESS_PARAMETERS) ([]uint16, error)) (string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ, false, uint32(pid))
	if err != nil {
		return "", fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var pbi windows.PROCESS_BASIC_INFORMATION
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&pbi), uint32(unsafe.Sizeof(pbi)), nil); err != nil {
		return "", fmt.Errorf("process %d: %w", pid, err)
	}
	var peb windows.PEB
	if err := readMem(h, uintptr(unsafe.Pointer(pbi.PebBaseAddress)), unsafe.Pointer(&peb), unsafe.Sizeof(peb)); err != nil {
		return "", fmt.Errorf("the PEB of process %d: %w", pid, err)
	}
	if peb.ProcessParameters == nil {
		return "", errors.New("no process parameters")
	}
	var params windows.RTL_USER_PROCESS_PARAMETERS
	if err := readMem(h, uintptr(unsafe.Pointer(peb.ProcessParameters)), unsafe.Pointer(&params), unsafe.Sizeof(params)); err != nil {
		return "", fmt.Errorf("the parameters of process %d: %w", pid, err)
	}
	u, err := read(h, &params)
	if err != nil {
		return "", err
	}
	return string(utf16.Decode(u)), nil
}

func readMem(h windows.Handle, addr uintptr, dst unsafe.Pointer, size uintptr) error {
	var n uintptr
	if err := windows.ReadProcessMemory(h, addr, (*byte)(dst), size, &n); err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("read %d of %d bytes", n, size)
	}
	return nil
}

func readUTF16(h windows.Handle, addr uintptr, n int) ([]uint16, error) {
	if n <= 0 || addr == 0 {
		return nil, nil
	}
	buf := make([]uint16, n)
	if err := readMem(h, addr, unsafe.Pointer(&buf[0]), uintptr(n)*2); err != nil {
		return nil, err
	}
	return buf, nil
}
