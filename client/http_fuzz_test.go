package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// fuzzKey is the Kibana API key of the fuzzed clients.
const fuzzKey = "Zno5UnVHVEJpYzJGdWRtOjE5cXNlY3JldA=="

// cannedResponse is one fuzzed answer.
type cannedResponse struct {
	status     int
	ct, ce, ra string // Content-Type, Content-Encoding, Retry-After
	body       []byte
	gz         bool // gzip the body and say so
	// framing: 0 Content-Length; 1 chunked; 2 Content-Length longer
	// than the body, then a close; 3 chunked without its last chunk,
	// then a close; 4 no length, the body ends with the connection.
	framing uint8
}

// complete says the body arrives whole: a Content-Length met, a chunked
// body with its last chunk. A 204 or 304 has no body whatever the server
// writes (RFC 9110 §15.3.5, §15.4.5): net/http's server drops it (framings
// 0 and 1), its client reads none (the hijacked framings), so it is always
// complete, and empty.
func (c *cannedResponse) complete() bool {
	return c.bodyless() || c.framing != 2 && c.framing != 3
}

// bodyless says the status carries no body.
func (c *cannedResponse) bodyless() bool { return c.status == 204 || c.status == 304 }

// headerValue keeps what can stand in a header value: the fuzzing is of
// our classification, not of net/http's header parser.
func headerValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r >= 0x20 && r < 0x7f {
			return r
		}
		return -1
	}, s)
}

// cannedServer serves the answer registered under the first path segment,
// with the placeholders of substitute filled in its body and Content-Type.
type cannedServer struct {
	srv   *httptest.Server
	cases sync.Map // "cN" -> *cannedResponse
	next  atomic.Int64
}

func newCannedServer() *cannedServer {
	cs := &cannedServer{}
	cs.srv = httptest.NewServer(http.HandlerFunc(cs.serve))
	return cs
}

// add registers c and returns the base URL that answers with it.
func (cs *cannedServer) add(c *cannedResponse) (string, func()) {
	key := "c" + strconv.FormatInt(cs.next.Add(1), 10)
	cs.cases.Store(key, c)
	return cs.srv.URL + "/" + key, func() { cs.cases.Delete(key) }
}

func (cs *cannedServer) serve(w http.ResponseWriter, r *http.Request) {
	key, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	v, ok := cs.cases.Load(key)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	c := v.(*cannedResponse)
	reqBody, _ := io.ReadAll(r.Body)
	body := substitute(c.body, reqBody, r.Header.Get("Authorization"))
	hdr := http.Header{}
	if c.ct != "" {
		hdr.Set("Content-Type", headerValue(string(substitute([]byte(c.ct), reqBody, r.Header.Get("Authorization")))))
	}
	if c.ra != "" {
		hdr.Set("Retry-After", headerValue(c.ra))
	}
	switch {
	case c.gz:
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
		hdr.Set("Content-Encoding", "gzip")
	case c.ce != "":
		hdr.Set("Content-Encoding", headerValue(c.ce))
	}
	if c.framing <= 1 {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		if c.framing == 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(c.status)
		half := len(body) / 2
		w.Write(body[:half])
		if c.framing == 1 {
			http.NewResponseController(w).Flush()
		}
		w.Write(body[half:])
		return
	}
	conn, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", c.status, http.StatusText(c.status))
	hdr.Write(bw)
	switch c.framing {
	case 2:
		// Connection: close (here and below): the connection ends after
		// this answer, and a client that reads no body (a 204 or 304)
		// must not put it back in its pool with the body's bytes unread,
		// for the next input to read as its answer.
		fmt.Fprintf(bw, "Connection: close\r\nContent-Length: %d\r\n\r\n", len(body)+7)
		bw.Write(body)
	case 3:
		bw.WriteString("Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n")
		if len(body) > 0 {
			fmt.Fprintf(bw, "%x\r\n", len(body))
			bw.Write(body)
			bw.WriteString("\r\n")
		}
	default:
		bw.WriteString("Connection: close\r\n\r\n")
		bw.Write(body)
	}
	bw.Flush()
}

// statusKind is the classification table of classifyStatus, written out.
func statusKind(code int) []Kind {
	switch {
	case code == 401:
		return []Kind{KindAuth}
	case code == 403:
		return []Kind{KindForbidden}
	case code == 404:
		return []Kind{KindNotFound}
	case code == 413:
		return []Kind{KindTooLarge}
	case code == 429, code == 503:
		return []Kind{KindBusy}
	case code == 501, code == 505:
		return []Kind{KindBadRequest}
	case code >= 500:
		return []Kind{KindServer, KindNotFound}
	case code >= 400:
		return []Kind{KindBadRequest}
	}
	return []Kind{KindProtocol}
}

