// Package interoptest starts real third-party A2A servers for tests: the
// a2a-go v0.3.3 server in client/interop/goserver and the @a2a-js/sdk 1.3.0
// server in client/interop/jsserver. They are built from their SDKs only, so
// tests against them show how our client meets implementations we did not
// write.
//
// StartGo and StartJS build or install the server the first time they are
// called in a test process (go build in the server's own module; npm ci into
// the jsserver directory, skipped while node_modules matches
// package-lock.json), start it as a child process on a free loopback port,
// wait until it listens, and stop it when the test ends.
//
// A missing prerequisite (go, node or npm) fails the test with a message
// saying what to install; it never skips silently. Setting
// A2A_COURIER_INTEROP=0 skips these tests on purpose (CI does not set it).
//
// A test binary that cannot run the servers itself (a windows one under
// Wine cannot run the Linux go and node) gets them from a broker instead:
// with A2A_COURIER_INTEROP_BROKER set to the URL of ServeBroker (run on
// the host by scripts/wine/interop-broker), StartGo and StartJS ask it to
// start a fresh server of their own on loopback and to stop it when the
// test ends. The servers are the same programs; only who starts them
// differs.
package interoptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Agents served by both servers, each under its own base path.
const (
	// AgentEcho replies with a Message "echo: <text>".
	AgentEcho = "echo"
	// AgentSlow runs a Task that emits artifact chunks "chunk i/N\n"
	// (append/lastChunk) and completes; "chunks=N delay=D" in the message
	// text tunes it (D like 50ms).
	AgentSlow = "slow"
	// AgentFail runs a Task that ends failed with FailReason.
	AgentFail = "fail"
	// AgentAsk runs a Task that goes input-required with AskQuestion; a
	// follow-up on the same task completes it with the artifact
	// "Hello, <text>!".
	AgentAsk = "ask"
	// AgentSecure is echo behind "Authorization: Bearer <Server.Token>".
	AgentSecure = "secure"
	// AgentParts (a2a-js only) replies with a Message describing each part
	// it was sent, one line a part (see PartLine).
	AgentParts = "parts"
	// AgentFiles (a2a-js only) answers with the files FilesText (hello.txt,
	// text/plain), FilesPNG (pixel.png, image/png), a file by URL
	// (FilesURL, report.pdf, application/pdf) and a data part FilesData
	// (application/json), after a text part "Here are your files.": in
	// the artifact "files" of a Task that completes with the status
	// message FilesStatus, or in a Message when the text says "message".
	AgentFiles = "files"
)

// Agents lists the agents both servers host.
var Agents = []string{AgentEcho, AgentSlow, AgentFail, AgentAsk, AgentSecure}

// Texts the agents answer with.
const (
	FailReason  = "fail agent: this task always fails"
	AskQuestion = "What is your name?"
)

// What AgentFiles sends.
const (
	FilesText = "hello from the files agent\n"
	// FilesPNG is a 1x1 PNG, base64.
	FilesPNG    = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	FilesData   = `{"agent":"files","files":2,"ok":true}`
	FilesURL    = "https://files.example.invalid/report.pdf"
	FilesStatus = "files attached"
	FilesIntro  = "Here are your files."
)

// PartLine is the line AgentParts writes for part n (from 1) of kind
// "text", "raw" (a file's bytes), "url" (a file by URL) or "data": then
// the filename and media type as JSON strings, then for a text its size
// and text, for raw bytes their size and hex SHA-256, for a URL the URL,
// for data its JSON (as JSON.stringify writes it). detail is that last
// field, e.g. `size=5 sha256=2cf2…`.
func PartLine(n int, kind, name, mediaType, detail string) string {
	return fmt.Sprintf("%d %s name=%s type=%s %s", n, kind, strconv.Quote(name), strconv.Quote(mediaType), detail)
}

