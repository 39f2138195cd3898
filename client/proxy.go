package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// A proxy that the environment names (HTTPS_PROXY for https:// URLs,
// HTTP_PROXY for http://, or their lower-case forms; NO_PROXY lists the
// hosts reached without one) stands between the client and the server, as
// Go's Transport reads them (http.ProxyFromEnvironment). When the proxy
// itself fails, because it cannot be reached or it refuses the tunnel
// (CONNECT) to the server, nothing reached the server, and the error names
// the proxy (Error.Proxy): a broken proxy is not reported as an
// unreachable Kibana. Neither is a proxy setting Go cannot read: Go then
// connects directly, or to what it made of the value, and the error says
// which variable it was.

// ProxyProblem is what the proxy the environment names had to do with a
// failure.
type ProxyProblem struct {
	// Host is the proxy's host:port when the failure was the proxy's: it
	// could not be reached, or it refused the tunnel to the server. Never
	// the proxy's URL, which may carry a password.
	Host string
	// Status is the proxy's refusal (its answer to CONNECT, or to the
	// request itself for an http:// URL): 407 when it wants credentials.
	// Credentials says its URL carried some, which it then refused.
	Status      int
	Credentials bool
	// Unreadable names the proxy variable that applies to the request when
	// its value does not parse as a URL (a space, or an unescaped % or @ in
	// the password); Unread, ALL_PROXY when it is the only one set, which
	// Go does not read. Either way the request went directly, or to what Go
	// made of the value.
	Unreadable, Unread string
}

// proxyRefusal is a proxy's answer other than 200 to the CONNECT of an
// https:// request. Go's Transport reports it as a bare error of the
// status's text; refuseTunnel, its OnProxyConnectResponse, says whose.
type proxyRefusal struct {
	ProxyProblem
}

func (e *proxyRefusal) Error() string {
	msg := fmt.Sprintf("the proxy %s refused the tunnel to the server: %d %s", e.Host, e.Status, http.StatusText(e.Status))
	if e.Status == http.StatusProxyAuthRequired && e.Credentials {
		msg += " (it refused the credentials of its URL)"
	}
	return msg
}

// refuseTunnel is the Transport's OnProxyConnectResponse: a CONNECT that
// is not answered 200 (the one answer Go's Transport takes) fails with a
// proxyRefusal.
func refuseTunnel(_ context.Context, proxyURL *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return &proxyRefusal{ProxyProblem{Host: proxyURL.Host, Status: resp.StatusCode, Credentials: proxyURL.User != nil}}
}

// classifyProxyError reports a failure of the proxy, or nil when err is
// not one. Go's Transport wraps the errors of dialing the proxy and of a
// TLS handshake with an https:// proxy in a net.OpError whose Op is
// "proxyconnect".
func classifyProxyError(op string, err error) *Error {
	var refusal *proxyRefusal
	if errors.As(err, &refusal) {
		p := refusal.ProxyProblem
		return &Error{Kind: KindUnreachable, Op: op, Message: refusal.Error(), Proxy: &p, Err: err}
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Op != "proxyconnect" || opErr.Err == nil {
		return nil
	}
	// What went wrong with the proxy is classified as for a server (a
	// refused connection, a name that does not resolve, a certificate not
	// trusted), then said of the proxy.
	e := classifyTransport(op, opErr.Err)
	e.Proxy = &ProxyProblem{Host: proxyAddress(err, opErr.Err)}
	e.Proxy.Unreadable, _ = proxySetting(requestScheme(err))
	e.Message = "cannot reach the proxy " + e.Proxy.Host + ": " + e.Message
	e.Err = err
	if e.Kind == KindConnection {
		// The proxy broke off before the tunnel existed: no byte of the
		// request went to the server.
		e.Kind = KindUnreachable
	}
	return e
}

// proxyAddress names the proxy an error of dialing it (inner) was about:
// the proxy the environment gives for the request's URL (err, a
// *url.Error, names it), or the address dialed, or the host name that did
// not resolve.
func proxyAddress(err, inner error) string {
	if u := requestURL(err); u != nil {
		if p := envProxy(&http.Request{URL: u}); p != nil {
			return p.Host
		}
	}
	var dnsErr *net.DNSError
	if errors.As(inner, &dnsErr) && dnsErr.Name != "" {
		return dnsErr.Name
	}
	var opErr *net.OpError
	if errors.As(inner, &opErr) && opErr.Addr != nil {
		return opErr.Addr.String()
	}
	return "(HTTPS_PROXY, HTTP_PROXY)"
}

// envProxy is the proxy the environment gives for req, as the Transport
// chose it (http.ProxyFromEnvironment); nil when none applies.
func envProxy(req *http.Request) *url.URL {
	if req == nil || req.URL == nil {
		return nil
	}
	if u, err := http.ProxyFromEnvironment(req); err == nil && u != nil {
		return u
	}
	return nil
}

// sayOfTunnel says of the proxy a request through it that failed before
// it had a connection to the server, as classifyTransportError classified
// it (e): the proxy broke off or did not answer the tunnel's CONNECT, or a
// SOCKS proxy refused the host, which Go reports in the server's words
// ("the server closed the connection"). Nothing reached the server. Any
// other e (a refusal, a dial of the proxy, a caller that stopped) is left
// as it is.
func sayOfTunnel(e *Error, proxy *url.URL, err error) {
	if e.Kind != KindConnection || errors.Is(err, context.Canceled) {
		return
	}
	what := "gave no tunnel to the server: " + e.Message
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), connectionLost(err):
		what = "closed the connection before the tunnel to the server was made"
	case errors.Is(err, context.DeadlineExceeded), timedOut(err):
		what = "made no tunnel to the server in time"
	}
	e.Kind = KindUnreachable
	e.Proxy = &ProxyProblem{Host: proxy.Host, Credentials: proxy.User != nil}
	e.Message = "the proxy " + proxy.Host + " " + what
}

