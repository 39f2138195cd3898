package cli

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/rawtest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A proxy that the environment names is a real process of the user's
// machine: these tests run the program as a separate process (Go's
// Transport reads HTTPS_PROXY and HTTP_PROXY once per process) through
// real proxies on loopback, to a Kibana named by a host that only the
// proxy reaches. A broken proxy is named, with a hint about the proxy
// settings, not reported as an unreachable Kibana; its credentials are
// never said.

// tunnelRefuser is a proxy that answers every CONNECT with status.
func tunnelRefuser(t *testing.T, status int) string {
	t.Helper()
	return rawtest.Serve(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil || req.Method != http.MethodConnect {
			return
		}
		resp := &http.Response{StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Proxy-Authenticate": {`Basic realm="corp"`}}}
		resp.Write(c)
	})
}

// socksRefuser is a SOCKS5 proxy (RFC 1928) that takes the client's
// greeting without authentication and refuses every CONNECT: "connection
// not allowed by ruleset".
func socksRefuser(t *testing.T) string {
	t.Helper()
	return rawtest.Serve(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		greeting := make([]byte, 2) // version, number of methods, the methods
		if _, err := io.ReadFull(r, greeting); err != nil || greeting[0] != 5 {
			return
		}
		if _, err := io.ReadFull(r, make([]byte, greeting[1])); err != nil {
			return
		}
		c.Write([]byte{5, 0})
		request := make([]byte, 5) // version, CONNECT, reserved, address type, its first byte
		if _, err := io.ReadFull(r, request); err != nil {
			return
		}
		// The rest of the address and the port, read whole: a socket
		// closed with bytes unread is reset, and on Windows the reset
		// drops the reply before the client reads it.
		rest := map[byte]int{1: 3 + 2, 3: int(request[4]) + 2, 4: 15 + 2}[request[3]]
		if _, err := io.ReadFull(r, make([]byte, rest)); err != nil {
			return
		}
		c.Write([]byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0})
	})
}