// Mount names. The Go server has a single unnamed mount.
const (
	MountGo     = ""       // a2a-go: A2A v0.3 only
	MountCompat = "compat" // a2a-js: v1.0 native with the v0.3 compatibility layer
	MountV1     = "v1"     // a2a-js: v1.0 only
	MountV03    = "v03"    // a2a-js: v0.3 only (compat layer on, card declares 0.3 only)
	// MountREST is a2a-js's HTTP+JSON binding alone (its restHandler), v1.0
	// only: the card declares one HTTP+JSON interface, at URL(MountREST,
	// agent), below which the binding's paths go (/message:send,
	// /tasks/{id}, …, optionally after a /{tenant}).
	MountREST = "rest"
)

// Protocol bindings, as cards name them.
const (
	BindingJSONRPC = "JSONRPC"
	BindingREST    = "HTTP+JSON"
)

// Protocol versions as sent in the A2A-Version header.
const (
	V03 = "0.3"
	V10 = "1.0"
)

// Mount is one set of agents on a server, speaking the listed protocol
// versions over one binding.
type Mount struct {
	Name     string
	Versions []string
	// Binding is BindingJSONRPC or BindingREST.
	Binding string
}

// Speaks reports whether the mount serves protocol version v.
func (m Mount) Speaks(v string) bool { return slices.Contains(m.Versions, v) }

// Server is a running third-party A2A server.
type Server struct {
	// Impl names the implementation, e.g. "a2a-go v0.3.3".
	Impl string
	// Origin is scheme://host:port, no trailing slash.
	Origin string
	// Token is the bearer token the secure agent accepts.
	Token string
	// Mounts lists the server's mounts.
	Mounts []Mount

	stderr *tailBuffer
}

// URL returns the base URL of an agent on a mount: JSON-RPC requests are
// POSTed there (HTTP+JSON paths go below it) and the card is at URL +
// "/.well-known/agent-card.json".
func (s *Server) URL(mount, agent string) string {
	if mount == "" {
		return s.Origin + "/" + agent
	}
	return s.Origin + "/" + mount + "/" + agent
}

// CardURL returns the agent card URL of an agent on a mount.
func (s *Server) CardURL(mount, agent string) string {
	return s.URL(mount, agent) + "/.well-known/agent-card.json"
}

// Mount returns the named mount, or false.
func (s *Server) Mount(name string) (Mount, bool) {
	for _, m := range s.Mounts {
		if m.Name == name {
			return m, true
		}
	}
	return Mount{}, false
}

// Stderr returns the last few KiB the server wrote to stderr.
func (s *Server) Stderr() string { return s.stderr.String() }

// EnvSwitch is the environment variable that, set to 0, skips interop tests.
const EnvSwitch = "A2A_COURIER_INTEROP"

// tokenEnv passes the bearer token to the servers (not argv, so it stays out
// of process listings).
const tokenEnv = "A2A_INTEROP_TOKEN"

// StartGo starts the a2a-go v0.3.3 server and stops it when the test ends.
func StartGo(t testing.TB) *Server {
	t.Helper()
	return startKind(t, goKind)
}

// StartJS starts the @a2a-js/sdk 1.3.0 server and stops it when the test
// ends.
func StartJS(t testing.TB) *Server {
	t.Helper()
	return startKind(t, jsKind)
}

// serverKind is one of the two servers: what it is, what it serves, and
// how to get the command that runs it.
type serverKind struct {
	name    string // as the broker's requests name it
	impl    string
	mounts  []Mount
	command func() ([]string, error)
}

var goKind = serverKind{
	name:   "go",
	impl:   "a2a-go v0.3.3",
	mounts: []Mount{{Name: MountGo, Versions: []string{V03}, Binding: BindingJSONRPC}},
	command: func() ([]string, error) {
		bin, err := goServer.get(buildGoServer)
		if err != nil {
			return nil, fmt.Errorf("build the a2a-go server: %v", err)
		}
		return []string{bin}, nil
	},
}

