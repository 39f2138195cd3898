package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/wire"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/textcut"
)

// Part kinds.
const (
	PartText = wire.PartText
	PartFile = wire.PartFile
	PartData = wire.PartData
)

// Part is one part of a message or an artifact (wire.Part).
type Part = wire.Part

// TextPart returns a text part.
func TextPart(text string) Part { return wire.TextPart(text) }

// FilePart returns a file part holding content.
func FilePart(name, mediaType string, content []byte) Part {
	return wire.FilePart(name, mediaType, content)
}

// DataPart returns a data part holding the JSON value v (which
// encodeParts checks). A2A 0.3 takes only JSON objects.
func DataPart(v json.RawMessage) Part { return wire.DataPart(v) }

// Sources of the parts of a reply.
const (
	SourceMessage  = "message"  // the Message the agent answered with
	SourceArtifact = "artifact" // an artifact of the task
	SourceStatus   = "status"   // the task's (final) status message
)

// ReplyPart is one part of an agent's answer, with where it came from.
type ReplyPart struct {
	Part
	// Source is SourceMessage, SourceArtifact or SourceStatus.
	Source string
	// ArtifactID and ArtifactName name the artifact of a SourceArtifact
	// part.
	ArtifactID   string
	ArtifactName string
}

// MaxFilePartBytes caps a file that FilePartFromPath reads: a message
// carries its files inline (base64, a third larger), and servers limit
// request bodies.
const MaxFilePartBytes int64 = 10 << 20

// AttachedFile is a file read to be sent: its part, and what a record may
// keep of it instead of its content.
type AttachedFile struct {
	// Part is the file part (Name the path's base name, MediaType as
	// DetectMediaType says, Bytes the content).
	Part Part
	// Path is the path as given.
	Path string
	// Size is the content's length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the content.
	SHA256 string
}

// FilePartFromPath reads the regular file at path (at most
// MaxFilePartBytes; a directory, FIFO or device is refused) into a file
// part named by the path's base name, with the media type DetectMediaType
// gives, and returns it with the content's size and SHA-256. Errors wrap
// *boundedfile.NotRegularError, *boundedfile.TooLargeError or the os
// package's (fs.ErrNotExist).
func FilePartFromPath(path string) (AttachedFile, error) {
	b, _, err := boundedfile.Read(path, MaxFilePartBytes)
	if err != nil {
		var tl *boundedfile.TooLargeError
		if errors.As(err, &tl) {
			return AttachedFile{}, fmt.Errorf("attach a file: %w (files sent in a message are capped at %s)", err, boundedfile.SizeText(MaxFilePartBytes))
		}
		return AttachedFile{}, fmt.Errorf("attach a file: %w", err)
	}
	name := filepath.Base(path)
	sum := sha256.Sum256(b)
	return AttachedFile{Part: FilePart(name, DetectMediaType(name, b), b), Path: path, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}, nil
}

// extensionTypes are the media types of extensions whose content sniffs as
// plain text (or as nothing in particular), fixed here so that the answer
// does not depend on the machine's mime.types.
var extensionTypes = map[string]string{
	".txt":      "text/plain",
	".text":     "text/plain",
	".log":      "text/plain",
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".ndjson":   "application/x-ndjson",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".xml":      "application/xml",
	".svg":      "image/svg+xml",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".py":       "text/x-python",
	".go":       "text/x-go",
	".sh":       "application/x-sh",
	".sql":      "application/sql",
	".ics":      "text/calendar",
	".pdf":      "application/pdf",
	".docx":     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx":     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx":     "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":      "application/vnd.oasis.opendocument.text",
	".epub":     "application/epub+zip",
	".jar":      "application/java-archive",
}

// genericSniffed are the types content sniffing gives when it sees nothing
// more precise: plain text, unknown bytes, any XML, any ZIP (an office
// document is a ZIP). The extension then says more.
var genericSniffed = map[string]bool{
	"text/plain":               true,
	"application/octet-stream": true,
	"text/xml":                 true,
	"application/zip":          true,
}

// DetectMediaType gives a file's media type, without parameters: the type
// net/http's content sniffing finds (image/png, application/pdf, …), unless
// sniffing finds only a generic type (text/plain, application/octet-stream,
// text/xml, application/zip) and the name's extension says more (.json,
// .csv, .md, .yaml, .docx, …: a fixed table first, then the system's
// mime.TypeByExtension). An unknown binary is application/octet-stream,
// an unknown text text/plain.
func DetectMediaType(name string, content []byte) string {
	sniffed := baseType(http.DetectContentType(content))
	if !genericSniffed[sniffed] {
		return sniffed
	}
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := extensionTypes[ext]; ok {
		return t
	}
	if ext != "" {
		if t := baseType(mime.TypeByExtension(ext)); t != "" {
			return t
		}
	}
	return sniffed
}

func baseType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// encodeParts builds the wire form of a message's parts: the text first
// (when there is one, or when there is nothing else), then parts.
func encodeParts(d Dialect, text string, parts []Part) ([]map[string]any, error) {
	all := parts
	if text != "" || len(parts) == 0 {
		all = append([]Part{TextPart(text)}, parts...)
	}
	out := make([]map[string]any, 0, len(all))
	for i, p := range all {
		w, err := encodePart(d, p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i+1, err)
		}
		out = append(out, w)
	}
	return out, nil
}

