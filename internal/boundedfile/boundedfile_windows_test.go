package boundedfile

import (
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// Windows' FIFO is a named pipe (\\.\pipe\...): read where a file is
// named, it is refused at once, not waited on.
func TestReadRefusesANamedPipe(t *testing.T) {
	name := fmt.Sprintf(`\\.\pipe\a2a-courier-boundedfile-%d`, os.Getpid())
	p, _ := windows.UTF16PtrFromString(name)
	h, err := windows.CreateNamedPipe(p, windows.PIPE_ACCESS_DUPLEX, windows.PIPE_TYPE_BYTE|windows.PIPE_WAIT, 4, 512, 512, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	done := make(chan error, 1)
	go func() { _, _, err := Read(name, 10); done <- err }()
	select {
	case err := <-done:
		if want := name + " is a named pipe (FIFO), not a regular file"; err == nil || err.Error() != want {
			t.Errorf("%v, want %s", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read waited on a named pipe")
	}
}
