package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/fifotest"
	"github.com/a2a-courier/a2a-courier/store"
)

// runWithin runs a command as its own process and fails the test if it
// has not ended within d: what is checked is that it does not hang.
func (p *proc) runWithin(d time.Duration, args ...string) result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := p.cmd(ctx, "", args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ctx.Err() != nil {
		p.t.Fatalf("%v did not end within %s (stderr %q)", args, d, errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// badFile puts something other than a small regular file at path: a FIFO
// nobody writes to, /dev/zero, a directory, or a file over max bytes.
func badFile(t *testing.T, kind, path string, max int) {
	t.Helper()
	var err error
	switch kind {
	case "fifo":
		err = fifotest.Make(path)
	case "dev-zero":
		err = os.Symlink("/dev/zero", path)
	case "directory":
		err = os.Mkdir(path, 0o700)
	case "over the cap":
		err = writePrivate(path, bytes.Repeat([]byte("#\n"), max)) // twice the cap
	default:
		t.Fatalf("kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Files named by the user or the config file are read only when they are
// regular files under a cap: a FIFO, /dev/zero, a directory or a file too
// large is refused at once (exit 2) with a one-line error and a hint. On
// main, a FIFO as config.yaml hung discover for minutes, deaf to SIGTERM,
// and /dev/zero was read until the kernel killed the process.
func TestFilesReadByPathAreBounded(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	kinds := []struct {
		kind string
		what func(path string) string
	}{
		{"fifo", func(p string) string { return p + " is a named pipe (FIFO), not a regular file" }},
		{"dev-zero", func(p string) string { return p + " is a character device, not a regular file" }},
		{"directory", func(p string) string { return p + " is a directory, not a regular file" }},
		{"over the cap", nil},
	}
	for _, k := range kinds {
		t.Run("config file/"+k.kind, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, sim)
			dir := t.TempDir()
			p.env["A2A_COURIER_CONFIG_DIR"] = dir
			path := filepath.Join(dir, "config.yaml")
			badFile(t, k.kind, path, config.MaxFileBytes)
			msg := "config file " + path + " is 2 MiB, over the 1 MiB limit"
			if k.what != nil {
				msg = "config file " + k.what(path)
			}
			r := p.runWithin(10*time.Second, "discover")
			r.expect(t, ExitUsage)
			wantStderr := "a2a-courier: " + msg + "\nhint: the config file is a regular file of a few KB (a symlink to one is fine): " +
				"move this one away, or point A2A_COURIER_CONFIG_DIR at another directory\n"
			if r.stderr != wantStderr || r.stdout != "" {
				t.Errorf("stdout %q\nstderr %q\nwant   %q", r.stdout, r.stderr, wantStderr)
			}
			// config set reads it too, and leaves it alone.
			r = p.runWithin(10*time.Second, "config", "set", "space", "x")
			r.expect(t, ExitUsage)
			if !strings.HasPrefix(r.stderr, "a2a-courier: "+msg+"\n") {
				t.Errorf("config set: stderr %q", r.stderr)
			}
		})
		t.Run("API key file/"+k.kind, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, sim)
			path := filepath.Join(t.TempDir(), "key")
			badFile(t, k.kind, path, config.MaxSecretFileBytes)
			msg := "API key file " + path + " is 128 KiB, over the 64 KiB limit"
			if k.what != nil {
				msg = "API key file " + k.what(path)
			}
			r := p.runWithin(10*time.Second, "discover", "--api-key-file", path)
			r.expect(t, ExitUsage)
			wantStderr := "a2a-courier: " + msg + "\nhint: keep it in a regular file, mode 0600: the API key file holds the API key's encoded value on one line\n"
			if r.stderr != wantStderr {
				t.Errorf("stderr %q\nwant   %q", r.stderr, wantStderr)
			}
		})
		t.Run("token file/"+k.kind, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "token")
			badFile(t, k.kind, path, config.MaxSecretFileBytes)
			msg := "token file " + path + " is 128 KiB, over the 64 KiB limit"
			if k.what != nil {
				msg = "token file " + k.what(path)
			}
			done := make(chan error, 1)
			go func() { _, err := config.ReadTokenFile(path); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("config.ReadTokenFile did not return within 10s")
			}
			ce := classify(err)
			if ce.exit != ExitUsage || ce.message != msg || ce.hint.String() != "keep it in a regular file, mode 0600: the token file holds the token on one line" {
				t.Errorf("exit %d, %q, hint %q; want %q", ce.exit, ce.message, ce.hint, msg)
			}
		})
		t.Run("CA bundle/"+k.kind, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, sim)
			path := filepath.Join(t.TempDir(), "ca.pem")
			badFile(t, k.kind, path, 8<<20)
			p.env["A2A_COURIER_CA_CERT"] = path
			msg := "read CA bundle: " + path + " is 16 MiB, over the 8 MiB limit"
			if k.what != nil {
				msg = "read CA bundle: " + k.what(path)
			}
			r := p.runWithin(10*time.Second, "discover")
			r.expect(t, ExitUsage)
			wantStderr := "a2a-courier: " + msg + "\nhint: A2A_COURIER_CA_CERT must name a PEM file of CA certificates\n"
			if r.stderr != wantStderr {
				t.Errorf("stderr %q\nwant   %q", r.stderr, wantStderr)
			}
		})
	}
	t.Run("a symlink to a regular file is read", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		dir := t.TempDir()
		p.env["A2A_COURIER_CONFIG_DIR"] = dir
		real := filepath.Join(t.TempDir(), "real.yaml")
		writePrivate(real, []byte("profiles:\n  default:\n    space: default\n"))
		os.Symlink(real, filepath.Join(dir, "config.yaml"))
		keyFile := filepath.Join(t.TempDir(), "key")
		writePrivate(keyFile, []byte(testKey+"\n"))
		keyLink := filepath.Join(t.TempDir(), "key-link")
		os.Symlink(keyFile, keyLink)
		r := p.runWithin(10*time.Second, "discover", "--api-key-file", keyLink)
		r.expect(t, ExitOK)
		if !strings.Contains(r.stdout, "elastic-ai-agent") {
			t.Errorf("stdout %q", r.stdout)
		}
	})
}

