package client_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/rawtest"
)

// cutServer answers every request with a chunked 200 whose body stops
// before its last chunk, as a connection dropped mid-transfer does.
func cutServer(t *testing.T, header string, body []byte) string {
	t.Helper()
	return "http://" + rawtest.Serve(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		w := bufio.NewWriter(c)
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sTransfer-Encoding: chunked\r\n\r\n", header)
		for off := 0; off < len(body); off += 1 << 20 {
			chunk := body[off:min(off+1<<20, len(body))]
			fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk)
		}
		w.Flush() // and no terminating chunk
	})
}

// TestTruncatedBodyIsAnError: a large conversation is not validated as a
// whole, so a body cut short must fail on its framing, even when it ends
// on a '}'.
func TestTruncatedBodyIsAnError(t *testing.T) {
	t.Parallel()
	doc := agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-cut", Rounds: 4, Bytes: 10 << 20}, true)
	cut := bytes.LastIndexByte(doc[:len(doc)-5000], '}') + 1
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(doc)
	zw.Close()
	for _, tc := range []struct {
		name, header string
		body         []byte
	}{
		{"identity", "", doc[:cut]},
		{"gzip", "Content-Encoding: gzip\r\n", gz.Bytes()[:gz.Len()-100]},
	} {
		k, err := client.NewKibana(client.KibanaConfig{URL: cutServer(t, tc.header, tc.body), APIKey: testKey, Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := k.GetConversation(context.Background(), "a2a-cut")
		if err == nil {
			r, n, _ := conv.PickRound(-1)
			t.Fatalf("%s: a truncated body was read as a conversation of %d rounds (last reply %q)", tc.name, n, r.Response)
		}
		if !client.IsKind(err, client.KindConnection) {
			t.Fatalf("%s: %v (kind %v), want a connection error", tc.name, err, client.KindOf(err))
		}
	}
}
