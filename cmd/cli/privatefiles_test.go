package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// writePrivate writes a test's config, key, token or other file private
// to the user as a2a-courier makes its own (mode 0600 on Unix, an
// owner-only DACL on Windows, which has no modes), so that the privacy
// checks pass it on every system.
func writePrivate(path string, data []byte) error {
	f, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// privacyFix is the command that makes the file at path private, as the
// privacy check prints it: "chmod 600 <path>" on Unix, an icacls command
// on Windows.
func privacyFix(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	a := ownfile.File(path, fi)
	if !a.Open {
		t.Fatalf("%s is private: no fix to print", path)
	}
	return a.Hint
}

// A key saved by Notepad or PowerShell's `Out-File -Encoding utf8` starts
// with a UTF-8 byte-order mark: it is dropped (stored, it made every call
// a 401). A key in UTF-16 (PowerShell 5.1's `>`) is refused with the
// encoding named and how to save it, from stdin and from a key file.
func TestKeysInTheEncodingsEditorsWrite(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, nil)
	h.env["A2A_COURIER_CONFIG_DIR"] = filepath.Join(t.TempDir(), "cfg")
	h.run("config", "set", "kibana-url", sim.URL).expect(t, ExitOK)
	h.stdin = "\ufeff" + testKey + "\r\n"
	h.run("config", "set", "api-key").expect(t, ExitOK)
	h.stdin = ""
	h.run("discover").expect(t, ExitOK)

	utf16 := func(s string, bom bool) string {
		var b []byte
		if bom {
			b = append(b, 0xFF, 0xFE)
		}
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return string(b)
	}
	for _, bom := range []bool{true, false} {
		h.stdin = utf16(testKey+"\r\n", bom)
		r := h.run("config", "set", "api-key")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, "UTF-16") || !strings.Contains(r.stderr, "Set-Content -Encoding ascii") {
			t.Errorf("UTF-16 on stdin (BOM %v): %q", bom, r.stderr)
		}
	}
	h.stdin = ""
	h.run("discover").expect(t, ExitOK) // the stored key is unchanged

	keyFile := filepath.Join(t.TempDir(), "key")
	writePrivate(keyFile, []byte("\ufeff"+testKey+"\n"))
	h.run("discover", "--api-key-file", keyFile).expect(t, ExitOK)
	writePrivate(keyFile, []byte(utf16(testKey, true)))
	r := h.run("discover", "--api-key-file", keyFile)
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "UTF-16 LE") {
		t.Errorf("UTF-16 key file: %q", r.stderr)
	}
}