// forwardProxy is an HTTP proxy (for http:// URLs) that forwards GETs to
// the simulator at target and answers every other request with status.
func forwardProxy(t *testing.T, target string, status int) string {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Proxy-Authenticate", `Basic realm="corp"`)
			w.WriteHeader(status)
			return
		}
		out, err := http.NewRequest(r.Method, to.Scheme+"://"+to.Host+r.URL.RequestURI(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestABrokenProxyIsNamedNotKibana(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	const secret = "pr0xy-s3cret"
	withCredentials := func(addr string) string { return "http://corp:" + secret + "@" + addr }
	for _, tc := range []struct {
		name       string
		env        map[string]string
		says, hint string
	}{
		{"a proxy that is not there", map[string]string{"HTTPS_PROXY": withCredentials(closedAddr)},
			"cannot reach the proxy " + closedAddr + ": connection refused", "check the proxy that HTTPS_PROXY"},
		{"a proxy that wants credentials", map[string]string{"HTTPS_PROXY": "http://" + tunnelRefuser(t, http.StatusProxyAuthRequired)},
			"refused the tunnel to the server: 407 Proxy Authentication Required", "the proxy asks for credentials"},
		{"a proxy that refuses the credentials given", map[string]string{"HTTPS_PROXY": withCredentials(tunnelRefuser(t, http.StatusProxyAuthRequired))},
			"407 Proxy Authentication Required (it refused the credentials of its URL)", "the proxy refused the user and password of its URL"},
		{"a proxy that cannot reach Kibana", map[string]string{"HTTPS_PROXY": withCredentials(tunnelRefuser(t, http.StatusBadGateway))},
			"refused the tunnel to the server: 502 Bad Gateway", "the proxy could not reach the server: check the server's URL"},
		{"a proxy whose rules refuse the host", map[string]string{"HTTPS_PROXY": withCredentials(tunnelRefuser(t, http.StatusForbidden))},
			"refused the tunnel to the server: 403 Forbidden", "list the host in NO_PROXY"},
		{"a proxy that closes the tunnel's connection", map[string]string{"HTTPS_PROXY": withCredentials(rawtest.Serve(t, func(c net.Conn) {
			http.ReadRequest(bufio.NewReader(c))
		}))}, "closed the connection before the tunnel to the server was made", "check the proxy that HTTPS_PROXY"},
		{"a SOCKS proxy whose rules refuse the host", map[string]string{"HTTPS_PROXY": "socks5://" + socksRefuser(t)},
			"gave no tunnel to the server: socks connect tcp", "check the proxy that HTTPS_PROXY"},
		// Go's Transport ignores a value it cannot parse and connects
		// directly (here: a name that does not resolve).
		{"a password with an unescaped %", map[string]string{"HTTPS_PROXY": "http://corp:" + secret + "%zz@127.0.0.1:9"},
			"unreachable", "HTTPS_PROXY does not parse as a URL, so Go did not use it as given"},
		{"only ALL_PROXY", map[string]string{"ALL_PROXY": withCredentials("127.0.0.1:9")},
			"unreachable", "ALL_PROXY is set, but Go's HTTP client reads only HTTPS_PROXY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"KIBANA_URL": "https://kibana.invalid", "KIBANA_API_KEY": testKey,
				"A2A_COURIER_STATE_DIR": t.TempDir(), "A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(),
			}
			for k, v := range tc.env {
				env[k] = v
			}
			p := &proc{t: t, env: env}
			for _, args := range [][]string{{"get-card", "elastic-ai-agent"}, {"send", "elastic-ai-agent", "hello"}, {"doctor"}} {
				r := p.run(args...)
				r.expect(t, ExitUnreachable)
				if !strings.Contains(r.stderr+r.stdout, tc.says) || !strings.Contains(r.stderr+r.stdout, tc.hint) {
					t.Errorf("%v: the proxy is not named with its hint (%q, %q):\n%s%s", args, tc.says, tc.hint, r.stdout, r.stderr)
				}
				if strings.Contains(r.stderr+r.stdout, secret) {
					t.Errorf("%v: the proxy's password was said:\n%s%s", args, r.stdout, r.stderr)
				}
				if args[0] != "doctor" && strings.Contains(r.stderr, "Kibana is up") {
					t.Errorf("%v: a broken proxy is blamed on Kibana:\n%s", args, r.stderr)
				}
			}
		})
	}
}

// TestAProxyRefusingTheSendLeavesItUnsent: an http:// Kibana through
// HTTP_PROXY, whose proxy lets the card and status through and answers
// the message/send with 407. The send is refused before it reached
// Kibana: said of the proxy, and recorded as never sent, not as a send
// that may have arrived.
func TestAProxyRefusingTheSendLeavesItUnsent(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	proxy := forwardProxy(t, sim.URL, http.StatusProxyAuthRequired)
	state := t.TempDir()
	p := &proc{t: t, env: map[string]string{
		"KIBANA_URL": testPublicBase, "KIBANA_API_KEY": testKey, "HTTP_PROXY": "http://" + proxy,
		"A2A_COURIER_STATE_DIR": state, "A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(),
	}}
	r := p.run("--json", "send", "elastic-ai-agent", "hello")
	r.expect(t, ExitUnreachable)
	if !strings.Contains(r.stdout, "the proxy "+proxy+" asks for credentials") || !strings.Contains(r.stdout, "HTTP_PROXY for http:// URLs") ||
		!strings.Contains(r.stdout, "nothing reached the server, so sending it again once the proxy lets it through is safe") {
		t.Errorf("the proxy's refusal is not said of the proxy:\n%s%s", r.stdout, r.stderr)
	}
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	recs, errs := st.List()
	if len(errs) != 0 || len(recs) != 1 {
		t.Fatalf("records: %v, %v", recs, errs)
	}
	rec := recs[0]
	if rec.State != store.Rejected || rec.Error == nil || rec.Error.Proxy == nil || rec.Error.Proxy.Host != proxy || rec.Error.Proxy.Status != http.StatusProxyAuthRequired {
		t.Fatalf("the refused send is recorded %s, error %+v: not rejected by the proxy %s (refused: never ran)", rec.State, rec.Error, proxy)
	}
	// result says what the send said, from the record.
	sent := decodeTask(t, r.stdout)
	again := p.run("--json", "result", rec.ContextID)
	again.expect(t, ExitUnreachable)
	if got := decodeTask(t, again.stdout); got.Error == nil || sent.Error == nil || got.Error.Hint != sent.Error.Hint {
		t.Errorf("result's error %+v, the send's %+v", got.Error, sent.Error)
	}
}

