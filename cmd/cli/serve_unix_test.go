//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/proctest"
)

// serveProc is `a2a-courier serve` run as its own process (this test
// binary standing in for a2a-courier).
type serveProc struct {
	cmd  *exec.Cmd
	addr string
	log  *bytes.Buffer
	mu   *sync.Mutex
}

func startServeProc(t *testing.T, env map[string]string, args ...string) *serveProc {
	t.Helper()
	c := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	sp := &serveProc{cmd: c, log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			sp.mu.Lock()
			sp.log.WriteString(line + "\n")
			sp.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "serve: listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		close(addr)
	}()
	a, ok := <-addr
	if !ok {
		t.Fatalf("serve did not start:\n%s", sp.logText())
	}
	sp.addr = a
	return sp
}

func (s *serveProc) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// cutProxy forwards to origin; the first cuts sends (message/send and
// its kin) it meets have their connection closed after cutAfter, while
// the request goes on at the origin, as a proxy's idle timeout does.
type cutProxy struct {
	origin   atomic.Value // string
	cutAfter time.Duration
	toCut    atomic.Int32
	cuts     atomic.Int32
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	isSend := bytes.Contains(body, []byte(`"SendMessage"`)) || bytes.Contains(body, []byte(`"message/send"`)) ||
		bytes.Contains(body, []byte(`"SendStreamingMessage"`)) || bytes.Contains(body, []byte(`"message/stream"`))
	req, _ := http.NewRequestWithContext(context.Background(), r.Method, p.origin.Load().(string)+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	type answer struct {
		resp *http.Response
		body []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{resp, b, err}
	}()
	if isSend && p.toCut.Add(-1) >= 0 {
		time.Sleep(p.cutAfter)
		p.cuts.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	a := <-got
	if a.err != nil {
		http.Error(w, a.err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range a.resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.resp.StatusCode)
	w.Write(a.body)
}

// agentScript writes a test agent: it counts its runs (one line a run,
// with its contextId), says "working on it" on stderr, waits for the gate
// file when the message says "wait", and replies with the message in
// capitals.
func agentScript(t *testing.T, dir string) (script, runs, gate string) {
	runs, gate = filepath.Join(dir, "runs"), filepath.Join(dir, "gate")
	script = filepath.Join(dir, "agent.sh")
	body := "#!/bin/sh\necho \"run $A2A_CONTEXT_ID\" >> " + runs + "\necho 'working on it' >&2\nmsg=$(cat)\n" +
		"case \"$msg\" in *wait*) while [ ! -e " + gate + " ]; do sleep 0.05; done;; esac\n" +
		"printf '%s' \"$msg\" | tr a-z A-Z\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, runs, gate
}

func runsOf(t *testing.T, runs, contextID string) int {
	b, _ := os.ReadFile(runs)
	return strings.Count(string(b), "run "+contextID+"\n")
}

// Two a2a-courier processes, one `serve --exec` and one client, carry a
// long task through a cut connection and a server restart: the reply
// arrives once, it is fetched again from an empty state directory by its
// contextId, and nothing runs twice; the task running when the server is
// killed ends failed, and is not run again.
func TestServeE2ECutConnectionAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script, runs, gate := agentScript(t, dir)
	serveEnv := map[string]string{"A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "A2A_COURIER_STATE_DIR": filepath.Join(dir, "server-state")}
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("laptop laptop-token-0123456789abcdef\n"), 0o600)
	tokenFile := filepath.Join(dir, "client-token")
	os.WriteFile(tokenFile, []byte("laptop-token-0123456789abcdef\n"), 0o600)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The card names the proxy: every request goes through it.
	srv := startServeProc(t, serveEnv, "--exec", script, "--tokens-file", tokens, "--response-window", "30s", "--public-url", "http://"+ln.Addr().String())
	proxy := &cutProxy{cutAfter: 300 * time.Millisecond}
	proxy.origin.Store("http://" + srv.addr)
	proxy.toCut.Store(1)
	hs := &http.Server{Handler: proxy}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	proxyURL := "http://" + ln.Addr().String()

	client := &proc{t: t, env: map[string]string{"A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(), "PATH": os.Getenv("PATH"),
		"A2A_COURIER_STATE_DIR": filepath.Join(dir, "client-state"), "A2A_COURIER_MAX_WAIT": "3m"}}
	killWorkersAtCleanup(t, client.env["A2A_COURIER_STATE_DIR"])
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	send := client.cmd(ctx, "", "send", "--url", proxyURL, "--token-file", tokenFile, "please wait for me", "--json", "--poll-interval", "100ms")
	var out, errb bytes.Buffer
	send.Stdout, send.Stderr = &out, &errb
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the proxy to cut the send", 30*time.Second, func() bool { return proxy.cuts.Load() == 1 })
	os.WriteFile(gate, nil, 0o600)
	send.Wait()
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	contextID, _ := doc["context_id"].(string)
	if doc["state"] != "completed" || doc["reply"] != "PLEASE WAIT FOR ME" || send.ProcessState.ExitCode() != 0 {
		t.Fatalf("send: exit %d\n%s\nstderr %s", send.ProcessState.ExitCode(), out.String(), errb.String())
	}
	if n := runsOf(t, runs, contextID); n != 1 {
		t.Fatalf("the command ran %d times for %s", n, contextID)
	}

	// From an empty state directory, by contextId alone, straight to the
	// server (A2A 1.0: ListTasks by contextId).
	other := &proc{t: t, env: map[string]string{"A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(), "PATH": os.Getenv("PATH"),
		"A2A_COURIER_STATE_DIR": filepath.Join(t.TempDir(), "empty")}}
	r := other.run("fetch", contextID, "--url", proxyURL, "--token-file", tokenFile)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "PLEASE WAIT FOR ME" {
		t.Fatalf("fetch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// A second long task; the server is killed while it runs, and
	// restarted.
	os.Remove(gate)
	r = client.run("send-async", "--url", proxyURL, "--token-file", tokenFile, "wait again")
	r.expect(t, 0)
	second := strings.TrimSpace(r.stdout)
	waitUntil(t, "the second run to start", 30*time.Second, func() bool { return runsOf(t, runs, second) == 1 })
	pid := srv.cmd.Process.Pid
	proctest.Kill(pid)
	srv.cmd.Wait()
	srv2 := startServeProc(t, serveEnv, "--exec", script, "--tokens-file", tokens, "--public-url", proxyURL)
	proxy.origin.Store("http://" + srv2.addr)
	waitUntil(t, "the restart to say the run was stopped", 10*time.Second, func() bool {
		return strings.Contains(srv2.logText(), "1 task(s) were running when the server last stopped")
	})
	r = other.run("fetch", second, "--url", proxyURL, "--token-file", tokenFile, "--json")
	if r.code != ExitTaskFailed || !strings.Contains(r.stdout, "the server stopped while it ran") {
		t.Fatalf("fetch after restart: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The sender's own record follows the task to the same end.
	r = client.run("result", second, "--wait", "--json", "--timeout", "60s")
	if r.code != ExitTaskFailed || !strings.Contains(r.stdout, "the server stopped while it ran") {
		t.Fatalf("result after restart: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The first task's reply outlives the restart.
	r = other.run("fetch", contextID, "--url", proxyURL, "--token-file", tokenFile)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "PLEASE WAIT FOR ME" {
		t.Fatalf("fetch after restart: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	os.WriteFile(gate, nil, 0o600)
	if n := runsOf(t, runs, second); n != 1 {
		t.Fatalf("the killed task ran %d times", n)
	}
	if n := runsOf(t, runs, contextID); n != 1 {
		t.Fatalf("the first task ran %d times", n)
	}
}
