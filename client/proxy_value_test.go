package client

import "testing"

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
