// Command release builds the release binaries of a2a-courier: static
// (CGO_ENABLED=0), stamped with the version and the commit, for linux,
// darwin and windows on amd64 and arm64, into dist/, with a SHA256SUMS file
// that sha256sum -c and shasum -a 256 -c check:
//
//	go run ./scripts/release                      # version dev-<commit>, every target
//	go run ./scripts/release -version v0.4.0      # a release
//	go run ./scripts/release -targets linux/amd64,windows/amd64 -out /tmp/dist
//
// Each binary is one file, named a2a-courier_<version>_<os>_<arch> (.exe on
// Windows): what a user downloading by hand wants is the program itself,
// to check against SHA256SUMS and put on PATH, with nothing to unpack. The
// builds are reproducible (-trimpath, the same toolchain and commit give the
// same bytes), so anyone can rebuild a published binary and compare.
//
// It refuses a tree with uncommitted changes, whose binaries no commit
// describes, unless -allow-dirty (the version then ends in -dirty).
//
// A Go program rather than a goreleaser configuration: what a release needs
// is six go build runs and a checksum file, which the toolchain does
// without a tool of its own to install, pin and trust; and it runs the
// same on Linux, macOS and Windows.
package main

import (
	"bytes"
	"crypto/sha256"
	"debug/macho"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Targets are the platforms released, in the order they are built.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// cliPkg is the package whose Version and Commit the linker sets.
const cliPkg = "github.com/a2a-courier/a2a-courier/cmd/cli"

// SumsFile is the checksum file's name.
const SumsFile = "SHA256SUMS"

func main() {
	version := flag.String("version", "", "the version to stamp (default: the tag on HEAD, else dev-<12 hex of the commit>)")
	out := flag.String("out", "dist", "the folder to write the binaries and "+SumsFile+" into")
	targets := flag.String("targets", strings.Join(Targets, ","), "the os/arch pairs to build, comma-separated")
	allowDirty := flag.Bool("allow-dirty", false, "build a tree with uncommitted changes (the version ends in -dirty)")
	flag.Parse()
	if err := run(*version, *out, strings.Split(*targets, ","), *allowDirty, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(version, out string, targets []string, allowDirty bool, w io.Writer) error {
	for _, t := range targets {
		if !known(t) {
			return fmt.Errorf("unknown target %q: use %s", t, strings.Join(Targets, ", "))
		}
	}
	commit, dirty, err := source()
	if err != nil {
		return err
	}
	if dirty && !allowDirty {
		return errors.New("the tree has uncommitted changes: commit them, or pass -allow-dirty for a build no commit describes")
	}
	if version == "" {
		version = defaultVersion(commit, tagOf(commit), dirty)
	}
	if err := checkVersion(version); err != nil {
		return err
	}
	if err := clean(out); err != nil {
		return err
	}
	var names []string
	for _, t := range targets {
		name := Name(version, t)
		fmt.Fprintf(w, "building %s\n", name)
		if err := build(t, filepath.Join(out, name), version, commit); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		names = append(names, name)
	}
	sums, err := Sums(out, names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, SumsFile), sums, 0o644); err != nil {
		return err
	}
	return list(w, out, names, version, commit)
}

func known(target string) bool {
	for _, t := range Targets {
		if t == target {
			return true
		}
	}
	return false
}

// Name is a binary's file name: a2a-courier_<version>_<os>_<arch>, with
// .exe for Windows.
func Name(version, target string) string {
	goos, goarch, _ := strings.Cut(target, "/")
	name := "a2a-courier_" + version + "_" + goos + "_" + goarch
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// versionPattern: a version is one word of a file name and a URL.
var versionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)

func checkVersion(v string) error {
	if !versionPattern.MatchString(v) || len(v) > 64 {
		return fmt.Errorf("version %q: use letters, digits, '.', '+' and '-' (v1.2.3)", v)
	}
	return nil
}

// defaultVersion is the tag on the commit, else dev-<12 hex>, as
// internal/buildinfo names a build of a checkout; -dirty when the tree has
// changes.
func defaultVersion(commit, tag string, dirty bool) string {
	v := tag
	if v == "" {
		v = "dev-" + commit[:min(12, len(commit))]
	}
	if dirty {
		v += "-dirty"
	}
	return v
}

// source is the commit of HEAD and whether the tree has uncommitted
// changes.
func source() (commit string, dirty bool, err error) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, fmt.Errorf("git rev-parse HEAD: %w (run it in a Git checkout of a2a-courier)", err)
	}
	status, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		return "", false, fmt.Errorf("git status: %w", err)
	}
	return strings.TrimSpace(string(out)), len(bytes.TrimSpace(status)) > 0, nil
}

// tagOf is a tag that names the commit exactly, "" if none.
func tagOf(commit string) string {
	out, err := exec.Command("git", "describe", "--tags", "--exact-match", commit).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// clean makes out and removes from it what an earlier run wrote (the
// binaries and the checksum file), so that SHA256SUMS lists exactly this
// run's binaries; anything else there stays.
func clean(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(out, "a2a-courier_*"))
	if err != nil {
		return err
	}
	for _, p := range append(old, filepath.Join(out, SumsFile)) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// build builds one target: static, without the source paths (-trimpath),
// without the symbol table and DWARF (-s -w), stamped with the version and
// the commit (internal/buildinfo reads them; Go's own record of the
// commit, when it makes one, agrees).
func build(target, dst, version, commit string) error {
	goos, goarch, _ := strings.Cut(target, "/")
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", cliPkg, version, cliPkg, commit)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", dst, "./cmd/a2a-courier")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, strings.TrimSpace(stderr.String()))
	}
	if goos == "darwin" && goarch == "arm64" {
		// macOS on Apple silicon runs no binary without a signature; Go's
		// linker signs it (ad hoc): check that it did.
		return checkSigned(dst)
	}
	return nil
}

// checkSigned reports a Mach-O binary without a code signature.
func checkSigned(path string) error {
	f, err := macho.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	const lcCodeSignature = 0x1d
	for _, l := range f.Loads {
		if raw := l.Raw(); len(raw) >= 4 && f.ByteOrder.Uint32(raw) == lcCodeSignature {
			return nil
		}
	}
	return fmt.Errorf("%s has no code signature: macOS on arm64 would kill it at start", path)
}

// Sums is the SHA256SUMS file of the named files in dir, in the format of
// sha256sum (a line "<hex>  <name>" each, sorted by name), which
// sha256sum -c and shasum -a 256 -c check.
func Sums(dir string, names []string) ([]byte, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b bytes.Buffer
	for _, name := range sorted {
		sum, err := fileSum(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return b.Bytes(), nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// list prints what was built: each file with its size.
func list(w io.Writer, out string, names []string, version, commit string) error {
	fmt.Fprintf(w, "a2a-courier %s (commit %s) in %s:\n", version, commit, out)
	for _, name := range append(names, SumsFile) {
		fi, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-52s %9d bytes (%.1f MiB)\n", name, fi.Size(), float64(fi.Size())/(1<<20))
	}
	return nil
}
