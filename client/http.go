package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/textcut"
)

// Secret holds a credential. It prints as [redacted] through every fmt verb
// and JSON, so a secret that slips into a log line or an error stays hidden.
type Secret string

// String implements fmt.Stringer.
func (Secret) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer.
func (Secret) GoString() string { return "[redacted]" }

// MarshalJSON implements json.Marshaler.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// Reveal returns the secret's value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// Defaults for response size caps, on the decoded body. Conversations carry
// tool results and can be very large; everything else is small.
//
// 256 MiB for a conversation is 2.5 times the 100 MB conversation that
// docs/performance.md holds as the large real case (50 rounds of tool
// results), and a quarter of what 1 GiB let a server make one read hold:
// a 1 MB gzip body inflating to 1000 MiB peaked at 1 GB per read. A
// larger conversation is refused as too large; the reply of a send whose
// answer came is still known (see ErrReplyTooLarge).
const (
	DefaultMaxResponseBytes     int64 = 32 << 20
	DefaultMaxConversationBytes int64 = 256 << 20
)

// NewHTTPClient returns an *http.Client suited to long agent runs: no overall
// timeout (callers bound requests with contexts), bounded dial and TLS
// handshake, TCP keep-alives so idle NAT entries survive, and redirects
// followed only within the origin they started from, so a credential is never
// carried to another host.
func NewHTTPClient(tlsConfig *tls.Config) *http.Client {
	dialer := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 15 * time.Second}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		OnProxyConnectResponse: refuseTunnel,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    15 * time.Second,
		TLSClientConfig:        tlsConfig,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		// We ask for gzip ourselves and decode it, so that the uncompressed
		// size is known before the body is held in memory (see readBody).
		DisableCompression: true,
		// Each open connection keeps a read and a write buffer for its
		// life: 8 KiB at Go's default of 4 KiB each, 8 MiB for the 1,000
		// open POSTs of a worker on 9.5, and twice that with the garbage
		// the collector lets grow beside them. 1 KiB holds a request's
		// headers and a response's status line and headers in a read or
		// two (longer lines are read in pieces); a body read into a larger
		// buffer bypasses it (bufio reads directly), so reading a large
		// conversation costs no more calls. 109 → 75 MiB with the
		// worker's GOGC at 1,000 open POSTs (docs/performance.md).
		ReadBufferSize:  1 << 10,
		WriteBufferSize: 1 << 10,
	}
	return &http.Client{Transport: &roundTripper{pooled: tr}, CheckRedirect: sameOriginRedirects}
}

// MaxCABundleBytes caps a CA bundle file: the whole Mozilla bundle is
// about 200 KiB.
const MaxCABundleBytes = 8 << 20

