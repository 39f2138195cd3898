package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/store"
)

func classify(err error) Problem {
	var ce *config.Error
	if errors.As(err, &ce) {
		return Problem{Message: ce.Message, Hint: ce.Hint, Exit: exitUsage}
	}
	return Problem{Message: err.Error(), Exit: exitUnexpected}
}

// The config file check passes a private file, warns about one others can
// read that holds no key, and fails one that holds a key; each in the
// system's terms (its mode on Unix, its ACL on Windows) with the command
// that fixes it.
func TestConfigFileCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	e := &Env{ConfigPath: path, Classify: classify}
	access := func() ownfile.Access { fi, _ := os.Stat(path); return ownfile.File(path, fi) }
	os.WriteFile(path, []byte("profiles:\n  lab:\n    kibana_url: https://kb.example.com\n"), 0o600)
	if err := ownfiletest.Protect(path); err != nil {
		t.Fatal(err)
	}
	if c := e.configFile(); c.Status != Pass || c.Detail != fmt.Sprintf("%s (%s)", path, access().Detail) {
		t.Errorf("private: %+v", c)
	}
	if err := ownfiletest.Expose(path); err != nil {
		t.Fatal(err)
	}
	a := access()
	if c := e.configFile(); c.Status != Warn || c.Detail != fmt.Sprintf("%s is readable by others (%s); it holds no key", path, a.Detail) ||
		c.Hint != a.Hint || !strings.Contains(c.Hint, path) {
		t.Errorf("readable, no key: %+v", c)
	}
	os.WriteFile(path, []byte("profiles:\n  lab:\n    kibana_url: https://kb.example.com\n    api_key: c2VjcmV0OmtleQ==\n"), 0o600)
	if err := ownfiletest.Expose(path); err != nil {
		t.Fatal(err)
	}
	c := e.configFile()
	if c.Status != Fail || c.Exit != exitUsage || c.Hint != "run: "+access().Hint || strings.Contains(c.Detail+c.Hint, "c2VjcmV0OmtleQ==") {
		t.Errorf("readable, with a key: %+v", c)
	}
}

// The state directory check passes a private directory and fails one
// others can get at (made so after the store opened it, which makes it
// private), naming who on Windows, with the command that fixes it.
func TestStateDirCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Store: func() (*store.Store, error) { return st, nil }, Classify: classify}
	c := e.stateDir()
	fi, _ := os.Stat(dir)
	if want := fmt.Sprintf("%s (%s, writable, 0 task records)", dir, ownfile.Dir(dir, fi).Detail); c.Status != Pass || c.Detail != want {
		t.Errorf("private: %+v, want %s", c, want)
	}
	if err := ownfiletest.Expose(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(dir)
	a := ownfile.Dir(dir, fi)
	c = e.stateDir()
	if c.Status != Fail || c.Detail != dir+" is not private"+a.Who || c.Hint != a.Hint || c.Exit != exitUsage || !strings.Contains(c.Hint, dir) {
		t.Errorf("open to others: %+v, want the hint %s", c, a.Hint)
	}
}