var jsKind = serverKind{
	name: "js",
	impl: "@a2a-js/sdk 1.3.0",
	mounts: []Mount{
		{Name: MountCompat, Versions: []string{V10, V03}, Binding: BindingJSONRPC},
		{Name: MountV1, Versions: []string{V10}, Binding: BindingJSONRPC},
		{Name: MountV03, Versions: []string{V03}, Binding: BindingJSONRPC},
		{Name: MountREST, Versions: []string{V10}, Binding: BindingREST},
	},
	command: func() ([]string, error) {
		node, err := jsServer.get(installJSServer)
		if err != nil {
			return nil, fmt.Errorf("install the @a2a-js/sdk server: %v", err)
		}
		dir, err := interopDir()
		if err != nil {
			return nil, err
		}
		return []string{node, filepath.Join(dir, "jsserver", "server.mjs")}, nil
	},
}

func startKind(t testing.TB, k serverKind) *Server {
	t.Helper()
	skipIfDisabled(t)
	if broker := os.Getenv(EnvBroker); broker != "" {
		return startBrokered(t, broker, k)
	}
	argv, err := k.command()
	if err != nil {
		t.Fatalf("interoptest: %v", err)
	}
	return start(t, k.impl, k.mounts, argv[0], argv[1:]...)
}

func skipIfDisabled(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvSwitch) == "0" {
		t.Skip(EnvSwitch + "=0: interop tests against third-party A2A servers are switched off")
	}
}

// once caches the result of a setup step for the life of the test process;
// unlike sync.Once it retries after a failure, so one flaky install does not
// poison every later test.
type once struct {
	mu   sync.Mutex
	done bool
	val  string
}

func (o *once) get(f func() (string, error)) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return o.val, nil
	}
	v, err := f()
	if err != nil {
		return "", err
	}
	o.val, o.done = v, true
	return v, nil
}

var goServer, jsServer once

// interopDir finds client/interop by walking up from the working directory,
// which go test sets to the package's source directory.
func interopDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, "client", "interop")
		if _, err := os.Stat(filepath.Join(cand, "goserver", "go.mod")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("client/interop/goserver/go.mod not found above %s", wd)
		}
		dir = parent
	}
}

func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("the go command is not on PATH")
}

// buildGoServer builds the server into goserver/.build (buildGoModule).
func buildGoServer() (string, error) { return buildGoModule("goserver", ".") }

// buildGoModule builds package pkg of the goserver module into
// goserver/.build, named by name and a hash of the module's sources so
// that a stale binary is never used and an unchanged one is not rebuilt.
func buildGoModule(name, pkg string) (string, error) {
	dir, err := interopDir()
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "goserver")
	sum, err := hashFiles(src, func(name string) bool {
		return strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum"
	})
	if err != nil {
		return "", err
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	bin := filepath.Join(src, ".build", name+"-"+sum[:16]+exe)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gobin, err := goTool()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// Build to a private name and rename, so concurrent test processes never
	// run a half-written binary.
	tmp := fmt.Sprintf("%s.tmp%d%s", bin, os.Getpid(), exe)
	cmd := exec.Command(gobin, "build", "-buildvcs=false", "-mod=readonly", "-o", tmp, pkg)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := runLimited(cmd, 5*time.Minute); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build in %s: %v\n%s", src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// minNodeMajor is the oldest Node.js the server runs on (util.parseArgs).
const minNodeMajor = 18

// installJSServer checks node and npm, runs npm ci when node_modules does
// not match package-lock.json, and returns the node binary.
func installJSServer() (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not on PATH: install Node.js %d or later with npm (e.g. apt-get install nodejs npm), or set %s=0 to skip interop tests", minNodeMajor, EnvSwitch)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on PATH: install npm alongside Node.js, or set %s=0 to skip interop tests", EnvSwitch)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("node --version: %v", err)
	}
	ver := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(ver, "v"), ".", 2)[0])
	if major < minNodeMajor {
		return "", fmt.Errorf("node %s is too old: the @a2a-js/sdk server needs Node.js %d or later (set %s=0 to skip interop tests)", ver, minNodeMajor, EnvSwitch)
	}

	dir, err := interopDir()
	if err != nil {
		return "", err
	}
	js := filepath.Join(dir, "jsserver")
	lock, err := os.ReadFile(filepath.Join(js, "package-lock.json"))
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(lock)
	want := hex.EncodeToString(h[:]) + " node " + ver + "\n"
	stamp := filepath.Join(js, "node_modules", ".a2a-courier-installed")

	// Several test processes may get here at once; npm ci deletes
	// node_modules first, so only one may run it.
	release, err := lockFile(filepath.Join(os.TempDir(), "a2a-courier-interop-"+hex.EncodeToString(h[:6])+"-"+shortHash(js)+".lock"))
	if err != nil {
		return "", err
	}
	defer release()
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return node, nil
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = js
	if out, err := runLimited(cmd, 10*time.Minute); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", js, err, out)
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return "", err
	}
	return node, nil
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// hashFiles hashes the names and contents of the matching files in dir.
func hashFiles(dir string, match func(string) bool) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		if e.IsDir() || !match(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// runLimited runs cmd with a time limit and returns its combined output.
func runLimited(cmd *exec.Cmd, limit time.Duration) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A grandchild (npm runs scripts) may hold the output pipe open after
	// a kill; don't wait for it forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("still running after %s, killed", limit)
	}
}

