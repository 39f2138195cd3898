package client

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// FuzzPartMetadata reads a file part of any name, media type and URL (in
// either dialect's spelling, as a server writes it) and checks the bounds
// parsePart keeps:
//
//   - the name is at most MaxPartName bytes: the one sent when it fits
//     (a blank v0.3 name is none),
//     else a prefix of it cut at a rune's start, ending "…", valid UTF-8
//     when the name sent was;
//   - the media type is "" or the one sent, then at most MaxMediaType
//     bytes, a type and a subtype of RFC 6838's characters, and no control
//     byte (below 0x20, or DEL);
//   - the URL is the one sent when it is at most MaxPartURL bytes, else ""
//     with a Problem saying so;
//   - an artifact's name keeps the name's bounds, its id at most
//     MaxPartName bytes, and two ids are told apart as they were.
func FuzzPartMetadata(f *testing.F) {
	f.Add("report.csv", "text/csv", "https://x.example/r.csv", false, 0)
	f.Add(strings.Repeat("é", 200), "text/plain; charset=utf-8", "", true, 300)
	f.Add(strings.Repeat("<", 300), "not a type", strings.Repeat("u", 9000), false, 256)
	f.Add("a\xffb", "TEXT/X.Y+Z", "\x00", true, 255)
	f.Add("", "text/"+strings.Repeat("x", 127), "u", false, 1)
	f.Add("x", "text/plain;", "u", true, 0)
	f.Add("x", "text/plain; a=\"\x1b]52;c;aGk=\x07\"", "u", false, 0)
	f.Fuzz(func(t *testing.T, name, mediaType, url string, v10 bool, idLen int) {
		var raw []byte
		if v10 {
			raw, _ = json.Marshal(map[string]string{"filename": name, "mediaType": mediaType, "url": url})
		} else {
			raw, _ = json.Marshal(map[string]any{"kind": "file", "file": map[string]string{"name": name, "mimeType": mediaType, "uri": url}})
		}
		sent := gjson.ParseBytes(raw) // what the server wrote, as JSON carries it
		sentName, sentType, sentURL := sent.Get("filename").String(), sent.Get("mediaType").String(), sent.Get("url").String()
		if !v10 {
			sentName, sentType, sentURL = sent.Get("file.name").String(), sent.Get("file.mimeType").String(), sent.Get("file.uri").String()
		}
		p, ok := parsePart(sent)
		if !ok || p.Kind != PartFile {
			t.Fatalf("a file part was not read as one: %s", raw)
		}
		if !v10 && strings.TrimSpace(sentName) == "" {
			sentName = "" // a blank v0.3 name is none (then v1.0's filename, absent here)
		}
		checkName(t, sentName, p.Name)
		if p.MediaType != "" && (p.MediaType != sentType || len(p.MediaType) > MaxMediaType || !validMediaType(p.MediaType) ||
			strings.ContainsFunc(p.MediaType, func(r rune) bool { return r < 0x20 || r == 0x7f })) {
			t.Fatalf("media type %q kept of %q", p.MediaType, sentType)
		}
		if sentType == "text/csv" && p.MediaType != "text/csv" {
			t.Fatalf("an ordinary media type was dropped")
		}
		switch {
		case len(sentURL) <= MaxPartURL && sentURL != "" && p.URL != sentURL:
			t.Fatalf("a URL of %d bytes was not kept", len(sentURL))
		case len(sentURL) > MaxPartURL && (p.URL != "" || !strings.Contains(p.Problem, "URL is longer")):
			t.Fatalf("a URL of %d bytes kept as %d bytes, problem %q", len(sentURL), len(p.URL), p.Problem)
		}
		id := strings.Repeat("i", max(0, min(idLen, 4096)))
		a := parseArtifact(gjson.Parse(`{"artifactId":` + quoteJSON(id) + `,"name":` + quoteJSON(sentName) + `}`))
		other := parseArtifact(gjson.Parse(`{"artifactId":` + quoteJSON(id+"j") + `}`))
		checkName(t, sentName, a.Name)
		if len(a.ID) > MaxPartName || len(id) <= MaxPartName && a.ID != id || a.ID == other.ID {
			t.Fatalf("artifact id of %d bytes kept as %q (the other %q)", len(id), a.ID, other.ID)
		}
	})
}

// checkName checks a name kept of the name sent.
func checkName(t *testing.T, sent, kept string) {
	t.Helper()
	switch {
	case len(kept) > MaxPartName:
		t.Fatalf("a name of %d bytes kept", len(kept))
	case len(sent) <= MaxPartName && kept != sent:
		t.Fatalf("a name that fits was changed: %q to %q", sent, kept)
	case len(sent) > MaxPartName && (!strings.HasSuffix(kept, "…") || !strings.HasPrefix(sent, strings.TrimSuffix(kept, "…"))):
		t.Fatalf("a name of %d bytes cut as %q", len(sent), kept)
	case utf8.ValidString(sent) && !utf8.ValidString(kept):
		t.Fatalf("a valid name cut in a rune: %q", kept)
	}
}
