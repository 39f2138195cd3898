//go:build unix

package serve

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func rpc(t *testing.T, s *started, body string) gjson.Result {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.local)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return gjson.Parse(b.String())
}

func send03(ctx, part string) string {
	c := ""
	if ctx != "" {
		c = `,"contextId":` + ctx
	}
	return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-` +
		strings.NewReplacer(`"`, "", "{", "", "}", "", ":", "", ",", "", " ", "").Replace(part+ctx) + `","role":"user"` + c + `,"parts":[` + part + `]}}}`
}

// A message whose file part cannot be read whole (bad base64), or names
// its file by URL (which serve does not fetch), and a contextId that is
// not 1-128 printable characters without spaces, are refused with
// -32602: no task, nothing run.
func TestServeRefusesUnreadableFilePartsURLPartsAndBadContextIDs(t *testing.T) {
	count := filepath.Join(t.TempDir(), "runs")
	s := startServer(t, Options{Exec: "sh -c 'echo x >> " + count + "; cat'", Shell: false})
	text := `{"kind":"text","text":"hi"}`
	cases := []struct{ name, body, want string }{
		{"bad base64", send03("", text+`,{"kind":"file","file":{"name":"a.bin","bytes":"!!not base64!!"}}`), "file"},
		{"url part", send03("", text+`,{"kind":"file","file":{"name":"a.txt","uri":"https://example.com/a.txt"}}`), "URL"},
		{"empty context", send03(`""`, text), ""},
		{"context with a space", send03(`"a b"`, text), "contextId"},
		{"context with a control", send03(`"a\u0007b"`, text), "contextId"},
		{"long context", send03(`"`+strings.Repeat("c", 129)+`"`, text), "contextId"},
	}
	for _, c := range cases {
		doc := rpc(t, s, c.body)
		if c.name == "empty context" {
			// An empty contextId is none: serve chooses one.
			if doc.Get("result.status.state").String() != "completed" {
				t.Errorf("%s: %s", c.name, doc.Raw)
			}
			continue
		}
		if doc.Get("error.code").Int() != -32602 || !strings.Contains(doc.Get("error.message").String(), c.want) {
			t.Errorf("%s: %s", c.name, doc.Raw)
		}
	}
	ok := rpc(t, s, send03(`"ctx-`+strings.Repeat("k", 124)+`"`, text))
	if ok.Get("result.status.state").String() != "completed" {
		t.Fatalf("a 128-character contextId: %s", ok.Raw)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 2 {
		t.Fatalf("the command ran %d times, want 2 (the accepted sends)", n)
	}
	if n := s.srv.tasks.count(); n != 2 {
		t.Fatalf("%d tasks, want 2", n)
	}
}