// TLSConfig builds a TLS configuration from an optional CA bundle file and an
// insecure switch. It returns nil when neither is set.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	if caFile == "" && !insecure {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if insecure {
		cfg.InsecureSkipVerify = true //nolint:gosec // the user asked for it by name
	}
	if caFile != "" {
		pem, _, err := boundedfile.Read(caFile, MaxCABundleBytes)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("read CA bundle %s: no PEM certificates found", caFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// errCrossOriginRedirect is returned by sameOriginRedirects.
var errCrossOriginRedirect = errors.New("redirect to another origin refused")

func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	if origin(req.URL) != origin(via[0].URL) {
		return fmt.Errorf("%w: %s", errCrossOriginRedirect, origin(req.URL))
	}
	return nil
}

func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// SameOrigin reports whether two URLs share scheme, host and port.
func SameOrigin(a, b *url.URL) bool { return origin(a) == origin(b) }

// transport sends requests to one configured origin with one set of
// credentials, reads bounded responses and classifies failures.
type transport struct {
	http      *http.Client
	base      *url.URL // scheme://host[:port][/base-path], no trailing slash
	authName  string   // header name, e.g. "Authorization"
	authValue Secret   // full header value, e.g. "ApiKey abc=="
	// secret is the credential alone, hidden with authValue in error text,
	// as are the other forms of it that a server may echo (see secretForms).
	secret    Secret
	userAgent string
	headers   map[string]string
	maxBody   int64
	// budget bounds what this transport's reads, with those of every
	// transport sharing it, hold at once.
	budget *ReadBudget
	// retries is the number of extra attempts for idempotent reads that
	// met 429, 503 or a broken connection.
	retries int
	// maxRetryWait bounds a single wait; a longer Retry-After fails at once.
	maxRetryWait time.Duration
	sleep        func(context.Context, time.Duration) error
}

type request struct {
	op      string
	method  string
	path    string // escaped path below base, starting with "/"
	query   url.Values
	body    []byte
	maxBody int64 // 0 means transport default
	// idempotent requests may be retried on 429/503 and broken connections.
	idempotent bool
	header     map[string]string
	// quickCheckAbove, when set, spares bodies larger than this a full
	// JSON validation (see wellFormed).
	quickCheckAbove int64
	// heldOpen: the answer comes when the agent's run ends (a blocking
	// send, a stream); the request goes on a connection of its own
	// (roundTripper).
	heldOpen bool
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (t *transport) url(r *request) string {
	if r.path == "" {
		// The base itself, exactly (an A2A endpoint).
		u := *t.base
		if len(r.query) > 0 {
			u.RawQuery = r.query.Encode()
		}
		return u.String()
	}
	u := t.base.Scheme + "://" + t.base.Host + strings.TrimRight(t.base.EscapedPath(), "/") + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	return u
}

// do performs the request, retrying idempotent reads a bounded number of
// times, and returns the successful (2xx) response or a classified *Error.
func (t *transport) do(ctx context.Context, r *request) (_ *response, err error) {
	defer func() { err = t.redact(err) }()
	attempts := 1
	if r.idempotent {
		attempts += t.retries
	}
	var lastErr error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			wait := backoff(i)
			var ce *Error
			if errors.As(lastErr, &ce) && ce.RetryAfter > 0 {
				wait = ce.RetryAfter
			}
			if wait > t.maxRetryWait {
				return nil, lastErr
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
				// The caller would give up before the wait ends: report
				// the refusal now rather than sleep to the deadline.
				return nil, lastErr
			}
			if err := t.sleep(ctx, wait); err != nil {
				return nil, lastErr
			}
		}
		resp, err := t.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, lastErr
}

// redact hides the credential in the text of err when it is a *Error, and
// returns err. A server or proxy that echoes the Authorization header in
// its error text (a debug page, a gateway's "invalid token …", a JSON-RPC
// error) would otherwise put the credential on the terminal, in logs and
// in task records. Credentials shorter than 4 bytes are left alone: hiding
// them would mangle every message and they protect nothing.
func (t *transport) redact(err error) error {
	var ce *Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	forms := secretForms(t.authValue.Reveal(), t.secret.Reveal())
	hide := func(s string) string { return hideForms(s, forms, true) }
	if ce.Message == "" && ce.Err != nil {
		// Error() would show the underlying error's text.
		if m := oneLine(ce.Err.Error(), 300); hide(m) != m {
			ce.Message = m
		}
	}
	ce.Op, ce.Message = hide(ce.Op), hide(ce.Message)
	return err
}

func retryable(err error) bool {
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	return ce.Kind == KindBusy || ce.Kind == KindConnection
}

// backoff grows 0.5s, 1s, 2s … with ±20% jitter so that many clients that
// met the same 503 do not come back in step.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << (attempt - 1)
	if d > 8*time.Second {
		d = 8 * time.Second
	}
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// SleepContext waits d, or less when ctx ends first (then it returns ctx's
// error).
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// MaxConcurrentReads is how many reads (the idempotent requests: a task,
// a conversation, the list, a card, the status) one process has open to
// one origin at once; the others wait for a slot, as long as their
// context lets them. A worker following 1,000 tasks whose looks fall on
// the same grid would otherwise make 1,000 requests at the same instant,
// the transport dialling a connection for each (991 open at once on 9.6
// in scripts/bench): within the cap they share the connections the pool
// keeps (MaxIdleConnsPerHost, the same 8). Sends and streams are not
// capped: a blocking send holds its connection for the whole run
// (docs/design.md, "A thousand tasks").
const MaxConcurrentReads = 8

// ReservedReads is how many more reads of one origin may be open for the
// reads that must not queue behind the others (withUrgentRead): those of a
// task a caller waits on, and the conversation list that tells a worker's
// deliveries which tasks changed.
const ReservedReads = 2

// ErrNoReadSlot is in the error of a read whose caller stopped waiting
// before one of its origin's read slots came free: nothing was sent.
var ErrNoReadSlot = errors.New("every read slot of the server is held by a read not answered yet")

// readHold bounds each attempt of a read that holds a slot, so that reads a
// server never answers give their slots back (60 s, longer for a larger
// answer cap: readHoldFor). A variable for the tests.
var readHold atomic.Int64

func init() { readHold.Store(int64(60 * time.Second)) }

// readHoldFor is how long an attempt that may read up to maxBody bytes
// holds its slot at most: readHold, and as much again per 64 MiB of the
// cap (a read of up to 32 MiB: 90 s; a 256 MiB conversation: 5 minutes).
func readHoldFor(maxBody int64) time.Duration {
	h := time.Duration(readHold.Load())
	return h + time.Duration(float64(h)*float64(maxBody)/float64(64<<20))
}

// urgentReadKey marks a context whose reads take a reserved slot when the
// others are all held.
type urgentReadKey struct{}

// withUrgentRead returns ctx whose reads do not queue behind the other
// reads of their origin (a reserved slot, ReservedReads).
func withUrgentRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentReadKey{}, true)
}

