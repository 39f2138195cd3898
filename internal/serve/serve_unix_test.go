//go:build unix

package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
)

// started is a server on loopback, serving until the test ends.
type started struct {
	srv  *Server
	url  string
	dir  string
	stop func()
	// local is the token serve made itself (no TokensFile), which
	// client gives when it is given none.
	local string
}

func startServer(t *testing.T, o Options) *started {
	t.Helper()
	if o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	o.Listen = "127.0.0.1:0"
	if o.LookupEnv == nil {
		o.LookupEnv = func(k string) (string, bool) {
			if k == "PATH" {
				return os.Getenv("PATH"), true
			}
			return "", false
		}
	}
	addr := make(chan string, 1)
	o.Ready = func(a string) { addr <- a }
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	var a string
	select {
	case a = <-addr:
	case err := <-done:
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	st := &started{srv: srv, url: "http://" + a, dir: o.StateDir, stop: stop}
	if o.TokensFile == "" {
		b, err := os.ReadFile(filepath.Join(o.StateDir, LocalTokensName))
		if err != nil {
			t.Fatal(err)
		}
		st.local = strings.TrimSpace(string(b))
	}
	return st
}

func (s *started) client(t *testing.T, d client.Dialect, b client.Binding, token string) *client.A2A {
	t.Helper()
	cfg := client.A2AConfig{Endpoint: s.url + "/", Dialect: d, Binding: b}
	if token == "" {
		token = s.local
	}
	if token != "" && token != noToken {
		cfg.Auth = client.Auth{Header: "Authorization", Prefix: "Bearer "}
		cfg.Credential = client.Secret(token)
	}
	c, err := client.NewA2A(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noToken given to client sends no token at all.
const noToken = "-"

func msg(text string) client.OutgoingMessage {
	return client.OutgoingMessage{Text: text, MessageID: uuid.NewString(), ContextID: uuid.NewString(), Blocking: true}
}

var dialects = []struct {
	name string
	d    client.Dialect
	b    client.Binding
}{{"jsonrpc-0.3", client.V03, client.BindingJSONRPC}, {"jsonrpc-1.0", client.V10, client.BindingJSONRPC}, {"rest-1.0", client.V10, client.BindingREST}}

func TestSendGetListEachBinding(t *testing.T) {
	s := startServer(t, Options{Exec: "tr a-z A-Z"})
	for _, x := range dialects {
		t.Run(x.name, func(t *testing.T) {
			c := s.client(t, x.d, x.b, "")
			m := msg("hello " + x.name)
			res, err := c.Send(context.Background(), m, false)
			if err != nil {
				t.Fatal(err)
			}
			o, ok := res.Outcome()
			if !ok || o.State != client.StateCompleted || o.Reply != strings.ToUpper("hello "+x.name) || res.ContextID != m.ContextID {
				t.Fatalf("%+v %+v", res, o)
			}
			got, err := c.GetTask(context.Background(), res.TaskID)
			if err != nil || got.State != "completed" || got.Text != o.Reply {
				t.Fatalf("get: %+v %v", got, err)
			}
			if x.d == client.V10 {
				id, err := c.FindTask(context.Background(), m.ContextID, m.MessageID)
				if err != nil || id != res.TaskID {
					t.Fatalf("find by contextId: %q %v", id, err)
				}
			}
		})
	}
}

func TestStreamCarriesStderrAsStatusThenTheReply(t *testing.T) {
	s := startServer(t, Options{Exec: `/bin/sh -c 'echo "reading" >&2; echo "writing" >&2; cat'`})
	for _, x := range dialects {
		t.Run(x.name, func(t *testing.T) {
			c := s.client(t, x.d, x.b, "")
			var states, texts []string
			var artifact string
			err := c.Stream(context.Background(), msg("streamed"), func(ev client.StreamEvent) bool {
				states = append(states, ev.Kind+":"+ev.State)
				if ev.Kind == "status" && ev.State == "working" {
					texts = append(texts, ev.Text)
				}
				if ev.Kind == "artifact" {
					artifact += ev.Artifact.Text
				}
				return !ended(ev)
			})
			if err != nil {
				t.Fatal(err)
			}
			if artifact != "streamed" || states[0] != "task:working" || states[len(states)-1] != "status:completed" {
				t.Fatalf("events %q artifact %q", states, artifact)
			}
			for _, tx := range texts {
				if tx != "reading" && tx != "writing" {
					t.Fatalf("status texts %q", texts)
				}
			}
		})
	}
}

// gate is a file a test command waits for: the test creates it when the
// command may finish.
func gate(t *testing.T) (path string, open func()) {
	p := filepath.Join(t.TempDir(), "gate")
	return p, func() {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func waitScript(gatePath, then string) string {
	return `/bin/sh -c 'echo started >&2; while [ ! -e ` + gatePath + ` ]; do sleep 0.02; done; ` + then + `'`
}

// A blocking send that outlasts --response-window gets its task back
// working; the late result is recorded and seen by get and subscribe.
func TestResponseWindowReturnsWorkingAndTheLateResultIsKept(t *testing.T) {
	g, open := gate(t)
	s := startServer(t, Options{Exec: waitScript(g, "echo late answer"), ResponseWindow: 200 * time.Millisecond})
	c := s.client(t, client.V10, client.BindingJSONRPC, "")
	res, err := c.Send(context.Background(), msg("slow one"), false)
	if err != nil || res.State != "working" || !strings.Contains(res.StatusText, "started (still running after the 200ms response window; it goes on and is not failed") {
		t.Fatalf("%+v %v", res, err)
	}
	var last client.StreamEvent
	subscribed := make(chan error, 1)
	firstEvent := make(chan struct{})
	var once sync.Once
	go func() {
		subscribed <- c.Subscribe(context.Background(), res.TaskID, func(ev client.StreamEvent) bool {
			last = ev
			once.Do(func() { close(firstEvent) })
			return !ended(ev)
		})
	}()
	<-firstEvent
	open()
	if err := <-subscribed; err != nil {
		t.Fatal(err)
	}
	if last.Kind != "status" || last.State != "completed" {
		t.Fatalf("last event %+v", last)
	}
	got, err := c.GetTask(context.Background(), res.TaskID)
	if err != nil || got.State != "completed" || got.Text != "late answer" {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestFailureReasonAndCancel(t *testing.T) {
	s := startServer(t, Options{Exec: `/bin/sh -c 'read x; case "$x" in fail*) echo "step one" >&2; echo "out of budget" >&2; exit 2;; esac; (trap "" TERM; exec sleep 300) & echo "pid $!" >&2; trap "" TERM; sleep 300'`})
	c := s.client(t, client.V03, client.BindingJSONRPC, "")
	res, err := c.Send(context.Background(), msg("fail please"), false)
	if err != nil || res.State != "failed" || res.Text != "out of budget" {
		t.Fatalf("%+v %v", res, err)
	}
	m := msg("hang")
	m.Blocking = false
	res, err = c.Send(context.Background(), m, true)
	if err != nil || res.State != "working" {
		t.Fatalf("%+v %v", res, err)
	}
	var pid int
	deadline := time.Now().Add(20 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		got, err := c.GetTask(context.Background(), res.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(got.Text, "pid ")); err == nil {
			pid = n
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if pid == 0 {
		t.Fatal("the command never said its child's pid")
	}
	canceled, err := c.CancelTask(context.Background(), res.TaskID)
	if err != nil || canceled.State != "canceled" {
		t.Fatalf("%+v %v", canceled, err)
	}
	if err := proctest.WaitGone(pid, 10*time.Second); err != nil {
		t.Fatalf("the command's child %d outlived the cancel: %v", pid, err)
	}
	if _, err := c.CancelTask(context.Background(), res.TaskID); err == nil {
		t.Fatal("a finished task was canceled again")
	}
}

func writeTokens(t *testing.T, mode os.FileMode) string {
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte("# callers\nalice alice-token-0123456789\nbob bob-token-0123456789abc\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokensRateAndIsolation(t *testing.T) {
	s := startServer(t, Options{Exec: "cat", TokensFile: writeTokens(t, 0o600), RatePerMinute: 1, Burst: 3})
	alice := s.client(t, client.V10, client.BindingJSONRPC, "alice-token-0123456789")
	res, err := alice.Send(context.Background(), msg("for alice"), false)
	if err != nil || res.State != "completed" {
		t.Fatalf("%+v %v", res, err)
	}
	var ce *client.Error
	_, err = s.client(t, client.V10, client.BindingJSONRPC, "wrong-token-0123456789").GetTask(context.Background(), res.TaskID)
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
	_, err = s.client(t, client.V10, client.BindingJSONRPC, noToken).GetTask(context.Background(), res.TaskID)
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v", err)
	}
	bob := s.client(t, client.V10, client.BindingJSONRPC, "bob-token-0123456789abc")
	if _, err = bob.GetTask(context.Background(), res.TaskID); !errors.As(err, &ce) || ce.RPCCode != -32001 {
		t.Fatalf("bob read alice's task: %v", err)
	}
	// alice has used 1 of 3; the third read after the send is over.
	alice.GetTask(context.Background(), res.TaskID)
	alice.GetTask(context.Background(), res.TaskID)
	req, _ := http.NewRequest(http.MethodPost, s.url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+res.TaskID+`"}}`))
	req.Header.Set("Authorization", "Bearer alice-token-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	audit, err := os.ReadFile(filepath.Join(s.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"for alice", "alice-token", "bob-token", "wrong-token"} {
		if strings.Contains(string(audit), secret) {
			t.Fatalf("the audit log holds %q:\n%s", secret, audit)
		}
	}
	if !strings.Contains(string(audit), `"caller":"alice"`) || !strings.Contains(string(audit), `"outcome":"refused"`) || !strings.Contains(string(audit), `"outcome":"rate-limited"`) {
		t.Fatalf("audit:\n%s", audit)
	}
}

func TestGuardrailsRefuseToStart(t *testing.T) {
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Exec: "cat", TokensFile: writeTokens(t, 0o644), StateDir: t.TempDir()}, "can be read by others"},
		{Options{Exec: "cat", Listen: "0.0.0.0:0", StateDir: t.TempDir()}, "needs --tls-cert-file, --tls-key-file and --tokens-file"},
		{Options{Exec: "cat", Listen: "192.0.2.1:8790", TokensFile: writeTokens(t, 0o600), StateDir: t.TempDir()}, "not a loopback address"},
		{Options{Exec: "", StateDir: t.TempDir()}, "needs --exec"},
		{Options{Exec: "no-such-agent-xyz", StateDir: t.TempDir()}, "not found in PATH"},
		{Options{Exec: "cat 'x", StateDir: t.TempDir()}, "unclosed quote"},
		{Options{Exec: "cat", TLSCert: "c.pem", TLSKey: writeTokens(t, 0o640), StateDir: t.TempDir()}, "the TLS key"},
	}
	for _, c := range cases {
		_, err := New(c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// Past --concurrency a send is answered busy (503, Retry-After), and no
// task is made; 20 callers at once with a concurrency of 1 run once.
func TestBusyPastConcurrency(t *testing.T) {
	g, open := gate(t)
	count := filepath.Join(t.TempDir(), "runs")
	s := startServer(t, Options{Exec: waitScript(g, "echo run >> "+count+"; echo ok"), RetryAfter: 7 * time.Second})
	c := s.client(t, client.V10, client.BindingJSONRPC, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, busy := 0, 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := msg("caller " + strconv.Itoa(i))
			res, err := c.Send(context.Background(), m, true)
			mu.Lock()
			defer mu.Unlock()
			var ce *client.Error
			switch {
			case err == nil && res.State == "working":
				accepted++
			case errors.As(err, &ce) && ce.StatusCode == http.StatusServiceUnavailable && client.RetryAfterOf(err) == 7*time.Second:
				busy++
			default:
				t.Errorf("%+v %v", res, err)
			}
		}()
	}
	wg.Wait()
	open()
	if accepted != 1 || busy != 19 {
		t.Fatalf("accepted %d busy %d", accepted, busy)
	}
	tasks := s.srv.tasks.list("local", "", "")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks", len(tasks))
	}
	<-tasks[0].done
	b, _ := os.ReadFile(count)
	if strings.Count(string(b), "run") != 1 {
		t.Fatalf("runs: %q", b)
	}
}

// The same message sent twice (a client's retry) runs once.
func TestSameMessageRunsOnce(t *testing.T) {
	count := filepath.Join(t.TempDir(), "runs")
	s := startServer(t, Options{Exec: `/bin/sh -c 'echo run >> ` + count + `; cat'`})
	c := s.client(t, client.V03, client.BindingJSONRPC, "")
	m := msg("once")
	a, err1 := c.Send(context.Background(), m, false)
	b, err2 := c.Send(context.Background(), m, false)
	if err1 != nil || err2 != nil || a.TaskID != b.TaskID || b.Text != "once" {
		t.Fatalf("%+v %v / %+v %v", a, err1, b, err2)
	}
	got, _ := os.ReadFile(count)
	if string(got) != "run\n" {
		t.Fatalf("runs %q", got)
	}
}

// A server that stops while a task runs records it failed; the next one
// reads it so, with the finished tasks, and never runs it again.
func TestRestartFailsTheRunningTaskAndKeepsTheFinished(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "runs")
	g, _ := gate(t)
	s := startServer(t, Options{Exec: `/bin/sh -c 'echo run >> ` + count + `; read x; case "$x" in quick*) echo done;; *) while [ ! -e ` + g + ` ]; do sleep 0.02; done;; esac'`, StateDir: dir, ResponseWindow: 100 * time.Millisecond})
	c := s.client(t, client.V10, client.BindingJSONRPC, "")
	done, err := c.Send(context.Background(), msg("quick"), false)
	if err != nil || done.State != "completed" {
		t.Fatalf("%+v %v", done, err)
	}
	running, err := c.Send(context.Background(), msg("long"), false)
	if err != nil || running.State != "working" {
		t.Fatalf("%+v %v", running, err)
	}
	s.stop()
	s2 := startServer(t, Options{Exec: "cat", StateDir: dir})
	c2 := s2.client(t, client.V10, client.BindingJSONRPC, "")
	got, err := c2.GetTask(context.Background(), running.TaskID)
	if err != nil || got.State != "failed" || !strings.Contains(got.Text, "the server stopped while it ran") {
		t.Fatalf("%+v %v", got, err)
	}
	got, err = c2.GetTask(context.Background(), done.TaskID)
	if err != nil || got.State != "completed" || got.Text != "done" {
		t.Fatalf("%+v %v", got, err)
	}
	b, _ := os.ReadFile(count)
	if string(b) != "run\nrun\n" {
		t.Fatalf("runs %q", b)
	}
}

// A record left working by a server that was killed (no chance to write
// anything) is failed by the next one, before it answers anyone.
func TestKilledServersWorkingRecordIsFailedOnOpen(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks")
	os.MkdirAll(tasks, 0o700)
	rec := `{"id":"t1","contextId":"c1","caller":"local","messageId":"m1","state":"working","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z","input":"x"}`
	os.WriteFile(filepath.Join(tasks, "t1.json"), []byte(rec), 0o600)
	s := startServer(t, Options{Exec: "cat", StateDir: dir, Keep: 1000000 * time.Hour})
	got, err := s.client(t, client.V03, client.BindingJSONRPC, "").GetTask(context.Background(), "t1")
	if err != nil || got.State != "failed" || !strings.Contains(got.Text, "not run again") {
		t.Fatalf("%+v %v", got, err)
	}
	b, _ := os.ReadFile(filepath.Join(tasks, "t1.json"))
	if !strings.Contains(string(b), `"state":"failed"`) {
		t.Fatalf("record %s", b)
	}
}

func TestLargeOutputIsAFile(t *testing.T) {
	s := startServer(t, Options{Exec: `/bin/sh -c 'head -c 200000 /dev/zero | tr "\0" z'`})
	res, err := s.client(t, client.V10, client.BindingJSONRPC, "").Send(context.Background(), msg("big"), false)
	if err != nil || res.State != "completed" {
		t.Fatalf("%v %v", res.State, err)
	}
	var file []byte
	for _, p := range res.Parts {
		if p.Kind == client.PartFile && p.Name == "stdout.txt" {
			file = p.Bytes
		}
	}
	if len(file) != 200000 || strings.Trim(string(file), "z") != "" {
		t.Fatalf("file of %d bytes; parts %d", len(file), len(res.Parts))
	}
	// A listing carries artifacts only when asked for (includeArtifacts,
	// false by default): the reply's file is not read for it otherwise.
	bare := rpc(t, s, `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	whole := rpc(t, s, `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"includeArtifacts":true}}`)
	if n := bare.Get("result.tasks.#").Int(); n != 1 || bare.Get("result.tasks.0.artifacts").Exists() {
		t.Errorf("ListTasks without includeArtifacts: %d tasks, artifacts %.200s", n, bare.Get("result.tasks.0.artifacts").Raw)
	}
	if whole.Get("result.tasks.0.artifacts.#").Int() != 1 || len(whole.Raw) < 200000 {
		t.Errorf("ListTasks with includeArtifacts: %.300s", whole.Raw)
	}
}

// ended is how a2a-courier's deliveries end a stream: at a terminal
// state (v1.0 has no final flag).
func ended(ev client.StreamEvent) bool {
	return (ev.Kind == "status" || ev.Kind == "task") && (ev.State == "completed" || ev.State == "failed" || ev.State == "canceled" || ev.State == "rejected")
}

// testLimits give a canceled run a short grace.
var testLimits = runnerLimits(300 * time.Millisecond)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "serve test"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// With --tls-cert-file and --tls-key-file the server speaks HTTPS, and its card
// names an https URL.
func TestServeOverTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := startServer(t, Options{Exec: "tr a-z A-Z", TLSCert: certFile, TLSKey: keyFile, TokensFile: writeTokens(t, 0o600)})
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ra, err := client.ResolveAgent(context.Background(), hc, strings.Replace(s.url, "http://", "https://", 1), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ra.Endpoint, "https://127.0.0.1:") {
		t.Fatalf("endpoint %s", ra.Endpoint)
	}
	c, err := client.NewA2A(client.A2AConfig{Endpoint: ra.Endpoint, Dialect: ra.Dialect, Binding: ra.Binding, Auth: ra.Auth,
		Credential: client.Secret("alice-token-0123456789"), HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Send(context.Background(), msg("over tls"), false)
	if err != nil || res.State != "completed" || res.Text != "OVER TLS" {
		t.Fatalf("%+v %v", res, err)
	}
	if resp, err := http.Get(s.url + "/.well-known/agent-card.json"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP was answered")
		}
	}
}

// The command line is split, never given to a shell, unless --shell.
func TestNoShellUnlessAsked(t *testing.T) {
	for _, c := range []struct {
		shell bool
		want  string
	}{{false, "a | tr a b; echo $HOME"}, {true, "b\n/nowhere"}} {
		s := startServer(t, Options{Exec: "echo a | tr a b; echo $HOME", Shell: c.shell, LookupEnv: func(k string) (string, bool) {
			if k == "HOME" {
				return "/nowhere", true
			}
			if k == "PATH" {
				return os.Getenv("PATH"), true
			}
			return "", false
		}})
		res, err := s.client(t, client.V10, client.BindingJSONRPC, "").Send(context.Background(), msg("x"), false)
		if err != nil || res.State != "completed" || res.Text != c.want {
			t.Fatalf("shell %v: %+v %v", c.shell, res, err)
		}
	}
}
