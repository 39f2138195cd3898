package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

// A key file, a token file and a config file that holds a key are read
// while only their owner can read them, and refused once others can (a
// mode on Unix, the ACL on Windows), with the system's own words and the
// command that fixes it; the key is in no message.
func TestSecretFilesOthersCanReadAreRefused(t *testing.T) {
	const key = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw=="
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	keyFile := filepath.Join(dir, "prod.key")
	os.WriteFile(config, []byte("profiles:\n  prod:\n    kibana_url: https://kb.example.com\n    api_key: "+key+"\n"), 0o600)
	os.WriteFile(keyFile, []byte(key+"\n"), 0o600)
	for _, c := range []struct {
		name, path, what string
		read             func() error
	}{
		{"key file", keyFile, "API key file " + keyFile + " can be read by other users", func() error { _, err := readKeyFile(keyFile); return err }},
		{"token file", keyFile, "token file " + keyFile + " can be read by other users", func() error { _, err := ReadTokenFile(keyFile); return err }},
		{"config file", config, "config file " + config + " holds an API key (profile prod) but other users can read it",
			func() error { _, err := ReadFile(config); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := ownfiletest.Protect(c.path); err != nil {
				t.Fatal(err)
			}
			if err := c.read(); err != nil {
				t.Fatalf("a private file: %v", err)
			}
			if err := ownfiletest.Expose(c.path); err != nil {
				t.Fatal(err)
			}
			err := c.read()
			fi, _ := os.Stat(c.path)
			a := ownfile.File(c.path, fi)
			var ce *Error
			if !errors.As(err, &ce) || ce.Message != c.what+" ("+a.Detail+")" || ce.Hint != "run: "+a.Hint {
				t.Fatalf("%#v, want %q and the hint run: %s", err, c.what+" ("+a.Detail+")", a.Hint)
			}
			if strings.Contains(ce.Message+ce.Hint, key) {
				t.Error("the key is in the message")
			}
			if !strings.Contains(ce.Hint, c.path) {
				t.Errorf("the hint does not name the file: %s", ce.Hint)
			}
			ownfiletest.Protect(c.path)
		})
	}
}