// readSlots are the read slots of each origin, shared by every transport
// of the process: MaxConcurrentReads for any read, ReservedReads for
// urgent ones only.
var readSlots = struct {
	mu sync.Mutex
	m  map[string]*originSlots
}{m: map[string]*originSlots{}}

type originSlots struct{ any, reserved chan struct{} }

// readSlot takes a read slot of t's origin; release gives it back. An
// urgent read (withUrgentRead) takes whichever of a slot or a reserved
// slot comes free first. It fails only when ctx ends first, with
// ErrNoReadSlot: nothing was sent.
func (t *transport) readSlot(ctx context.Context, op string) (release func(), err error) {
	o := origin(t.base)
	readSlots.mu.Lock()
	slots := readSlots.m[o]
	if slots == nil {
		slots = &originSlots{any: make(chan struct{}, MaxConcurrentReads), reserved: make(chan struct{}, ReservedReads)}
		readSlots.m[o] = slots
	}
	readSlots.mu.Unlock()
	if err := ctx.Err(); err != nil {
		// The caller stopped before: not a wait for a slot.
		return nil, classifyTransportError(op, err)
	}
	var reserved chan struct{} // nil: never ready
	if ctx.Value(urgentReadKey{}) != nil {
		reserved = slots.reserved
	}
	select {
	case slots.any <- struct{}{}:
		return func() { <-slots.any }, nil
	case reserved <- struct{}{}:
		return func() { <-reserved }, nil
	case <-ctx.Done():
		return nil, &Error{Kind: KindBusy, Op: op, Message: fmt.Sprintf("nothing was sent: all %d reads this process may have open to the server are waiting for its answers", MaxConcurrentReads),
			Err: fmt.Errorf("%w: %w", ErrNoReadSlot, ctx.Err())}
	}
}

func (t *transport) once(ctx context.Context, r *request) (*response, error) {
	if r.idempotent {
		release, err := t.readSlot(ctx, r.op)
		if err != nil {
			return nil, err
		}
		defer release()
		// A slot is not held longer than this attempt's bound: a read
		// never answered would block every other read of the origin.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readHoldFor(max(r.maxBody, t.maxBody)))
		defer cancel()
	}
	resp, err := t.open(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	maxBody := r.maxBody
	if maxBody == 0 {
		maxBody = t.maxBody
	}
	l := t.budget.lease()
	defer l.release()
	data, err := decodeResponse(ctx, r.op, resp, maxBody, r.quickCheckAbove, l)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// decodeResponse reads and checks the body of a 2xx response: at most
// maxBody bytes decoded, reserved from l, one JSON document nesting at
// most MaxNesting levels (validated as wellFormed says). Every failure is
// a classified *Error.
func decodeResponse(ctx context.Context, op string, resp *http.Response, maxBody, quickAbove int64, l *lease) ([]byte, error) {
	data, err := readBody(ctx, resp, maxBody, l)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, tooLargeError(op, resp.StatusCode, maxBody)
		}
		return nil, classifyBodyError(op, resp.StatusCode, err)
	}
	if len(data) == 0 {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.StatusCode, Message: "empty response body"}
	}
	if !wellFormed(resp, data, quickAbove) {
		if nestsTooDeep(unsafeString(data)) {
			return nil, tooDeepError(op, resp.StatusCode)
		}
		t := bytes.TrimSpace(data)
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.StatusCode, Message: describeNonJSON(resp, data),
			Processed: len(t) > 0 && (t[0] == '{' || t[0] == '[')}
	}
	return data, nil
}

