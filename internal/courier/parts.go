package courier

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/termui"
	"github.com/a2a-courier/a2a-courier/store"
)

// InputError refuses what a caller asked to send before anything is
// recorded or sent: a file that cannot be attached, data that is not JSON,
// parts an agent does not take. Hint says what to do instead. Both are
// texts rendered for the caller where printed: they name flags (--file),
// which the MCP server's tools name otherwise (files).
type InputError struct {
	Message, Hint nextstep.Text
}

func (e *InputError) Error() string { return e.Message.String() }

// MaxPartsBytes caps the files and data of one message together (each file
// is capped at client.MaxFilePartBytes): they travel inline, base64, in one
// request.
const MaxPartsBytes = 32 << 20

// Attach reads the files at paths and the JSON values of data into the
// parts of a message, in that order: each file a regular file of at most
// client.MaxFilePartBytes, its media type from its content and name; each
// data value one JSON value. Errors are *InputError.
func Attach(paths, data []string) ([]client.Part, error) {
	var parts []client.Part
	total := int64(0)
	for _, p := range paths {
		f, err := client.FilePartFromPath(p)
		if err != nil {
			return nil, attachError(p, err)
		}
		if total += f.Size; total > MaxPartsBytes {
			return nil, &InputError{Message: nextstep.Plain(fmt.Sprintf("the files of the message come to %s, over the %s a message may carry", boundedfile.SizeText(total), boundedfile.SizeText(MaxPartsBytes))),
				Hint: nextstep.Plain("send fewer or smaller files, in several messages")}
		}
		parts = append(parts, f.Part)
	}
	for i, d := range data {
		value, what := []byte(d), "--data "+quoteShort(d, 40)
		if len(data) > 1 {
			what = fmt.Sprintf("--data value %d (%s)", i+1, quoteShort(d, 40))
		}
		if path, ok := strings.CutPrefix(d, "@"); ok {
			// From a file, as curl reads one: the value stays out of the
			// command line other processes can read.
			b, _, err := boundedfile.Read(path, MaxPartsBytes)
			if err != nil {
				return nil, dataFileError(path, err)
			}
			value, what = b, "--data @"+path
		}
		// Compact, as it goes on the wire: what the record says of it is
		// what the agent gets.
		var raw bytes.Buffer
		if err := json.Compact(&raw, value); err != nil || raw.Len() == 0 {
			why := "it is empty"
			if err != nil {
				why = err.Error()
			}
			return nil, &InputError{Message: nextstep.Plain(fmt.Sprintf("%s is not one JSON value: %s", what, why)),
				Hint: nextstep.Plain(`give one JSON value, quoted for the shell (--data '{"key":"value"}'), or a file of one: --data @value.json`)}
		}
		if total += int64(raw.Len()); total > MaxPartsBytes {
			return nil, &InputError{Message: nextstep.Plain(fmt.Sprintf("the files and data of the message are over the %s a message may carry", boundedfile.SizeText(MaxPartsBytes))),
				Hint: nextstep.Plain("send less data, in several messages")}
		}
		p := client.DataPart(raw.Bytes())
		p.MediaType = "application/json"
		parts = append(parts, p)
	}
	return parts, nil
}

// quoteShort quotes s for a message, cut at n bytes.
func quoteShort(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return strconv.Quote(s)
}

func dataFileError(path string, err error) error {
	var tl *boundedfile.TooLargeError
	switch {
	case errors.As(err, &tl):
		return &InputError{Message: nextstep.Plain(fmt.Sprintf("--data @%s is over the %s a message may carry", path, boundedfile.SizeText(tl.Max))),
			Hint: nextstep.Plain("send less data, in several messages")}
	case errors.Is(err, fs.ErrNotExist):
		return &InputError{Message: nextstep.Plain("--data @" + path + ": no such file"), Hint: nextstep.Plain("check the path (a value that starts with @ names a file)")}
	}
	return &InputError{Message: nextstep.Plain("--data @" + path + ": " + OneLine(err)), Hint: nextstep.Plain("a value that starts with @ names a regular file of one JSON value")}
}

