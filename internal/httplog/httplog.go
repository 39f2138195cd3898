// Package httplog shows the HTTP requests a command makes, for people
// debugging a proxy or a URL (-v/--verbose): one line each, with the
// method, the URL, the status and how long the answer took. It never shows
// a credential: no header is printed, a password in the URL is redacted,
// and so is the value of every query parameter whose name speaks of a
// secret (key, token, secret, password, signature, session, code, auth).
package httplog

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Wrap returns a client that sends through hc's transport (its
// connections shared) and logs each request with logf.
func Wrap(hc *http.Client, logf func(format string, args ...any), now func() time.Time) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &transport{base: base, logf: logf, now: now}
	return &c
}

// WrapMarked returns a client that sends through hc's transport and logs,
// with logf, only the requests whose context WithLabel marked, each line
// starting with the label: a process serving many tasks (the detached
// worker) shows the requests of those asked for with -v.
func WrapMarked(hc *http.Client, logf func(format string, args ...any), now func() time.Time) *http.Client {
	c := Wrap(hc, logf, now)
	c.Transport.(*transport).marked = true
	return c
}

type labelKey struct{}

// WithLabel marks ctx: a client of WrapMarked logs the requests made with
// it, label first (a task's contextId).
func WithLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, labelKey{}, label)
}

type transport struct {
	base http.RoundTripper
	logf func(format string, args ...any)
	now  func() time.Time
	// marked: only requests with a label are logged.
	marked bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	label, _ := req.Context().Value(labelKey{}).(string)
	if t.marked && label == "" {
		return t.base.RoundTrip(req)
	}
	logf := t.logf
	if label != "" {
		logf = func(format string, args ...any) { t.logf("%s: "+format, append([]any{label}, args...)...) }
	}
	start := t.now()
	resp, err := t.base.RoundTrip(req)
	took := t.now().Sub(start).Round(time.Millisecond)
	shown := Redact(req.URL)
	switch cause := context.Cause(req.Context()); {
	case errors.Is(req.Context().Err(), context.Canceled) && (errors.Is(err, context.Canceled) || errors.Is(err, cause)):
		// Called off by this process: a read made beside another that
		// failed first, or a caller that stopped. Not the server's error.
		why := ""
		if cause != context.Canceled {
			why = ": " + strings.ReplaceAll(cause.Error(), req.URL.String(), shown)
		}
		logf("http: %s %s → called off after %s%s", req.Method, shown, took, why)
		return resp, err
	case err != nil:
		logf("http: %s %s → error after %s: %s", req.Method, shown, took, strings.ReplaceAll(err.Error(), req.URL.String(), shown))
		return resp, err
	}
	size := ""
	if resp.ContentLength >= 0 {
		size = ", " + byteCount(resp.ContentLength)
	}
	logf("http: %s %s → %s (%s%s)", req.Method, shown, resp.Status, took, size)
	return resp, err
}

// secretWords mark a query parameter whose value is not shown.
var secretWords = []string{"key", "token", "secret", "pass", "sig", "session", "code", "auth", "credential", "jwt"}

// Redact is u as it may be shown: no password, no fragment, the values of
// secret-looking query parameters replaced by [redacted].
func Redact(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	if c.User != nil {
		c.User = url.User(c.User.Username())
		if _, has := u.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), "redacted")
		}
	}
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			lk := strings.ToLower(k)
			for _, w := range secretWords {
				if strings.Contains(lk, w) {
					q[k] = []string{"[redacted]"}
					break
				}
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

func byteCount(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}
