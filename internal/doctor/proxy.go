package doctor

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/a2a-courier/a2a-courier/client"
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
	name, value, allProxy := client.ProxyVariable(u.Scheme, e.LookupEnv)
	if name == "" {
		if allProxy == "" {
			return Check{}, false
		}
		want := "HTTP_PROXY"
		if u.Scheme == "https" {
			want = "HTTPS_PROXY"
		}
		return Check{Name: "proxy", Status: Warn,
			Detail: fmt.Sprintf("%s is set, but Go's HTTP client does not read it: %s is reached directly", allProxy, u.Host),
			Hint:   fmt.Sprintf("set %s to the proxy (Go reads HTTPS_PROXY for https:// URLs, HTTP_PROXY for http://)", want)}, true
	}
	c = Check{Name: "proxy", Status: Pass}
	p, err := http.ProxyFromEnvironment(&http.Request{URL: u})
	switch {
	case client.ProxyValueProblem(value) != "":
		c.Status = Warn
		c.Detail = fmt.Sprintf("%s %s, so Go does not use it as given", name, client.ProxyValueProblem(value))
		c.Hint = "set it as http://host:port, with credentials as http://user:password@host:port (%-escape what the password holds of @ : / % and spaces)"
	case err != nil:
		// Go's error quotes the value, which may carry a password.
		c.Status, c.Detail = Warn, name+" cannot be used as a proxy URL"
	case p != nil:
		// A proxy may refuse what these checks do not ask: they are GETs.
		c.Detail = fmt.Sprintf("%s through the proxy %s (%s); these checks are GETs, a send is a POST", u.Host, p.Host, name)
	case IsLoopback(u.Hostname()):
		c.Detail = fmt.Sprintf("%s directly: a loopback host never goes through %s", u.Host, name)
	default:
		c.Detail = fmt.Sprintf("%s directly: NO_PROXY exempts it from %s", u.Host, name)
	}
	return c, true
}