func attachError(path string, err error) error {
	var tl *boundedfile.TooLargeError
	var nr *boundedfile.NotRegularError
	switch {
	case errors.As(err, &tl):
		return &InputError{Message: nextstep.Plain(fmt.Sprintf("file %s is %s, over the %s cap on a file sent in a message", path, boundedfile.SizeText(tl.Size), boundedfile.SizeText(tl.Max))),
			Hint: nextstep.Plain("send a smaller file: cut or compress it, or send its parts in several messages")}
	case errors.As(err, &nr):
		return &InputError{Message: nextstep.Say("%s %s", nextstep.Opt("--file"), nr.Error()), Hint: nextstep.Plain("attach regular files only")}
	case errors.Is(err, fs.ErrNotExist):
		return &InputError{Message: nextstep.Say("%s %s: no such file", nextstep.Opt("--file"), path), Hint: nextstep.Plain("check the path")}
	}
	return &InputError{Message: nextstep.Plain(OneLine(err)), Hint: nextstep.Plain("check the file's path and permissions")}
}

// CheckParts refuses parts the target does not take, before anything is
// sent: Agent Builder agents take text only, and A2A 0.3 data parts are
// JSON objects.
func CheckParts(t store.Target, parts []client.Part) error {
	if len(parts) == 0 {
		return nil
	}
	if t.Kind == store.TargetKibana {
		return &InputError{Message: nextstep.Say("Agent Builder agents take text only: %s and %s cannot be sent to them; nothing was sent", nextstep.Opt("--file"), nextstep.Opt("--data")),
			Hint: nextstep.Say("put what the agent needs in the message text, or send the files to an A2A agent that takes them (%s, or a peer)", nextstep.Opt("--url"))}
	}
	for i, p := range parts {
		if p.Kind == client.PartData && t.Dialect == string(client.V03) && !bytes.HasPrefix(bytes.TrimSpace(p.Data), []byte("{")) {
			return &InputError{Message: nextstep.Say("this agent speaks A2A 0.3, whose data parts are JSON objects, and %s value %d is not one", nextstep.Opt("--data"), i+1-countFiles(parts)),
				Hint: nextstep.Say("wrap the value in an object: %s", nextstep.Arg{Flag: "--data", Value: `{"value": …}`})}
		}
	}
	return nil
}

func countFiles(parts []client.Part) int {
	n := 0
	for _, p := range parts {
		if p.Kind == client.PartFile {
			n++
		}
	}
	return n
}

// describeParts is what a record keeps of parts: kind, name, media type,
// size and SHA-256, never the content.
func describeParts(parts []client.Part) []store.Part {
	var out []store.Part
	for _, p := range parts {
		content := p.Bytes
		if p.Kind == client.PartData {
			content = p.Data
		}
		out = append(out, store.Part{Kind: p.Kind, Name: p.Name, MediaType: p.MediaType, Size: int64(len(content)), SHA256: sha256Hex(content)})
	}
	return out
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// spooledPart is a part in the spool: what the record keeps, and the
// content.
type spooledPart struct {
	Kind      string `json:"kind"`
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Bytes     []byte `json:"bytes,omitempty"`
	Data      []byte `json:"data,omitempty"` // base64: kept byte for byte
}

// spoolParts keeps the parts' content for whoever sends the record.
func (c *Courier) spoolParts(rec *store.Record, parts []client.Part) error {
	if len(parts) == 0 {
		return nil
	}
	sp := make([]spooledPart, 0, len(parts))
	for _, p := range parts {
		sp = append(sp, spooledPart{Kind: p.Kind, Name: p.Name, MediaType: p.MediaType, Bytes: p.Bytes, Data: p.Data})
	}
	b, err := json.Marshal(sp)
	if err != nil {
		return err
	}
	if int64(len(b)) > spoolCap(rec.Parts) {
		// Never written: no worker would read it back (spooledParts).
		return &InputError{Message: nextstep.Plain(fmt.Sprintf("the files and data of the message are over the %s a message may carry", boundedfile.SizeText(MaxPartsBytes))),
			Hint: nextstep.Plain("send fewer or smaller files, in several messages")}
	}
	return c.Store.WriteSpool(rec.ContextID, rec.MessageID, b)
}

// spoolPartFraming bounds what the spool's JSON adds to a part beside its
// content, name and media type: its keys, quotes and kind, a comma, and
// the padding of its own base64.
const spoolPartFraming = 128

// spoolCap is the most the spool of a message of these parts holds as
// spoolParts writes it: the contents, at most MaxPartsBytes together, in
// base64; each name and media type escaped (at most six bytes a byte:
// \u003c); the JSON around them. A spool over it is not one of ours.
func spoolCap(parts []store.Part) int64 {
	var total, framing int64
	for _, p := range parts {
		total = min(total+min(max(p.Size, 0), MaxPartsBytes), MaxPartsBytes)
		framing += spoolPartFraming + 6*int64(len(p.Name)+len(p.MediaType))
	}
	return int64(base64.StdEncoding.EncodedLen(int(total))) + framing + 2
}

// errPartsGone means the content of a record's parts is no longer in the
// spool, or no longer what the record says it is.
var errPartsGone = errors.New("the files and data of the message are no longer in the state directory as they were recorded")

// spooledParts reads back the parts of a record to be sent, checking each
// against what the record keeps of it (kind, size, SHA-256).
func (c *Courier) spooledParts(rec *store.Record) ([]client.Part, error) {
	if len(rec.Parts) == 0 {
		return nil, nil
	}
	b, err := c.Store.ReadSpool(rec.ContextID, rec.MessageID, spoolCap(rec.Parts))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", errPartsGone, err)
	}
	var sp []spooledPart
	if err := json.Unmarshal(b, &sp); err != nil || len(sp) != len(rec.Parts) {
		return nil, fmt.Errorf("%w (the spool is damaged)", errPartsGone)
	}
	parts := make([]client.Part, 0, len(sp))
	for _, s := range sp {
		p := client.Part{Kind: s.Kind, Name: s.Name, MediaType: s.MediaType, Bytes: s.Bytes, Data: s.Data}
		parts = append(parts, p)
	}
	for i, d := range describeParts(parts) {
		if d != rec.Parts[i] {
			return nil, fmt.Errorf("%w (part %d, %s, changed)", errPartsGone, i+1, nonEmptyName(d))
		}
	}
	return parts, nil
}