// startTimeout bounds how long a server may take to print its origin.
const startTimeout = 60 * time.Second

func start(t testing.TB, impl string, mounts []Mount, argv0 string, args ...string) *Server {
	t.Helper()
	s, p, err := launch(impl, mounts, randomToken(), argv0, args...)
	if p != nil {
		t.Cleanup(p.stop)
	}
	if err != nil {
		t.Fatalf("interoptest: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr (last %d KiB):\n%s", impl, s.stderr.max>>10, s.stderr)
		}
	})
	return s
}

// proc is a server's process.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// launch starts a server and waits until it serves. The process it returns
// (nil if none started) must be stopped, also after an error.
func launch(impl string, mounts []Mount, token, argv0 string, args ...string) (*Server, *proc, error) {
	cmd := exec.Command(argv0, append(args, "--addr", "127.0.0.1:0")...)
	cmd.Env = append(os.Environ(), tokenEnv+"="+token)
	stderr := &tailBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	lines := make(chan string, 1)
	cmd.Stdout = &firstLine{ch: lines}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %v", impl, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()

	var origin string
	select {
	case line := <-lines:
		if !strings.HasPrefix(line, "http://") {
			return nil, p, fmt.Errorf("%s did not print its URL first (got %q); stderr:\n%s", impl, line, stderr)
		}
		origin = strings.TrimSpace(line)
	case <-p.exited:
		return nil, p, fmt.Errorf("%s exited before printing its URL; stderr:\n%s", impl, stderr)
	case <-time.After(startTimeout):
		return nil, p, fmt.Errorf("%s printed no URL within %s; stderr:\n%s", impl, startTimeout, stderr)
	}

	s := &Server{Impl: impl, Origin: origin, Token: token, Mounts: mounts, stderr: stderr}
	if err := waitReady(s); err != nil {
		return nil, p, fmt.Errorf("%s at %s: %v; stderr:\n%s", impl, origin, err, stderr)
	}
	return s, p, nil
}

// waitReady fetches one card: the origin line is printed once the listener
// accepts, so this normally succeeds at once.
func waitReady(s *Server) error {
	m := s.Mounts[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.CardURL(m.Name, AgentEcho), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("card: HTTP %d", resp.StatusCode)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready: %v", last)
}

// stop asks the server to exit and kills it if it does not within a moment.
func (p *proc) stop() {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "itest-" + hex.EncodeToString(b)
}

// firstLine sends the first line written to it and discards the rest.
type firstLine struct {
	ch   chan<- string
	buf  []byte
	sent bool
}

// Write is called from one goroutine only (os/exec's copier).
func (w *firstLine) Write(p []byte) (int, error) {
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.ch <- string(w.buf[:i])
		w.sent, w.buf = true, nil
	} else if len(w.buf) > 4096 {
		w.ch <- string(w.buf)
		w.sent, w.buf = true, nil
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