// open sends the request once and returns a 2xx response with its body
// unread (the caller closes it), or a classified error.
func (t *transport) open(ctx context.Context, r *request) (_ *http.Response, err error) {
	defer func() { err = t.redact(err) }()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	if r.heldOpen {
		ctx = withHeldOpen(ctx)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, t.url(r), body)
	if err != nil {
		return nil, &Error{Kind: KindUnexpected, Op: r.op, Err: err}
	}
	// Through a proxy, whether a connection was had: a request that failed
	// before has not left this machine, whatever the error says (a proxy
	// that broke off the tunnel's CONNECT, or did not answer it).
	var connected atomic.Bool
	proxy := envProxy(req)
	if proxy != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }})
		req = req.WithContext(ctx)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	if t.userAgent != "" {
		req.Header.Set("User-Agent", t.userAgent)
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if t.authName != "" && t.authValue != "" {
		req.Header.Set(t.authName, t.authValue.Reveal())
	}
	if err := ctx.Err(); err != nil {
		// Nothing leaves for a caller that has stopped. (Go's transport may
		// hand such a request an idle pooled connection first, which would
		// count as a connection made: as if the request might have left.)
		return nil, classifyTransportError(r.op, err)
	}
	resp, err := t.http.Do(req)
	if err != nil && serverClosedIdle(err) {
		// The server closed this pooled connection as idle, its FIN on the
		// way as the request was written (Go's errServerClosedIdle,
		// golang/go#19943): it never read the request, so the request
		// goes once more, on a new connection, as Go itself does for
		// idempotent ones. A send is not sent twice by this: nothing of
		// the first reached a handler.
		again := req.Clone(ctx)
		if req.GetBody != nil {
			if again.Body, err = req.GetBody(); err != nil {
				return nil, &Error{Kind: KindUnexpected, Op: r.op, Err: err}
			}
		}
		resp, err = t.http.Do(again)
	}
	if err != nil {
		e := classifyTransportError(r.op, err)
		if proxy != nil && !connected.Load() {
			sayOfTunnel(e, proxy, err)
		}
		return nil, e
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		// At most 64 KiB, read outside the budget: a read that waited
		// for budget must not hold a connection's error up.
		data, _ := readBody(ctx, resp, 64<<10, nil)
		return nil, classifyStatus(r.op, resp, data)
	}
	return resp, nil
}

// serverClosedIdle reports Go's error for a request written on a pooled
// connection the server had closed as idle before the request began (the
// transport saw the server's EOF while it expected no response).
func serverClosedIdle(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && ue.Err != nil && ue.Err.Error() == "http: server closed idle connection"
}

var errTooLarge = errors.New("response too large")

// ErrReplyTooLarge is wrapped by the *Error (KindProtocol, Processed set)
// of a successful answer (2xx, or a stream's event) larger than the size
// cap. The server took the request in and answered it (a send ran), but
// the answer was not kept: a caller records what ran, not a refusal, and
// reads the outcome another way if it can (Kibana.Deliver reads the
// conversation, whose cap is higher).
var ErrReplyTooLarge = errors.New("the answer is larger than the size cap")

// tooLargeError is the error of a 2xx answer over the cap max.
func tooLargeError(op string, status int, max int64) *Error {
	return &Error{Kind: KindProtocol, Op: op, StatusCode: status, Err: ErrReplyTooLarge, Processed: true,
		Message: fmt.Sprintf("response larger than the %s cap; the server processed the request, but its answer was not kept", byteSize(max))}
}

// maxInflateRatio bounds what deflate can make of its input: a stream of
// n bytes inflates to at most about 1032 n (a 258-byte match costs at
// least 2 bits). A gzip trailer claiming more is a lie.
const maxInflateRatio = 1032

// inflateScratch is what counting a gzip body's decoded length holds
// besides the body: the inflater's window and tables, and a copy buffer.
const inflateScratch = 64 << 10

// readBody reads at most max bytes of the body, holding a single copy of the
// decoded document: the length comes from Content-Length, or for gzip from
// the trailer's ISIZE field, so the buffer is allocated once at its final
// size. What it holds is reserved from l before it is allocated (l may be
// nil), and stays reserved until the caller releases l.
func readBody(ctx context.Context, resp *http.Response, max int64, l *lease) ([]byte, error) {
	if strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip") {
		compressed, err := readAll(ctx, resp.Body, resp.ContentLength, max, l)
		if err != nil {
			return nil, err
		}
		return gunzip(ctx, compressed, max, l)
	}
	return readAll(ctx, resp.Body, resp.ContentLength, max, l)
}