func nonEmptyName(p store.Part) string {
	if p.Name != "" {
		return p.Name
	}
	return p.Kind
}

// keepReplyParts keeps the parts of a reply in the record x: files saved
// (in x.OutDir, else beside the record, ReplyFilesDir), each named in its
// part with its size and SHA-256; data as sent; texts with their text while
// the reply itself is kept in the record (ReplyFile empty). st nil: files
// are saved only to x.OutDir. A file that cannot be saved is an error: the
// reply is not whole without it.
func keepReplyParts(st *store.Store, x *store.Record, parts []client.ReplyPart) error {
	x.ReplyParts = nil
	if len(parts) > client.MaxReplyParts {
		// (The client refuses such an answer as over its cap: this holds
		// the bound on the files saved whatever brought the parts.)
		return fmt.Errorf("the reply has %d parts, more than the %d a2a-courier keeps", len(parts), client.MaxReplyParts)
	}
	texts := 0
	for _, p := range parts {
		if p.Kind == client.PartText {
			texts += len(p.Text)
		}
	}
	for _, p := range parts {
		rp := store.ReplyPart{Source: p.Source, Kind: p.Kind, Name: p.Name, MediaType: p.MediaType, URL: p.URL, Artifact: p.ArtifactName, Problem: p.Problem}
		switch p.Kind {
		case client.PartText:
			rp.Size = int64(len(p.Text))
			if x.ReplyFile == "" && (texts <= maxInlinePart || !strings.Contains(x.Reply, p.Text)) {
				// (Larger texts the reply holds, joined, are not kept
				// twice; one it does not hold, an input-required task's
				// artifact say, is kept here.)
				rp.Text = p.Text
			}
		case client.PartData:
			// Compact, as the record and the documents write it.
			var b bytes.Buffer
			if json.Compact(&b, p.Data) != nil {
				b.Reset()
				b.Write(p.Data)
			}
			rp.Size, rp.SHA256 = int64(b.Len()), sha256Hex(b.Bytes())
			if b.Len() <= maxInlinePart {
				rp.Data = b.Bytes()
				break
			}
			// Large data is saved as a file, as a file part is: the record,
			// read by every listing, stays small.
			path, err := saveReplyFile(st, x, nonEmpty(p.Name, "data")+".json", "application/json", b.Bytes())
			if err != nil {
				return fmt.Errorf("save the reply's data: %w", err)
			}
			rp.Path = path
		case client.PartFile:
			if p.URL == "" {
				path, err := saveReplyFile(st, x, p.Name, p.MediaType, p.Bytes)
				if err != nil {
					return fmt.Errorf("save the reply's file %s: %w", store.SafeFileName(p.Name), err)
				}
				rp.Path, rp.Size, rp.SHA256 = path, int64(len(p.Bytes)), sha256Hex(p.Bytes)
			}
		}
		x.ReplyParts = append(x.ReplyParts, rp)
	}
	return nil
}