// A state directory the system will not let us write is a problem of the
// set-up: exit 2, one line naming the directory, and a hint that says what
// to do, for every refusal no retry mends. On main, a full disk gave a bare
// `write …: no space left on device`, exit 1.
func TestStateDirThatCannotBeWrittenIsAConfigurationError(t *testing.T) {
	t.Parallel()
	// The system's codes and hints (statedir_unix_test.go,
	// statedir_windows_test.go).
	dir, cases := stateDirCases()
	path := filepath.Join(dir, "tasks", ".ctx.json.tmp-1")
	for _, c := range cases {
		err := fmt.Errorf("task ctx not sent: cannot record that it is being sent: %w",
			fmt.Errorf("write task record ctx: %w", &store.UnwritableError{Dir: dir, Err: &os.PathError{Op: "open", Path: path, Err: c.errno}}))
		ce := classify(err)
		want := "task ctx not sent: cannot record that it is being sent: write task record ctx: cannot write to the state directory " +
			dir + ": open " + path + ": " + c.errno.Error()
		if ce.exit != ExitUsage || ce.code != "state_dir" || ce.message != want || ce.hint.String() != c.hint {
			t.Errorf("%v: exit %d code %s\n%q\nwant %q\nhint %q", c.errno, ce.exit, ce.code, ce.message, want, ce.hint)
		}
	}
	// Another error of the file system stays unexpected.
	if ce := classify(&os.PathError{Op: "write", Path: path, Err: otherFSError}); ce.exit != ExitUnexpected {
		t.Errorf("%v: exit %d", otherFSError, ce.exit)
	}
}

// The same with real refusals, as root too: a file-size limit of 0
// (ulimit -f 0: every write to a file is EFBIG) and an immutable tasks or
// logs directory (chattr +i; chmod 0500 when not root).
func TestSendAsyncIntoAStateDirThatCannotBeWritten(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	t.Run("no file may grow", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, sim)
		state := p.env["A2A_COURIER_STATE_DIR"]
		c := exec.Command("sh", "-c", `ulimit -f 0 && exec "$0" send-async elastic-ai-agent "hello"`, os.Args[0])
		for k, v := range p.env {
			c.Env = append(c.Env, k+"="+v)
		}
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage {
			t.Fatalf("%v\nstderr %s", err, errb.String())
		}
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "a2a-courier: cannot write to the state directory "+state+": ") ||
			!strings.HasSuffix(lines[0], ": file too large") ||
			lines[1] != "hint: free space on the disk that holds it (df -h "+state+"), or point A2A_COURIER_STATE_DIR at a directory on a disk with room" {
			t.Errorf("stderr %q", errb.String())
		}
		if out.String() != "" || sim.TotalRuns() != 0 {
			t.Errorf("stdout %q, %d runs", out.String(), sim.TotalRuns())
		}
	})
	for _, sub := range []string{"tasks", "logs"} {
		t.Run("immutable "+sub, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, sim)
			defer p.waitWorkersExit()
			st := p.store()
			d := filepath.Join(st.Dir(), sub)
			if os.Geteuid() == 0 {
				if out, err := exec.Command("chattr", "+i", d).CombinedOutput(); err != nil {
					t.Skipf("chattr +i is not available here: %v %s", err, out)
				}
				t.Cleanup(func() { exec.Command("chattr", "-i", d).Run() })
			} else {
				os.Chmod(d, 0o500)
				t.Cleanup(func() { os.Chmod(d, 0o700) })
			}
			r := p.runWithin(30*time.Second, "send-async", "elastic-ai-agent", "hello")
			r.expect(t, ExitUsage)
			lines := strings.Split(strings.TrimSuffix(afterStarted(r.stderr), "\n"), "\n")
			prefix := "a2a-courier: cannot write to the state directory " + st.Dir() + ": open " + d + "/"
			if sub == "logs" {
				// The record is written; the worker could not be given its log.
				prefix = "a2a-courier: task "
				if !strings.Contains(lines[0], " is recorded but the background worker did not start: open worker log: cannot write to the state directory "+st.Dir()+": open "+d+"/worker.log: ") {
					t.Errorf("stderr %q", r.stderr)
				}
			}
			if len(lines) != 2 || !strings.HasPrefix(lines[0], prefix) ||
				!strings.HasPrefix(lines[1], "hint: check that this user owns it and may write in it (ls -ld "+st.Dir()+")") {
				t.Errorf("stderr %q", r.stderr)
			}
			if sim.TotalRuns() != 0 {
				t.Errorf("%d runs", sim.TotalRuns())
			}
		})
	}
}