// readAll reads r to its end, at most max bytes; length is its known size
// or -1. Bytes are reserved from l beyond what l holds on entry.
func readAll(ctx context.Context, r io.Reader, length, max int64, l *lease) ([]byte, error) {
	if length > max {
		return nil, errTooLarge
	}
	base := l.holding()
	if length >= 0 {
		if err := l.grow(ctx, base+length); err != nil {
			return nil, err
		}
		buf := make([]byte, length)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	// Unknown length: gather chunks, each reserved before it is made, then
	// join once (the join is reserved too; the chunks are given back).
	var chunks [][]byte
	var total int64
	size := 32 << 10
	for {
		if err := l.grow(ctx, base+total+int64(size)); err != nil {
			return nil, err
		}
		chunk := make([]byte, size)
		n, err := fill(r, chunk)
		total += int64(n)
		if total > max {
			return nil, errTooLarge
		}
		chunks = append(chunks, chunk[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if size < 4<<20 {
			size *= 2
		}
	}
	if len(chunks) == 1 {
		l.shrink(base + total)
		return chunks[0], nil
	}
	if err := l.grow(ctx, base+2*total); err != nil {
		return nil, err
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	l.shrink(base + total)
	return out, nil
}

// fill reads into buf until it is full or r fails; io.EOF means the body
// ended cleanly. Unlike io.ReadFull it passes on the reader's own
// io.ErrUnexpectedEOF (a chunked body or a gzip stream cut short), so that
// a truncated body is an error and not a shorter document.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// gunzip decodes a gzip body of at most max decoded bytes into one buffer
// of its final size, reserved from l before it is made.
//
// The trailer's ISIZE gives the size of a single member. It is trusted
// only as far as it can be true (no more than maxInflateRatio times the
// body) and is checked afterwards: the member must end exactly there, with
// a good CRC, and nothing may follow it. Otherwise (several members, a
// trailer that lies, a document of 4 GiB or more, a corrupt stream) the
// body is inflated once without keeping anything, to learn its size within
// max, and then into a buffer of that size. So neither a lying trailer nor
// a bomb makes the reader allocate more than max, and a bomb over max
// allocates nothing. On success l holds the document's bytes only: the
// compressed body is the caller's garbage.
func gunzip(ctx context.Context, compressed []byte, max int64, l *lease) ([]byte, error) {
	base := l.holding()
	var size int64 = -1
	if len(compressed) >= 4 {
		// ISIZE: the uncompressed length modulo 2^32 of the last member.
		size = int64(binary.LittleEndian.Uint32(compressed[len(compressed)-4:]))
	}
	if size > max {
		return nil, errTooLarge
	}
	br := bytes.NewReader(compressed)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	if size >= 0 && size <= maxInflateRatio*int64(len(compressed)) {
		zr.Multistream(false)
		if err := l.grow(ctx, base+size); err != nil {
			return nil, err
		}
		buf := make([]byte, size)
		if _, err := io.ReadFull(zr, buf); err == nil {
			var one [1]byte
			if _, err := io.ReadFull(zr, one[:]); err == io.EOF && br.Len() == 0 {
				l.shrink(size) // the compressed body's bytes go with it
				return buf, nil
			}
		}
		buf = nil
		l.shrink(base)
	}
	n, err := inflatedSize(ctx, compressed, max, l)
	if err != nil {
		return nil, err
	}
	if err := l.grow(ctx, base+n); err != nil {
		return nil, err
	}
	if zr, err = gzip.NewReader(bytes.NewReader(compressed)); err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	var one [1]byte
	if _, err := io.ReadFull(zr, one[:]); err != io.EOF {
		return nil, fmt.Errorf("gzip body: %w", errors.Join(err, errors.New("the stream changed between two readings")))
	}
	l.shrink(n)
	return buf, nil
}

// inflatedSize inflates a gzip body (every member) without keeping it, and
// returns its length: errTooLarge as soon as it passes max.
func inflatedSize(ctx context.Context, compressed []byte, max int64, l *lease) (int64, error) {
	base := l.holding()
	if err := l.grow(ctx, base+inflateScratch); err != nil {
		return 0, err
	}
	defer l.shrink(base)
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return 0, fmt.Errorf("gzip body: %w", err)
	}
	n, err := io.CopyN(io.Discard, zr, max+1)
	switch {
	case err == io.EOF:
		return n, nil
	case err == nil:
		return 0, errTooLarge
	}
	return 0, fmt.Errorf("gzip body: %w", err)
}

// unsafeString views b as a string without copying. b must not change
// afterwards; responses are never modified once read.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// maxRedirects bounds the redirects followed within the origin; more is a
// loop (a login page that sends back to itself, a proxy misconfigured).
const maxRedirects = 5

var errTooManyRedirects = fmt.Errorf("stopped after %d redirects", maxRedirects)

func classifyTransportError(op string, err error) *Error {
	if e := classifyProxyError(op, err); e != nil {
		return e
	}
	e := classifyTransport(op, err)
	if e.Kind == KindUnreachable || e.Kind == KindTLS {
		// On its way without the proxy the environment meant (a setting
		// Go could not read): the error says so.
		e.Proxy = unusedProxy(err)
	}
	return e
}

// classifyTransport classifies an error of the connection to the server
// or of the exchange on it.
func classifyTransport(op string, err error) *Error {
	if errors.Is(err, errTooManyRedirects) {
		// The server answers, and answers with a loop: not unreachable,
		// and not a broken connection, but a request it will not take as
		// addressed.
		return &Error{Kind: KindBadRequest, Op: op, Message: fmt.Sprintf("the server redirects in a loop (%d redirects within the configured origin)", maxRedirects), Err: err}
	}
	if errors.Is(err, errCrossOriginRedirect) {
		return &Error{Kind: KindBadRequest, Op: op, Message: oneLine(errors.Unwrap(err).Error(), 200) +
			" (the server redirected away from the configured origin; the credential is only sent to that origin)", Err: err}
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var unkAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invErr x509.CertificateInvalidError
	if errors.As(err, &opErr) && opErr.Op == "dial" && !errors.As(err, &dnsErr) {
		// Before a connection exists nothing can have been sent: a dial
		// that timed out is "unreachable", not "connection lost".
		msg := oneLine(rootMessage(err), 200)
		switch {
		case refused(err):
			msg = "connection refused"
		case noRoute(err):
			msg = "no route to host"
		case errors.Is(err, context.DeadlineExceeded), timedOut(err):
			msg = "no connection in time (the host does not answer)"
		}
		return &Error{Kind: KindUnreachable, Op: op, Message: msg, Err: err}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindConnection, Op: op, Message: "timed out waiting for the server", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindConnection, Op: op, Message: "canceled", Err: err}
	case errors.As(err, &certErr), errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &invErr):
		return &Error{Kind: KindTLS, Op: op, Message: "TLS certificate not trusted: " + oneLine(rootMessage(err), 200), Err: err}
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &Error{Kind: KindTLS, Op: op, Message: "the server speaks plain HTTP, not HTTPS: use http:// in the URL", Err: err}
	case errors.As(err, &recErr):
		return &Error{Kind: KindTLS, Op: op, Message: "TLS handshake failed (is the URL's scheme right? the server may speak plain HTTP)", Err: err}
	case strings.Contains(err.Error(), "tls: "):
		return &Error{Kind: KindTLS, Op: op, Message: "TLS handshake failed: " + oneLine(rootMessage(err), 200), Err: err}
	case errors.As(err, &dnsErr):
		return &Error{Kind: KindUnreachable, Op: op, Message: "cannot resolve host " + dnsErr.Name, Err: err}
	case refused(err):
		return &Error{Kind: KindUnreachable, Op: op, Message: "connection refused", Err: err}
	case noRoute(err):
		return &Error{Kind: KindUnreachable, Op: op, Message: "no route to host", Err: err}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &Error{Kind: KindUnreachable, Op: op, Message: oneLine(rootMessage(err), 200), Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), connectionLost(err):
		return &Error{Kind: KindConnection, Op: op, Message: "the server closed the connection before answering", Err: err}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() || timedOut(err) {
		return &Error{Kind: KindConnection, Op: op, Message: "timed out waiting for the server", Err: err}
	}
	return &Error{Kind: KindConnection, Op: op, Message: oneLine(rootMessage(err), 200), Err: err}
}

func classifyBodyError(op string, status int, err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: KindConnection, Op: op, Message: fmt.Sprintf("the answer (HTTP %d) did not complete in time", status), Err: err}
	}
	return &Error{Kind: KindConnection, Op: op, StatusCode: 0,
		Message: fmt.Sprintf("the response (HTTP %d) was cut off: %s", status, oneLine(rootMessage(err), 120)), Err: err}
}

// rootMessage strips the url.Error wrapper ("Post \"https://…\": ") so a
// message names the failure, not the request line.
func rootMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func classifyStatus(op string, resp *http.Response, body []byte) *Error {
	e := &Error{Op: op, StatusCode: resp.StatusCode, Message: serverMessage(resp, body)}
	if eo := gjson.GetBytes(body, "error"); eo.IsObject() && validJSONBytes(body) {
		// A JSON-RPC error sent with an HTTP error status keeps its code
		// and reason: a task the server does not know is told by them.
		if c := eo.Get("code"); c.Type == gjson.Number && gjson.GetBytes(body, "jsonrpc").Exists() {
			e.RPCCode = int(c.Int())
		}
		e.Reason = errorInfoReason(eo)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusProxyAuthRequired:
		// Only a proxy answers 407 (an http:// URL through HTTP_PROXY;
		// for https:// it answers the CONNECT: refuseTunnel).
		e.Kind, e.Proxy = KindUnreachable, &ProxyProblem{Status: code}
		e.Message = "a proxy in front of the server asks for credentials (Proxy Authentication Required)"
		if p := envProxy(resp.Request); p != nil && resp.Request.URL.Scheme == "http" {
			e.Proxy.Host, e.Proxy.Credentials = p.Host, p.User != nil
			e.Message = "the proxy " + p.Host + " asks for credentials (Proxy Authentication Required)"
			if p.User != nil {
				e.Message = "the proxy " + p.Host + " refused the credentials of its URL (Proxy Authentication Required)"
			}
		}
	case code == http.StatusUnauthorized:
		e.Kind = KindAuth
	case code == http.StatusForbidden:
		e.Kind = KindForbidden
	case code == http.StatusNotFound:
		e.Kind = KindNotFound
	case code == http.StatusRequestEntityTooLarge:
		e.Kind = KindTooLarge
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		e.Kind = KindBusy
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	case code == http.StatusNotImplemented || code == http.StatusHTTPVersionNotSupported:
		// The server does not do this at all: not Kibana, or the wrong URL.
		e.Kind = KindBadRequest
	case code >= 500:
		e.Kind = KindServer
		if notFoundText().MatchString(e.Message) {
			// Kibana 9.2 answers an unknown agent with a 500.
			e.Kind = KindNotFound
		}
	case code >= 400:
		e.Kind = KindBadRequest
	default:
		e.Kind = KindProtocol
		e.Message = "unexpected HTTP status " + strconv.Itoa(code)
	}
	return e
}

// The patterns error bodies are read with, compiled the first time one is
// read: a command that meets no error pays nothing for them at start.
var (
	notFoundText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(agent|conversation)\b[^.]*\bnot found\b`)
	})
	titleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`) })
	h1RE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`) })
	tagRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<[^>]*>`) })
)

