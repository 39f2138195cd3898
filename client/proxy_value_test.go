package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProxyValueProblem(t *testing.T) {
	for v, bad := range map[string]bool{
		"http://proxy.corp:3128":            false,
		"https://proxy.corp":                false,
		"socks5://127.0.0.1:1080":           false,
		"proxy.corp:3128":                   false, // Go reads http://proxy.corp:3128
		"http://user:p%40ss@proxy.corp:80":  false,
		"http://user:pa ss@proxy.corp:3128": true, // read as the host "http"
		"http://proxy.corp:%zz":             true,
		"http://":                           true,
		"proxy corp":                        true,
	} {
		if got := ProxyValueProblem(v) != ""; got != bad {
			t.Errorf("proxyValueProblem(%q) = %q, want a problem: %v", v, ProxyValueProblem(v), bad)
		}
	}
}

// TestA407FromNoNamedProxy: a 407 from a server reached without a proxy
// the environment names (a proxy in front of it that the client does not
// know) is a proxy's refusal, with no proxy host said: nothing ran.
func TestA407FromNoNamedProxy(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="corp"`)
		w.WriteHeader(http.StatusProxyAuthRequired)
	}))
	defer srv.Close()
	k, err := NewKibana(KibanaConfig{URL: srv.URL, APIKey: "a2V5OnNlY3JldA==", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.ListAgents(context.Background())
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindUnreachable || ce.Proxy == nil || ce.Proxy.Status != http.StatusProxyAuthRequired || ce.Proxy.Host != "" ||
		!strings.Contains(ce.Message, "a proxy in front of the server asks for credentials") || MayHaveArrived(err) {
		t.Fatalf("a 407 with no proxy named: %#v (%v)", ce, err)
	}
}