var fuzzOps = []string{"list agents", "kibana send", "a2a 0.3 send", "a2a 1.0 send", "a2a stream", "get conversation"}

// FuzzClassifyResponse sends real requests through the transport to a
// server that answers with a fuzzed status, Content-Type,
// Content-Encoding, Retry-After, body and framing, for six operations
// (list agents, Kibana message/send, A2A send in both dialects, A2A
// stream, get conversation), and checks:
//
//   - it never panics and returns;
//   - a failure is a *Error of a known kind, its text one line of at most
//     500 runes, with RetryAfter within [0, 24h];
//   - a non-2xx status never gives success: it gives the kind the status
//     table says, with that status;
//   - a 2xx body cut short (a Content-Length not met, a chunked body
//     without its last chunk) is never success and always KindConnection
//     (the run may have happened), except a stream that ended first;
//   - a complete 2xx JSON document with a results list is a success for
//     list agents, and a complete JSON object with an id for get
//     conversation;
//   - the API key and the bearer token, even echoed by the server
//     ({{auth}} in the body), never appear in any error text.
func FuzzClassifyResponse(f *testing.F) {
	type seed struct {
		op      uint8
		status  uint16
		ct, ce  string
		ra      string
		body    string
		gz      bool
		framing uint8
	}
	jsonCT := "application/json; charset=utf-8"
	proxy := "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>"
	for _, s := range []seed{
		{0, 200, jsonCT, "", "", `{"results":[{"id":"elastic-ai-agent","name":"Elastic AI Agent","description":"d"}]}`, false, 0},
		{0, 200, jsonCT, "", "", `{"results":[]}`, true, 1},
		{0, 401, jsonCT, "", "", `{"statusCode":401,"error":"Unauthorized","message":"[security_exception] unable to authenticate with provided credentials and anonymous access is not allowed for this request"}`, false, 0},
		{0, 403, jsonCT, "", "", `{"statusCode":403,"error":"Forbidden","message":"API [GET /api/agent_builder/agents] is unauthorized for user, this action is granted by the Kibana privileges [read_onechat]"}`, false, 0},
		{0, 429, jsonCT, "", "120", `{"statusCode":429,"error":"Too Many Requests","message":"Too Many Requests"}`, false, 0},
		{0, 503, "text/html", "", "Wed, 21 Oct 2099 07:28:00 GMT", proxy, false, 1},
		{0, 502, "text/html", "", "", proxy, true, 0},
		{0, 200, "text/html", "", "", `<!DOCTYPE html><html><head><title>Elastic</title></head><body>login</body></html>`, false, 4},
		{0, 200, jsonCT, "", "", `{"results":[{"id":"a"`, false, 2},
		{0, 200, jsonCT, "gzip", "", `{"results":[]}`, false, 0},
		{1, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":"{{id}}","result":{"kind":"message","messageId":"m","contextId":"c","role":"agent","parts":[{"kind":"text","text":"Hello"}]}}`, false, 0},
		{1, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":"{{id}}","error":{"code":-32603,"message":"Internal error: {{auth}}"}}`, false, 0},
		{1, 500, jsonCT, "", "", `{"statusCode":500,"error":"Internal Server Error","message":"Internal server error: Agent nope not found"}`, false, 0},
		{1, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":"{{id}}","result":{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}}`, false, 3},
		{2, 200, "text/plain; charset=utf-8", "", "", `{"jsonrpc":"2.0","id":"{{id}}","result":{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}]}}`, false, 0},
		{2, 401, "application/json", "", "", `{"error":"missing or invalid bearer token {{auth}}"}`, false, 0},
		{3, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":"{{id}}","result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi","mediaType":"text/plain"}]}}}`, false, 1},
		{3, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32009,"message":"The requested A2A protocol version '1.0' is not supported.","data":[{"reason":"VERSION_NOT_SUPPORTED"}]}}`, false, 0},
		{4, 200, "text/event-stream", "", "", "data: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n", false, 1},
		{4, 200, "text/event-stream", "", "", "event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"{{id}}\",\"error\":{\"code\":-32001,\"message\":\"Task not found: t\"}}\n\n", false, 3},
		{4, 200, jsonCT, "", "", `{"jsonrpc":"2.0","id":"{{id}}","error":{"code":-32001,"message":"Task not found"}}`, false, 0},
		{5, 200, jsonCT, "", "", `{"id":"a2a-c","agent_id":"elastic-ai-agent","title":"t","rounds":[{"id":"r","status":"completed","input":{"message":"Q"},"steps":[],"response":{"message":"A"}}]}`, true, 0},
		{5, 404, jsonCT, "", "", `{"statusCode":404,"error":"Not Found","message":"Conversation a2a-c not found"}`, false, 0},
		{5, 200, "x={{auth}}", "", "", `not json {{auth}}`, false, 0},
		{0, 304, "", "", "", "", false, 0},
		{0, 204, jsonCT, "", "", "", false, 0},
	} {
		f.Add(s.op, s.status, s.ct, s.ce, s.ra, []byte(s.body), s.gz, s.framing)
	}
	cs := newCannedServer()
	f.Cleanup(cs.srv.Close)
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}

	f.Fuzz(func(t *testing.T, op uint8, status16 uint16, ct, ce, ra string, body []byte, gz bool, framing uint8) {
		// Statuses 200 to 999 (1xx are not final answers). A 3xx comes
		// back as it is: there is no Location to follow.
		status := int(status16) % 1000
		if status < 200 {
			status += 200
		}
		c := &cannedResponse{status: status, ct: ct, ce: ce, ra: ra, body: body, gz: gz, framing: framing % 5}
		base, done := cs.add(c)
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		op %= uint8(len(fuzzOps))

		streamEnded, err := fuzzCall(ctx, t, op, base, hc)
		if streamEnded {
			if c.status/100 != 2 {
				t.Fatalf("a stream end for HTTP %d", c.status)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s did not return within 10s", fuzzOps[op])
		}

		ok2xx := c.status/100 == 2
		sse := op == 4 && strings.Contains(strings.ToLower(headerValue(c.ct)), "text/event-stream")
		if err == nil {
			if !ok2xx {
				t.Fatalf("%s: success with HTTP %d", fuzzOps[op], c.status)
			}
			if !c.complete() && !sse {
				t.Fatalf("%s: success with a body cut short (framing %d)", fuzzOps[op], c.framing)
			}
			return
		}
		e := checkClientError(t, err, fuzzKey, "ApiKey "+fuzzKey, fuzzToken)
		if !ok2xx {
			kinds := statusKind(c.status)
			if e.StatusCode != c.status || !containsKind(kinds, e.Kind) {
				t.Fatalf("%s: HTTP %d gave %v (kind %v, status %d), want kind %v", fuzzOps[op], c.status, err, e.Kind, e.StatusCode, kinds)
			}
			if e.Kind == KindBusy && c.ra == "" && e.RetryAfter != 0 {
				t.Fatalf("RetryAfter %v without a Retry-After header", e.RetryAfter)
			}
			return
		}
		if !c.complete() && !sse && (e.Kind != KindConnection || !MayHaveArrived(err)) {
			t.Fatalf("%s: a 2xx body cut short gave %v (kind %v), want KindConnection", fuzzOps[op], err, e.Kind)
		}
		if c.complete() && !c.bodyless() && (c.gz || !strings.EqualFold(strings.TrimSpace(headerValue(c.ce)), "gzip")) {
			doc := substitute(c.body, nil, "ApiKey "+fuzzKey)
			switch {
			case op == 0 && gjson.ValidBytes(doc) && gjson.GetBytes(doc, "results").IsArray():
				t.Fatalf("list agents refused a good answer: %v", err)
			case op == 5 && gjson.ValidBytes(doc) && gjson.GetBytes(doc, "id").Exists():
				t.Fatalf("get conversation refused a JSON object with an id: %v", err)
			}
		}
	})
}

// fuzzCall makes the request of fuzzOps[op] to base. streamEnded is true
// for a stream that ended before its final event.
func fuzzCall(ctx context.Context, t *testing.T, op uint8, base string, hc *http.Client) (streamEnded bool, err error) {
	t.Helper()
	switch op {
	case 0, 1, 5:
		k, kerr := NewKibana(KibanaConfig{URL: base, APIKey: fuzzKey, HTTPClient: hc, Retries: -1, MaxResponseBytes: 1 << 20})
		if kerr != nil {
			t.Fatal(kerr)
		}
		switch op {
		case 0:
			_, err = k.ListAgents(ctx)
		case 1:
			_, err = k.SendMessage(ctx, "elastic-ai-agent", OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c", Blocking: true})
		case 5:
			_, err = k.GetConversation(ctx, "a2a-c")
		}
		return false, err
	}
	dialect := V03
	if op == 3 {
		dialect = V10
	}
	a, aerr := NewA2A(A2AConfig{Endpoint: base, Dialect: dialect, Credential: fuzzToken, HTTPClient: hc, MaxResponseBytes: 1 << 20})
	if aerr != nil {
		t.Fatal(aerr)
	}
	if op == 4 {
		err = a.Stream(ctx, OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c"}, func(StreamEvent) bool { return true })
		return err == errStreamCut, err
	}
	_, err = a.Send(ctx, OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c"}, false)
	return false, err
}

func containsKind(ks []Kind, k Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}