func encodePart(d Dialect, p Part) (map[string]any, error) {
	if p.Kind == PartData && nestsTooDeep(unsafeString(bytes.TrimSpace(p.Data))) {
		return nil, fmt.Errorf("a data part nests deeper than %d levels", MaxNesting)
	}
	return wire.EncodePart(d, p)
}

// parseParts reads a part list of either dialect. Parts of a kind this
// client does not know are skipped.
// Past MaxReplyParts parts, one more is read and the rest are not: a list
// that long is over the answer cap (checkAnswer), and reading it whole
// would hold a million parts of a 32 MiB answer.
func parseParts(parts gjson.Result) []Part {
	var out []Part
	parts.ForEach(func(_, p gjson.Result) bool {
		if x, ok := parsePart(p); ok {
			out = append(out, x)
		}
		return len(out) <= MaxReplyParts
	})
	return out
}

func parsePart(p gjson.Result) (Part, bool) {
	out, ok := parsePartWhole(p)
	if ok {
		boundPartMetadata(&out)
	}
	return out, ok
}

func parsePartWhole(p gjson.Result) (Part, bool) { return wire.ParsePart(p) }

// Bounds on what a part received says of itself, applied as it is read:
// the record every listing reads, the lines on stderr and the documents
// an assistant reads carry these, never a server's megabytes.
const (
	// MaxPartName bounds a part's (or an artifact's) name, in bytes: file
	// systems name files in at most 255 bytes.
	MaxPartName = 255
	// MaxMediaType bounds a media type, parameters included: RFC 6838
	// caps the type and the subtype at 127 characters each.
	MaxMediaType = 255
	// MaxPartURL bounds a file part's URL: RFC 9110 asks for at least
	// 8,000 octets to be supported, and browsers take no more than a few
	// times that.
	MaxPartURL = 8 << 10
)

// cutMarker ends a name cut to its bound.
const cutMarker = "…"

// boundPartMetadata bounds the name, the media type and the URL of a part
// read from a server: a name over MaxPartName bytes is cut at a UTF-8
// boundary, with cutMarker; a media type that is not one (RFC 6838: a
// type and a subtype of letters, digits and !#$&-^_.+, at most 127 each,
// then parameters) or is over MaxMediaType is dropped; a URL over
// MaxPartURL is dropped, and Problem says so.
func boundPartMetadata(p *Part) {
	p.Name = BoundName(p.Name)
	if !validMediaType(p.MediaType) {
		p.MediaType = ""
	}
	if len(p.URL) > MaxPartURL {
		p.URL = ""
		p.Problem = fmt.Sprintf("the file's URL is longer than %s, and was not kept", byteSize(MaxPartURL))
	}
}

// BoundName cuts a name a server gave (a part's, an artifact's) to
// MaxPartName bytes, at a UTF-8 boundary, ending it with "…" when cut.
func BoundName(s string) string {
	if len(s) <= MaxPartName {
		return s
	}
	return strings.ToValidUTF8(textcut.Prefix(s, MaxPartName-len(cutMarker)), "") + cutMarker
}

// validMediaType reports whether s is a media type worth keeping: at most
// MaxMediaType bytes, type/subtype as RFC 6838 names them (restricted
// names of at most 127 characters), and parameters mime reads, with no
// control byte (below 0x20, or DEL): mime.ParseMediaType takes ESC, BEL
// and tabs inside a quoted value, and a media type is shown on terminals.
func validMediaType(s string) bool {
	if s == "" || len(s) > MaxMediaType {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	full, _, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(full), "/")
	if !ok || !restrictedName(typ) || !restrictedName(sub) {
		return false
	}
	_, _, err := mime.ParseMediaType(s)
	return err == nil
}

// restrictedName is RFC 6838's restricted-name: a letter or digit, then
// up to 126 of letters, digits and !#$&-^_.+.
func restrictedName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("!#$&-^_.+", rune(c))) {
			return false
		}
	}
	return true
}

// textOf joins the text of the text parts of parts with sep.
func textOf(parts []Part, sep string) string {
	var texts []string
	for _, p := range parts {
		if p.Kind == PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}

// replyParts labels parts with their source.
func replyParts(source string, parts []Part) []ReplyPart {
	out := make([]ReplyPart, 0, len(parts))
	for _, p := range parts {
		out = append(out, ReplyPart{Part: p, Source: source})
	}
	return out
}

// composeAnswer is a task's whole answer: its artifacts' text, then its
// final status message's text when there is one that the artifacts do not
// already end with (compared without surrounding space, and only as a
// whole word or more: "… undone" does not end with "done").
func composeAnswer(artifactText, statusText string) string {
	a, s := strings.TrimSpace(artifactText), strings.TrimSpace(statusText)
	switch {
	case s == "":
		return artifactText
	case a == "":
		return statusText
	case endsWithWords(a, s):
		return artifactText
	case strings.HasSuffix(artifactText, "\n"):
		return artifactText + statusText
	}
	return artifactText + "\n" + statusText
}

// endsWithWords reports whether a ends with s, s starting at a word's
// start in a (a is s, or the rune before it is not a letter or digit).
func endsWithWords(a, s string) bool {
	if !strings.HasSuffix(a, s) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(a[:len(a)-len(s)])
	first, _ := utf8.DecodeRuneInString(s)
	return len(a) == len(s) || !isWordRune(before) || !isWordRune(first)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
