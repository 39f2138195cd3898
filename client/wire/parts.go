package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Part kinds.
const (
	PartText = "text"
	PartFile = "file"
	PartData = "data"
)

// Part is one part of a message or an artifact, in either dialect: a text,
// a file (its bytes, or a URL that names it) or data (any JSON value).
type Part struct {
	// Kind is PartText, PartFile or PartData.
	Kind string
	// Text is a text part's text.
	Text string
	// Name is a file's name (v0.3 file.name, v1.0 filename); v1.0 lets
	// any part carry one.
	Name string
	// MediaType is the part's media type (v0.3 file.mimeType, v1.0
	// mediaType), "" when the sender gave none.
	MediaType string
	// Bytes is a file part's content, decoded from base64.
	Bytes []byte
	// URL is where a file part given by reference is (v0.3 file.uri,
	// v1.0 url); nothing is fetched from it.
	URL string
	// Data is a data part's JSON value as sent.
	Data json.RawMessage
	// Problem says why a part received could not be read whole (bytes
	// that are not base64); the rest of the part is kept.
	Problem string
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// FilePart returns a file part holding content.
func FilePart(name, mediaType string, content []byte) Part {
	return Part{Kind: PartFile, Name: name, MediaType: mediaType, Bytes: content}
}

// DataPart returns a data part holding the JSON value v (which
// encodeParts checks). A2A 0.3 takes only JSON objects.
func DataPart(v json.RawMessage) Part { return Part{Kind: PartData, Data: v} }

// EncodePart is the wire form of p in dialect d. A data part must hold
// one JSON value (the client bounds its nesting before).
func EncodePart(d Dialect, p Part) (map[string]any, error) {
	switch p.Kind {
	case PartText, "":
		if d == V10 {
			w := map[string]any{"text": p.Text}
			if p.MediaType != "" {
				w["mediaType"] = p.MediaType
			}
			return w, nil
		}
		return map[string]any{"kind": "text", "text": p.Text}, nil
	case PartFile:
		if p.URL != "" && len(p.Bytes) > 0 {
			return nil, errors.New("a file part holds its bytes or a URL, not both")
		}
		if d == V10 {
			w := map[string]any{}
			if p.URL != "" {
				w["url"] = p.URL
			} else {
				w["raw"] = base64.StdEncoding.EncodeToString(p.Bytes)
			}
			if p.Name != "" {
				w["filename"] = p.Name
			}
			if p.MediaType != "" {
				w["mediaType"] = p.MediaType
			}
			return w, nil
		}
		f := map[string]any{}
		if p.URL != "" {
			f["uri"] = p.URL
		} else {
			f["bytes"] = base64.StdEncoding.EncodeToString(p.Bytes)
		}
		if p.Name != "" {
			f["name"] = p.Name
		}
		if p.MediaType != "" {
			f["mimeType"] = p.MediaType
		}
		return map[string]any{"kind": "file", "file": f}, nil
	case PartData:
		raw := bytes.TrimSpace(p.Data)
		if len(raw) == 0 || !json.Valid(raw) {
			return nil, errors.New("a data part must hold one JSON value")
		}
		if d == V10 {
			w := map[string]any{"data": json.RawMessage(raw)}
			if p.MediaType != "" {
				w["mediaType"] = p.MediaType
			}
			return w, nil
		}
		if raw[0] != '{' {
			return nil, errors.New("A2A 0.3 data parts hold JSON objects only; wrap the value in an object")
		}
		return map[string]any{"kind": "data", "data": json.RawMessage(raw)}, nil
	}
	return nil, fmt.Errorf("unknown part kind %q", p.Kind)
}

// DataPartCompat is the metadata flag with which a2a-js's 0.3 layer wraps
// a data value that is not an object as {"value": v}.
const DataPartCompat = "data_part_compat"

// ParsePart reads a part of either dialect (and the pre-0.3 "type"
// spelling); ok is false for a part of a kind not known.
func ParsePart(p gjson.Result) (Part, bool) {
	kind := p.Get("kind").String()
	if kind == "" {
		kind = p.Get("type").String() // the pre-0.3 spelling
	}
	out := Part{Name: p.Get("filename").String(), MediaType: p.Get("mediaType").String()}
	switch {
	case kind == "text" || kind == "" && p.Get("text").Exists():
		out.Kind, out.Text = PartText, p.Get("text").String()
	case kind == "file":
		f := p.Get("file")
		out.Kind = PartFile
		out.Name = nonEmpty(f.Get("name").String(), out.Name)
		out.MediaType = nonEmpty(f.Get("mimeType").String(), out.MediaType)
		// fileWithBytes / fileWithUri: the v0.3 proto's names, which some
		// servers write.
		b := firstOf(f, "bytes", "fileWithBytes")
		switch {
		case b.Exists():
			out.Bytes, out.Problem = decodeBase64(b.String())
		case firstOf(f, "uri", "fileWithUri").Exists():
			out.URL = firstOf(f, "uri", "fileWithUri").String()
		default:
			out.Problem = "the file part has neither bytes nor a uri"
		}
	case kind == "data" || kind == "" && p.Get("data").Exists():
		d := p.Get("data")
		out.Kind = PartData
		if kind == "data" && p.Get("metadata."+DataPartCompat).Bool() && d.IsObject() && d.Get("value").Exists() {
			d = d.Get("value")
		}
		out.Data = json.RawMessage(d.Raw)
	case kind == "" && p.Get("raw").Exists():
		out.Kind = PartFile
		out.Bytes, out.Problem = decodeBase64(p.Get("raw").String())
	case kind == "" && p.Get("url").Exists():
		out.Kind, out.URL = PartFile, p.Get("url").String()
	default:
		return Part{}, false
	}
	return out, true
}

func firstOf(r gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		if v := r.Get(k); v.Exists() {
			return v
		}
	}
	return gjson.Result{}
}

// decodeBase64 reads base64 in any of its usual forms (padded or not,
// standard or URL-safe alphabet, with line breaks).
func decodeBase64(s string) ([]byte, string) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if b == nil {
				b = []byte{}
			}
			return b, ""
		}
	}
	return nil, "the file's bytes are not base64"
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