// unusedProxy is the ProxyProblem of a request that failed on its way to
// the server without a proxy while the environment meant one: the proxy
// variable of its scheme does not parse (Go ignored it), or only
// ALL_PROXY is set, which Go does not read. nil when neither.
func unusedProxy(err error) *ProxyProblem {
	unreadable, unread := proxySetting(requestScheme(err))
	if unreadable == "" && unread == "" {
		return nil
	}
	return &ProxyProblem{Unreadable: unreadable, Unread: unread}
}

// requestURL is the URL a transport error (a *url.Error) names, nil when
// it names none.
func requestURL(err error) *url.URL {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			return u
		}
	}
	return nil
}

// requestScheme is the scheme of the URL a transport error names, "" when
// it names none.
func requestScheme(err error) string {
	if u := requestURL(err); u != nil {
		return u.Scheme
	}
	return ""
}

// proxySetting reads the environment as Go's Transport does for a request
// of scheme: unreadable names the variable that applies when its value does
// not parse as a URL; unread is ALL_PROXY when no variable applies but it
// is set.
func proxySetting(scheme string) (unreadable, unread string) {
	name, value, allProxy := ProxyVariable(scheme, os.LookupEnv)
	if name != "" && ProxyValueProblem(value) != "" {
		return name, ""
	}
	return "", allProxy
}

// ProxyVariable is the proxy variable that applies to a request of scheme
// as Go's Transport reads the environment (lookup): HTTPS_PROXY for https,
// HTTP_PROXY for http, either in lower case too; its name and value, ""
// when none is set. allProxy names ALL_PROXY when it alone is set, which Go
// does not read.
func ProxyVariable(scheme string, lookup func(string) (string, bool)) (name, value, allProxy string) {
	names := [2]string{"HTTP_PROXY", "http_proxy"}
	if scheme == "https" {
		names = [2]string{"HTTPS_PROXY", "https_proxy"}
	}
	for _, n := range names {
		if v, set := lookup(n); set && v != "" {
			return n, v, ""
		}
	}
	if scheme == "http" || scheme == "https" {
		for _, n := range [2]string{"ALL_PROXY", "all_proxy"} {
			if v, set := lookup(n); set && v != "" {
				return "", "", n
			}
		}
	}
	return "", "", ""
}

// ProxyValueProblem says what is wrong with a proxy variable's value v, ""
// when Go's Transport takes it as meant: a URL with a scheme and a host, or
// host:port, which it reads as http://host:port
// (golang.org/x/net/http/httpproxy, parseProxy). A URL that does not parse
// (a space, a password with an unescaped % or @) is read as something else,
// or not at all.
func ProxyValueProblem(v string) string {
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