// maxRetryAfter bounds a server's Retry-After hint, in either form.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads delta-seconds or an HTTP date, at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		if secs > int(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// serverMessage pulls a short explanation out of an error body: Kibana's
// {"message"}, a JSON-RPC error, an HTML page's title, or plain text.
func serverMessage(resp *http.Response, body []byte) string {
	if len(body) == 0 {
		return http.StatusText(resp.StatusCode)
	}
	if nestsTooDeep(unsafeString(body)) {
		return fmt.Sprintf("%s (an error body nesting deeper than %d levels, not read)", http.StatusText(resp.StatusCode), MaxNesting)
	}
	if validJSONBytes(body) {
		s := unsafeString(body)
		for _, path := range []string{"message", "error.message", "error.reason", "error"} {
			if r := gjson.Get(s, path); r.Exists() && r.Type == gjson.String && r.Str != "" {
				return oneLine(r.Str, 300)
			}
		}
		return http.StatusText(resp.StatusCode)
	}
	text := string(body[:min(len(body), 64<<10)])
	if looksHTML(text) {
		for _, re := range []*regexp.Regexp{titleRE(), h1RE()} {
			if m := re.FindStringSubmatch(text); m != nil {
				if t := oneLine(tagRE().ReplaceAllString(m[1], " "), 200); t != "" {
					return t + " (an HTML page: from a proxy or a web server, not from the agent)"
				}
			}
		}
		return http.StatusText(resp.StatusCode) + " (an HTML page: from a proxy or a web server, not from the agent)"
	}
	return oneLine(text, 200)
}

