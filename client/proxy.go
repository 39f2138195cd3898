package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// A proxy that the environment names (HTTPS_PROXY for https:// URLs,
// HTTP_PROXY for http://, or their lower-case forms; NO_PROXY lists the
// hosts reached without one) stands between the client and the server.
// When the proxy itself fails, because it cannot be reached or it refuses
// the tunnel (CONNECT) to the server, nothing reached the server, and the
// error names the proxy (Error.Proxy): a broken proxy is not reported as
// an unreachable Kibana.

// proxyRefusal is a proxy's answer other than 200 to the CONNECT of an
// https:// request. Go's Transport reports it as a bare error of the
// status's text; refuseTunnel, its OnProxyConnectResponse, says whose.
type proxyRefusal struct {
	// proxy is the proxy's host:port, never its URL, which may carry
	// credentials.
	proxy  string
	status int
}

func (e *proxyRefusal) Error() string {
	return fmt.Sprintf("the proxy %s refused the tunnel to the server: %d %s", e.proxy, e.status, http.StatusText(e.status))
}

// refuseTunnel is the Transport's OnProxyConnectResponse: a CONNECT that
// is not answered 200 (the one answer Go's Transport takes) fails with a
// proxyRefusal.
func refuseTunnel(_ context.Context, proxyURL *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return &proxyRefusal{proxy: proxyURL.Host, status: resp.StatusCode}
}

// classifyProxyError reports a failure of the proxy, or nil when err is
// not one. Go's Transport wraps the errors of dialing the proxy and of a
// TLS handshake with an https:// proxy in a net.OpError whose Op is
// "proxyconnect".
func classifyProxyError(op string, err error) *Error {
	var refusal *proxyRefusal
	if errors.As(err, &refusal) {
		return &Error{Kind: KindUnreachable, Op: op, Message: refusal.Error(), Proxy: refusal.proxy, ProxyStatus: refusal.status, Err: err}
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Op != "proxyconnect" || opErr.Err == nil {
		return nil
	}
	// What went wrong with the proxy is classified as for a server (a
	// refused connection, a name that does not resolve, a certificate not
	// trusted), then said of the proxy.
	e := classifyTransportError(op, opErr.Err)
	e.Proxy = proxyAddress(opErr.Err)
	e.Message = "cannot reach the proxy " + e.Proxy + ": " + e.Message
	e.Err = err
	if e.Kind == KindConnection {
		// The proxy broke off before the tunnel existed: no byte of the
		// request went to the server.
		e.Kind = KindUnreachable
	}
	return e
}

// proxyAddress names the proxy an error of dialing it was about: the
// address dialed, or the host name that did not resolve.
func proxyAddress(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.Name != "" {
		return dnsErr.Name
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Addr != nil {
		return opErr.Addr.String()
	}
	return "(HTTPS_PROXY, HTTP_PROXY)"
}

// proxyOf names the proxy the environment gives for req, as the
// Transport chose it (http.ProxyFromEnvironment).
func proxyOf(req *http.Request) string {
	if req != nil {
		if u, err := http.ProxyFromEnvironment(req); err == nil && u != nil {
			return u.Host
		}
	}
	return "(HTTP_PROXY)"
}