// maxInlinePart bounds what a record keeps of a reply's parts inline: a
// data part larger is saved as a .json file, and texts larger in all are
// left to the reply (which holds them joined).
const maxInlinePart = 64 << 10

func saveReplyFile(st *store.Store, x *store.Record, name, mediaType string, content []byte) (string, error) {
	dir := x.OutDir
	if dir == "" {
		if st == nil {
			return "", errors.New("no state directory to save it in, and no --out directory")
		}
		d, err := st.ReplyFilesDir(ReplyName(x))
		if err != nil {
			return "", err
		}
		dir = d
	}
	if name == "" {
		// A nameless file is named after its type.
		t := nonEmpty(mediaType, client.DetectMediaType("", content))
		name = "file" + commonExtensions[t]
		if exts, _ := mime.ExtensionsByType(t); commonExtensions[t] == "" && len(exts) > 0 {
			name += exts[0]
		}
	}
	return store.SaveFile(dir, name, content)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// commonExtensions name nameless files of the usual types (the system's
// table lists several extensions for them, in no useful order).
var commonExtensions = map[string]string{
	"text/plain": ".txt", "text/markdown": ".md", "text/csv": ".csv", "text/html": ".html", "application/json": ".json",
	"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "application/zip": ".zip",
}

// OutDir checks a directory given for the reply's files (send --out) and
// makes it absolute: a worker that saves them has another working
// directory. "" stays "" (beside the record). A directory still missing is
// made when a file is saved.
func OutDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &InputError{Message: nextstep.Plain("--out " + dir + ": " + OneLine(err)), Hint: nextstep.Plain("give a directory for the reply's files")}
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return "", &InputError{Message: nextstep.Plain("--out " + dir + " is not a directory"), Hint: nextstep.Plain("give a directory for the reply's files (it is made when missing)")}
	}
	return abs, nil
}

// PartNotes says, one line a part, where the files and data of a reply
// are: for a person reading stderr beside the reply's text on stdout.
func PartNotes(parts []store.ReplyPart) []string {
	var notes []string
	for _, p := range parts {
		// Names, types and URLs are the agent's: no control characters
		// reach the terminal.
		name, what, url := printable(nonEmpty(p.Name, "(no name)")), printable(nonEmpty(p.MediaType, "unknown type")), printable(p.URL)
		switch {
		case p.Kind == client.PartFile && p.Path != "":
			notes = append(notes, fmt.Sprintf("file %s (%s, %s) saved to %s", name, what, boundedfile.SizeText(p.Size), p.Path))
		case p.Kind == client.PartFile:
			notes = append(notes, fmt.Sprintf("file %s (%s) at %s, not downloaded", name, what, url))
		case p.Kind == client.PartData && p.Path != "":
			notes = append(notes, fmt.Sprintf("data (%s, %s) saved to %s", printable(nonEmpty(p.MediaType, "JSON")), boundedfile.SizeText(p.Size), p.Path))
		case p.Kind == client.PartData && p.MediaType == "":
			notes = append(notes, fmt.Sprintf("data (%s): in --json's parts", boundedfile.SizeText(p.Size)))
		case p.Kind == client.PartData:
			notes = append(notes, fmt.Sprintf("data (%s, %s): in --json's parts", what, boundedfile.SizeText(p.Size)))
		}
	}
	return notes
}

// printable is s on one line, with nothing a terminal would act on: the
// scrubber of every server text shown to a person (termui.SingleLine).
func printable(s string) string { return termui.SingleLine(s) }

// CutPartTexts is parts without the texts of text parts (their size
// kept): for a reply shown cut, whose whole is in a file.
func CutPartTexts(parts []store.ReplyPart) []store.ReplyPart {
	out := slices.Clone(parts)
	for i := range out {
		out[i].Text = ""
	}
	return out
}
