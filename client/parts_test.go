package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/fifotest"
)

func TestDetectMediaType(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, tc := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"notes.txt", []byte("hello"), "text/plain"},
		{"data.json", []byte(`{"a":1}`), "application/json"},
		{"table.csv", []byte("a,b\n1,2\n"), "text/csv"},
		{"README.md", []byte("# Title\n"), "text/markdown"},
		{"conf.YAML", []byte("a: 1\n"), "application/yaml"},
		{"no-extension", []byte("plain words"), "text/plain"},
		{"empty.json", nil, "application/json"},
		{"empty", nil, "text/plain"},
		// The content wins over the name when it says something precise.
		{"image.txt", png, "image/png"},
		{"image.png", png, "image/png"},
		{"doc.pdf", []byte("%PDF-1.7\n"), "application/pdf"},
		{"page.html", []byte("<!DOCTYPE html><html></html>"), "text/html"},
		{"blob.bin", []byte{0, 1, 2, 3, 0xff}, "application/octet-stream"},
		{"blob", []byte{0, 1, 2, 3, 0xff}, "application/octet-stream"},
		// Generic sniffs (XML, ZIP) let the extension say more.
		{"pic.svg", []byte(`<?xml version="1.0"?><svg/>`), "image/svg+xml"},
		{"report.docx", []byte("PK\x03\x04rest"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"archive.zip", []byte("PK\x03\x04rest"), "application/zip"},
	} {
		if got := DetectMediaType(tc.name, tc.content); got != tc.want {
			t.Errorf("DetectMediaType(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFilePartFromPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "table.csv")
	content := []byte("name,n\nada,1\n")
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := FilePartFromPath(p)
	sum := sha256.Sum256(content)
	if err != nil || f.Part.Kind != PartFile || f.Part.Name != "table.csv" || f.Part.MediaType != "text/csv" || string(f.Part.Bytes) != string(content) ||
		f.Size != int64(len(content)) || f.SHA256 != hex.EncodeToString(sum[:]) || f.Path != p {
		t.Fatalf("%+v %v", f, err)
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o600)
	if f, err := FilePartFromPath(empty); err != nil || f.Size != 0 || f.Part.Bytes == nil {
		t.Errorf("an empty file: %+v %v", f, err)
	}
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, make([]byte, MaxFilePartBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	var tl *boundedfile.TooLargeError
	if _, err := FilePartFromPath(big); !errors.As(err, &tl) || !strings.Contains(err.Error(), "capped at 10 MiB") {
		t.Errorf("over the cap: %v", err)
	}
	var nr *boundedfile.NotRegularError
	if _, err := FilePartFromPath(dir); !errors.As(err, &nr) {
		t.Errorf("a directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := fifotest.Make(fifo); err == nil {
		if _, err := FilePartFromPath(fifo); !errors.As(err, &nr) {
			t.Errorf("a FIFO: %v", err)
		}
	}
	if _, err := FilePartFromPath(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestEncodeParts(t *testing.T) {
	t.Parallel()
	parts := []Part{
		FilePart("a.txt", "text/plain", []byte("hi")),
		{Kind: PartFile, Name: "r.pdf", MediaType: "application/pdf", URL: "https://x.invalid/r.pdf"},
		DataPart(json.RawMessage(` {"k": [1, 2]} `)),
	}
	for _, tc := range []struct {
		d    Dialect
		want string
	}{
		{V03, `[{"kind":"text","text":"look"},{"file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"},"kind":"file"},` +
			`{"file":{"mimeType":"application/pdf","name":"r.pdf","uri":"https://x.invalid/r.pdf"},"kind":"file"},{"data":{"k":[1,2]},"kind":"data"}]`},
		{V10, `[{"text":"look"},{"filename":"a.txt","mediaType":"text/plain","raw":"aGk="},` +
			`{"filename":"r.pdf","mediaType":"application/pdf","url":"https://x.invalid/r.pdf"},{"data":{"k":[1,2]}}]`},
	} {
		w, err := encodeParts(tc.d, "look", parts)
		b, _ := json.Marshal(w)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tc.d, b, err, tc.want)
		}
		// A text alone, or nothing at all, is one text part; parts alone
		// go without a text part.
		if w, _ := encodeParts(tc.d, "", nil); len(w) != 1 {
			t.Errorf("%s: no text, no parts: %v", tc.d, w)
		}
		if w, _ := encodeParts(tc.d, "", parts[:1]); len(w) != 1 || w[0]["text"] != nil {
			t.Errorf("%s: parts alone: %v", tc.d, w)
		}
	}
	for _, tc := range []struct {
		d    Dialect
		p    Part
		want string
	}{
		{V10, Part{Kind: PartFile, URL: "https://x.invalid", Bytes: []byte("x")}, "not both"},
		{V10, DataPart(json.RawMessage(`{"k":`)), "one JSON value"},
		{V10, DataPart(nil), "one JSON value"},
		{V03, DataPart(json.RawMessage(`[1]`)), "JSON objects only"},
		{V10, DataPart(json.RawMessage(strings.Repeat("[", 1200) + strings.Repeat("]", 1200))), "nests deeper"},
		{V10, Part{Kind: "video"}, "unknown part kind"},
	} {
		if _, err := encodeParts(tc.d, "x", []Part{tc.p}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want %q", tc.d, tc.p, err, tc.want)
		}
	}
	if w, err := encodeParts(V10, "", []Part{DataPart(json.RawMessage(`[1,"a"]`))}); err != nil || w[0]["data"] == nil {
		t.Errorf("1.0 takes any JSON value: %v %v", w, err)
	}
}

func TestParseParts(t *testing.T) {
	t.Parallel()
	got := parseParts(gjson.Parse(`[
		{"kind":"text","text":"hello"},
		{"kind":"file","file":{"name":"a.txt","mimeType":"text/plain","bytes":"aGk="}},
		{"kind":"file","file":{"name":"r.pdf","uri":"https://x.invalid/r.pdf"}},
		{"kind":"file","file":{"name":"p.bin","fileWithBytes":"_-8"}},
		{"kind":"data","data":{"k":1}},
		{"kind":"data","data":{"value":[1,2]},"metadata":{"data_part_compat":true}},
		{"kind":"file","file":{"name":"bad","bytes":"%%%"}},
		{"kind":"video","video":{}},
		{"text":"v1","mediaType":"text/plain"},
		{"raw":"aGk=","filename":"b.txt","mediaType":"text/plain"},
		{"url":"https://x.invalid/c","filename":"c"},
		{"data":"a string","mediaType":"application/json"},
		{"type":"text","text":"old"}
	]`))
	want := []Part{
		{Kind: PartText, Text: "hello"},
		{Kind: PartFile, Name: "a.txt", MediaType: "text/plain", Bytes: []byte("hi")},
		{Kind: PartFile, Name: "r.pdf", URL: "https://x.invalid/r.pdf"},
		{Kind: PartFile, Name: "p.bin", Bytes: []byte{0xff, 0xef}},
		{Kind: PartData, Data: json.RawMessage(`{"k":1}`)},
		{Kind: PartData, Data: json.RawMessage(`[1,2]`)},
		{Kind: PartFile, Name: "bad", Problem: "the file's bytes are not base64"},
		{Kind: PartText, Text: "v1", MediaType: "text/plain"},
		{Kind: PartFile, Name: "b.txt", MediaType: "text/plain", Bytes: []byte("hi")},
		{Kind: PartFile, Name: "c", URL: "https://x.invalid/c"},
		{Kind: PartData, MediaType: "application/json", Data: json.RawMessage(`"a string"`)},
		{Kind: PartText, Text: "old"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d parts: %+v", len(got), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Text != w.Text || g.Name != w.Name || g.MediaType != w.MediaType || string(g.Bytes) != string(w.Bytes) ||
			g.URL != w.URL || string(g.Data) != string(w.Data) || g.Problem != w.Problem {
			t.Errorf("part %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if textOf(got, "|") != "hello|v1|old" {
		t.Errorf("text %q", textOf(got, "|"))
	}
}

func TestComposeAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arts, status, want string }{
		{"chunk 1/2\nchunk 2/2\n", "done after 2 chunks", "chunk 1/2\nchunk 2/2\ndone after 2 chunks"},
		{"the report", "done: report attached", "the report\ndone: report attached"},
		{"the answer", "", "the answer"},
		{"", "the answer", "the answer"},
		{"", "", ""},
		{"same text", "same text", "same text"},
		{"  same text\n", "same text  ", "  same text\n"},
		{"part one. The end.", "The end.", "part one. The end."},
		{"the answer", "   ", "the answer"},
		{"the job is undone", "done", "the job is undone\ndone"},
		{"step 12", "2", "step 12\n2"},
		{"it is done", "done", "it is done"},
		{"(ok)", ")", "(ok)"},
	} {
		if got := composeAnswer(tc.arts, tc.status); got != tc.want {
			t.Errorf("composeAnswer(%q, %q) = %q, want %q", tc.arts, tc.status, got, tc.want)
		}
	}
}

func TestBindingNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Binding{"": "", "jsonrpc": BindingJSONRPC, "JSON-RPC": BindingJSONRPC, "rest": BindingREST, "HTTP+JSON": BindingREST} {
		if got, err := ParseBinding(in); err != nil || got != want {
			t.Errorf("ParseBinding(%q) = %q %v", in, got, err)
		}
	}
	for _, in := range []string{"grpc", "soap"} {
		if _, err := ParseBinding(in); err == nil {
			t.Errorf("ParseBinding(%q) took it", in)
		}
	}
	for in, want := range map[string]string{"working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED",
		"TASK_STATE_COMPLETED": "TASK_STATE_COMPLETED", "cancelled": "TASK_STATE_CANCELED", " failed ": "TASK_STATE_FAILED"} {
		if got, err := restState(in); err != nil || got != want {
			t.Errorf("restState(%q) = %q %v", in, got, err)
		}
	}
	for _, in := range []string{"unknown", "sleeping", "TASK_STATE_UNSPECIFIED"} {
		if _, err := restState(in); err == nil {
			t.Errorf("restState(%q) took it", in)
		}
	}
	if got := escapeSegment("a:b/c d"); got != "a%3Ab%2Fc%20d" {
		t.Errorf("escapeSegment: %s", got)
	}
	e := &Error{Kind: KindRPC, Op: "get task x", StatusCode: 404, RPCCode: -32001, Reason: "TASK_NOT_FOUND", Message: "Task not found: x"}
	if e.Error() != "get task x: HTTP 404 TASK_NOT_FOUND: Task not found: x" {
		t.Errorf("%s", e)
	}
}

// TestOutcomePartsAreScrubbed: an agent that echoes the credential in a
// text or data part does not get it onto a screen or into a file.
func TestOutcomePartsAreScrubbed(t *testing.T) {
	t.Parallel()
	tr := &transport{authValue: "Bearer s3cr3t-token", secret: "s3cr3t-token"}
	out := tr.scrubOutcome(Outcome{Reply: "s3cr3t-token", Parts: []ReplyPart{
		{Part: Part{Kind: PartText, Text: "the token is s3cr3t-token"}},
		{Part: Part{Kind: PartData, Data: json.RawMessage(`{"token":"s3cr3t-token"}`)}},
		{Part: Part{Kind: PartFile, Bytes: []byte("s3cr3t-token")}},
	}})
	if out.Reply != "[redacted]" || out.Parts[0].Text != "the token is [redacted]" || string(out.Parts[1].Data) != `{"token":"[redacted]"}` ||
		string(out.Parts[2].Bytes) != "s3cr3t-token" {
		t.Errorf("%+v", out)
	}
}

// TestProgressIsScrubbed: a status update that echoes the credential, in
// its text or as its state, does not carry it on; a state name is at most
// maxProgressState bytes, cut at a character.
func TestProgressIsScrubbed(t *testing.T) {
	t.Parallel()
	tr := &transport{authValue: "Bearer s3cr3t-token", secret: "s3cr3t-token"}
	e := tr.progressEvent("s3cr3t-token", "calling a tool with s3cr3t-token", "t1")
	if e.Kind != EventProgress || e.State != "[redacted]" || e.Message != "calling a tool with [redacted]" || e.TaskID != "t1" {
		t.Errorf("%+v", e)
	}
	long := strings.Repeat("é", maxProgressState) // two bytes each
	if e := tr.progressEvent(long, "x", ""); len(e.State) != maxProgressState || !utf8.ValidString(e.State) {
		t.Errorf("state of %d bytes: %q", len(e.State), e.State)
	}
}

// TestKibanaRefusesParts: Agent Builder takes text only; a send with parts
// is refused before anything is sent.
func TestKibanaRefusesParts(t *testing.T) {
	t.Parallel()
	k, err := NewKibana(KibanaConfig{URL: "http://127.0.0.1:1", APIKey: "a2V5OnNlY3JldA=="})
	if err != nil {
		t.Fatal(err)
	}
	m := OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c", Parts: []Part{DataPart(json.RawMessage(`{}`))}}
	if _, err := k.SendMessage(t.Context(), "agent", m); !errors.Is(err, ErrTextOnly) || !IsKind(err, KindBadRequest) {
		t.Errorf("SendMessage: %v", err)
	}
	out := k.Deliver(t.Context(), DeliverOptions{AgentID: "agent", Message: m, Send: true})
	if out.State != StateRejected || !errors.Is(out.Err, ErrTextOnly) || out.NotSent() {
		t.Errorf("Deliver: %+v", out)
	}
}
