package doctor

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// proxy says whether requests to the Kibana go through a proxy that the
// environment names, as Go's Transport decides (http.ProxyFromEnvironment:
// HTTPS_PROXY for an https:// URL, HTTP_PROXY for http://, either in lower
// case too; NO_PROXY exempts hosts; loopback never goes through one). It is
// a check only when such a variable is set (ok false otherwise). The
// variable's value is never said, since it may carry a password: only the
// proxy's host and port.
func (e *Env) proxy(kibanaURL string) (c Check, ok bool) {
	u, err := url.Parse(kibanaURL)
	if err != nil || u.Host == "" || e.LookupEnv == nil {
		return Check{}, false
	}
	names := [2]string{"HTTP_PROXY", "http_proxy"}
	if u.Scheme == "https" {
		names = [2]string{"HTTPS_PROXY", "https_proxy"}
	}
	name, value := "", ""
	for _, n := range names {
		if v, set := e.LookupEnv(n); set && v != "" {
			name, value = n, v
			break
		}
	}
	if name == "" {
		return Check{}, false
	}
	c = Check{Name: "proxy", Status: Pass}
	p, err := http.ProxyFromEnvironment(&http.Request{URL: u})
	switch {
	case proxyValueProblem(value) != "":
		c.Status = Warn
		c.Detail = fmt.Sprintf("%s %s, so Go does not use it as given", name, proxyValueProblem(value))
		c.Hint = "set it as http://host:port, with credentials as http://user:password@host:port (%-escape what the password holds of @ : / % and spaces)"
	case err != nil:
		// Go's error quotes the value, which may carry a password.
		c.Status, c.Detail = Warn, name+" cannot be used as a proxy URL"
	case p != nil:
		c.Detail = fmt.Sprintf("%s through the proxy %s (%s)", u.Host, p.Host, name)
	case IsLoopback(u.Hostname()):
		c.Detail = fmt.Sprintf("%s directly: a loopback host never goes through %s", u.Host, name)
	default:
		c.Detail = fmt.Sprintf("%s directly: NO_PROXY exempts it from %s", u.Host, name)
	}
	return c, true
}

// proxyValueProblem says what is wrong with a proxy variable's value v, ""
// when Go's Transport takes it as meant: a URL with a scheme and a host, or
// host:port, which it reads as http://host:port
// (golang.org/x/net/http/httpproxy, parseProxy). A URL that does not parse
// (a space, a password with an unescaped @) is read as something else, or
// not at all.
func proxyValueProblem(v string) string {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		return ""
	}
	if strings.Contains(v, "://") {
		return "does not parse as a URL"
	}
	if u, err := url.Parse("http://" + v); err != nil || u.Host == "" {
		return "does not parse as a proxy address"
	}
	return ""
}