// TestDoctorSaysWhichProxy: doctor tells whether the Kibana is reached
// through the proxy the environment names, as Go's Transport decides,
// and warns of a proxy variable Go cannot take as given; the variable's
// value, which may carry a password, is never said.
func TestDoctorSaysWhichProxy(t *testing.T) {
	t.Parallel()
	const secret = "d0ct0r-s3cret"
	for _, tc := range []struct {
		name string
		env  map[string]string
		says string
	}{
		{"through the proxy", map[string]string{"HTTPS_PROXY": "http://corp:" + secret + "@127.0.0.1:9"},
			"✓ proxy                  kibana.example.com through the proxy 127.0.0.1:9 (HTTPS_PROXY); these checks are GETs"},
		{"the host exempt", map[string]string{"https_proxy": "127.0.0.1:9", "NO_PROXY": ".example.com"},
			// from https_proxy, or HTTPS_PROXY on Windows, whose names have no case.
			"✓ proxy                  kibana.example.com directly: NO_PROXY exempts it from "},
		{"a password with a space", map[string]string{"HTTPS_PROXY": "http://corp:" + secret + " x@127.0.0.1:9"},
			"! proxy                  HTTPS_PROXY does not parse as a URL, so Go does not use it as given"},
		{"only HTTP_PROXY, for an https:// Kibana", map[string]string{"HTTP_PROXY": "127.0.0.1:9"}, ""},
		{"only ALL_PROXY", map[string]string{"ALL_PROXY": "http://corp:" + secret + "@127.0.0.1:9"},
			"! proxy                  ALL_PROXY is set, but Go's HTTP client does not read it: kibana.example.com is reached directly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{
				"KIBANA_URL": "https://kibana.example.com", "KIBANA_API_KEY": testKey, "NO_COLOR": "1",
				"A2A_COURIER_STATE_DIR": t.TempDir(), "A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(),
			}
			for k, v := range tc.env {
				env[k] = v
			}
			r := (&proc{t: t, env: env}).run("doctor", "--timeout", "3s")
			out := r.stdout + r.stderr
			if tc.says == "" && strings.Contains(out, " proxy ") {
				t.Errorf("a proxy check where no variable applies:\n%s", out)
			}
			if tc.says != "" && !strings.Contains(out, tc.says) {
				t.Errorf("doctor does not say %q:\n%s", tc.says, out)
			}
			if strings.Contains(out, secret) {
				t.Errorf("the proxy's password was said:\n%s", out)
			}
		})
	}
}

// TestAProxyThatNeverAnswersTheTunnel: a CONNECT left unanswered until the
// caller's --timeout is said of the proxy, as unreachable: no connection
// to the server was had, so nothing may have arrived.
func TestAProxyThatNeverAnswersTheTunnel(t *testing.T) {
	t.Parallel()
	proxy := rawtest.Serve(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	p := &proc{t: t, env: map[string]string{
		"KIBANA_URL": "https://kibana.invalid", "KIBANA_API_KEY": testKey, "HTTPS_PROXY": "http://" + proxy,
		"A2A_COURIER_STATE_DIR": t.TempDir(), "A2A_COURIER_TEST_MAIN": "1", "HOME": t.TempDir(),
	}}
	r := p.run("get-card", "elastic-ai-agent", "--timeout", "1s")
	r.expect(t, ExitUnreachable)
	if !strings.Contains(r.stderr, "the proxy "+proxy+" made no tunnel to the server in time") || !strings.Contains(r.stderr, "check the proxy that HTTPS_PROXY") {
		t.Errorf("an unanswered tunnel is not said of the proxy:\n%s", r.stderr)
	}
}