func looksHTML(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s[:min(len(s), 512)]))
	return strings.HasPrefix(t, "<!doctype html") || strings.HasPrefix(t, "<html") || strings.Contains(t, "<body") ||
		strings.Contains(t, "<title") || strings.Contains(t, "<h1")
}

func describeNonJSON(resp *http.Response, body []byte) string {
	ct := resp.Header.Get("Content-Type")
	text := string(body[:min(len(body), 64<<10)])
	switch {
	case looksHTML(text):
		return "the server sent an HTML page instead of JSON (a proxy or login page?)" + describeCT(ct)
	case validJSON(strings.TrimSpace(text)) && len(body) > 64<<10:
		return "the response is not valid JSON" + describeCT(ct)
	case len(bytes.TrimSpace(body)) > 0 && (body[0] == '{' || body[0] == '['):
		return "the response is truncated or malformed JSON" + describeCT(ct)
	}
	return "the response is not JSON" + describeCT(ct)
}

func describeCT(ct string) string {
	if ct == "" {
		return ""
	}
	return " (Content-Type " + oneLine(ct, 60) + ")"
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// secretForms lists, longest first, every form of a credential that error
// text may carry: the header value, the credential, and for an encoded
// API key its decoded "id:key" pair, the key half of it, and the base64
// forms without padding or URL-safe. Forms shorter than 4 characters are
// left out: they would hide ordinary text.
func secretForms(values ...string) []string {
	seen := map[string]bool{}
	var forms []string
	add := func(x string) {
		if len(x) >= 4 && !seen[x] {
			seen[x] = true
			forms = append(forms, x)
		}
	}
	for _, v := range values {
		add(v)
		raw := strings.TrimRight(v, "=")
		add(raw)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(raw))
		b, err := base64.RawStdEncoding.DecodeString(raw)
		if err != nil || !utf8.Valid(b) {
			continue
		}
		if id, key, ok := strings.Cut(string(b), ":"); ok && id != "" && len(key) >= 8 {
			add(string(b))
			add(key)
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return forms
}

// redactText replaces every form of the credential in s with [redacted]:
// an agent that echoes the key in its reply must not put it on a screen
// or in a record.
func (t *transport) redactText(s string) string {
	if s == "" || (t.authValue == "" && t.secret == "") {
		return s
	}
	return hideForms(s, secretForms(t.authValue.Reveal(), t.secret.Reveal()), false)
}

// maxProgressState bounds a status update's state name: the server's
// word, shown beside its text.
const maxProgressState = 64

// progressEvent is a status update of the task as the caller gets it: the
// text and the state redacted, the state's name at most maxProgressState
// bytes (cut at a character).
func (t *transport) progressEvent(state, text, taskID string) Event {
	state = textcut.Prefix(state, maxProgressState)
	return Event{Kind: EventProgress, Message: t.redactText(text), TaskID: taskID, State: t.redactText(state)}
}

// hideForms replaces each of forms in s with [redacted]. In an error
// message (cut: oneLine shortens them with "…") it also hides the start,
// 8 characters or more, of a form that the cut left just before a "…";
// not in a reply, where "…" is punctuation.
func hideForms(s string, forms []string, cut bool) string {
	for _, x := range forms {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	if !cut || !strings.Contains(s, "…") {
		return s
	}
	parts := strings.Split(s, "…")
	for i := range parts[:len(parts)-1] {
	cut:
		for _, x := range forms {
			if strings.Contains(x, " ") {
				continue // "ApiKey …", "Bearer …": the credential alone is a form too
			}
			for n := len(x) - 1; n >= 8; n-- {
				if strings.HasSuffix(parts[i], x[:n]) {
					parts[i] = parts[i][:len(parts[i])-n] + "[redacted]"
					break cut
				}
			}
		}
	}
	return strings.Join(parts, "…")
}

func (t *transport) scrubOutcome(out Outcome) Outcome {
	out.Reply, out.Reason = t.redactText(out.Reply), t.redactText(out.Reason)
	out.Err = t.redact(out.Err) // an agent's failure text, say, goes to the record
	if len(out.Parts) > 0 && (t.authValue != "" || t.secret != "") {
		// The parts' text and data go to screens and files too. A file's
		// bytes are the agent's file: not rewritten.
		parts := make([]ReplyPart, len(out.Parts))
		for i, p := range out.Parts {
			p.Text = t.redactText(p.Text)
			if len(p.Data) > 0 {
				if d := t.redactText(string(p.Data)); d != string(p.Data) {
					if !validJSON(d) {
						d = `"[redacted]"`
					}
					p.Data = json.RawMessage(d)
				}
			}
			parts[i] = p
		}
		out.Parts = parts
	}
	return out
}

// RedactText returns s with the client's credential, in any form, replaced
// by [redacted] (for text the server sends back, such as a reply).
func (k *Kibana) RedactText(s string) string { return k.t.redactText(s) }

// RedactCredential returns s with every form of cred (as configured: an
// API key in any of its forms, or a token) replaced by [redacted].
func RedactCredential(s string, cred Secret) string {
	if s == "" || cred == "" {
		return s
	}
	return hideForms(s, secretForms(cred.Reveal(), NormalizeAPIKey(cred.Reveal())), false)
}
