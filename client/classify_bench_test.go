package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkClassifyResponse measures how an answer is classified once it
// has arrived: an error status into a Kind with the server's one-line
// explanation, a JSON-RPC reply into a final reply, a task or an error, a
// transport failure into "unreachable" or "may have arrived", and then what
// the send makes of it (judgeReply). Nothing here touches the network.
func BenchmarkClassifyResponse(b *testing.B) {
	k, err := NewKibana(KibanaConfig{URL: "http://127.0.0.1:1", APIKey: "a2V5OnNlY3JldA=="})
	if err != nil {
		b.Fatal(err)
	}
	opts := DeliverOptions{AgentID: "audit-agent", Message: OutgoingMessage{Text: "hi", ContextID: "c-1"}}
	emit := func(Event) {}
	judge := func(res *SendResult, err error) {
		out, final := k.judgeReply(context.Background(), opts, res, err, emit)
		_, _ = out, final
	}

	statusCases := []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"status/401-kibana-envelope", 401, http.Header{"Content-Type": {"application/json"}},
			`{"statusCode":401,"error":"Unauthorized","message":"[security_exception]: unable to authenticate with provided credentials and anonymous access is not allowed for this request"}`},
		{"status/404-agent", 404, http.Header{"Content-Type": {"application/json"}},
			`{"statusCode":404,"error":"Not Found","message":"Agent audit-agent not found"}`},
		{"status/429-retry-after", 429, http.Header{"Content-Type": {"application/json"}, "Retry-After": {"5"}},
			`{"statusCode":429,"error":"Too Many Requests","message":"rate limited"}`},
		{"status/500-not-found-text", 500, http.Header{"Content-Type": {"application/json"}},
			`{"statusCode":500,"error":"Internal Server Error","message":"Agent with id audit-agent not found"}`},
		{"status/502-proxy-html", 502, http.Header{"Content-Type": {"text/html"}},
			"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n" + strings.Repeat("<!-- padding -->\r\n", 20)},
	}
	for _, c := range statusCases {
		resp := &http.Response{StatusCode: c.status, Header: c.header}
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := classifyStatus("send message to agent audit-agent", resp, body)
				MayHaveArrived(e)
				judge(nil, e)
			}
		})
	}

	replyCases := []struct{ name, body string }{
		{"reply/message", `{"jsonrpc":"2.0","id":"REQ","result":{"kind":"message","role":"agent","messageId":"msg-1","contextId":"c-1","taskId":"t-1","parts":[{"kind":"text","text":"` + strings.Repeat("The audit found nothing unusual. ", 30) + `"}]}}`},
		{"reply/task-working", `{"jsonrpc":"2.0","id":"REQ","result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"working","timestamp":"2026-11-03T10:00:00Z"}}}`},
		{"reply/task-completed", `{"jsonrpc":"2.0","id":"REQ","result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"done"}]}]}}`},
		{"reply/rpc-error", `{"jsonrpc":"2.0","id":"REQ","error":{"code":-32001,"message":"Task not found"}}`},
	}
	for _, c := range replyCases {
		httpResp := &http.Response{StatusCode: 200, ContentLength: int64(len(c.body)), Header: http.Header{"Content-Type": {"application/json"}}}
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !wellFormed(httpResp, body, 0) {
					b.Fatal("not well formed")
				}
				res, err := decodeSendV03("send message to agent audit-agent", &response{status: 200, header: httpResp.Header, body: body}, "REQ")
				if err == nil {
					res.LooksLikeAgentError()
				}
				judge(res, err)
			}
		})
	}

	transportCases := []struct {
		name string
		err  error
	}{
		{"transport/refused", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/x", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}},
		{"transport/eof", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/x", Err: io.EOF}},
		{"transport/reset", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/x", Err: &net.OpError{Op: "read", Net: "tcp",
			Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}},
		{"transport/dns", &url.Error{Op: "Get", URL: "https://kibana.invalid/x", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "kibana.invalid", IsNotFound: true}}}},
		{"transport/deadline", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/x", Err: context.DeadlineExceeded}},
	}
	for _, c := range transportCases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := classifyTransportError("send message to agent audit-agent", c.err)
				MayHaveArrived(e)
				judge(nil, e)
			}
		})
	}

	// The errors a worker meets while polling are checked with IsKind in
	// a loop; errors.As through a wrapped chain is the cost there.
	wrapped := errors.Join(errors.New("context"), &Error{Kind: KindConnection, Op: "read conversation"})
	b.Run("iskind-wrapped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !IsKind(wrapped, KindAuth, KindForbidden, KindConnection) {
				b.Fatal("kind")
			}
		}
	})
}
