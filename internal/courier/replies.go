package courier

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/a2a-courier/a2a-courier/store"
)

// Replies kept in the record, and cut in output.
const (
	// maxRecordReply is the largest reply kept in the record itself; a
	// larger one goes to a file of its own in $STATE/replies/ (0600), named
	// by the record, so that a record stays small to read, write and list.
	maxRecordReply = 4 << 20
	// SpilledReplyCut is how much of a reply kept in a file the output
	// shows, unless --max-chars asks for less: the rest is in the file the
	// marker names.
	SpilledReplyCut = 1 << 20
)

// keepReply puts a reply in the record, or in its own file when it is over
// maxRecordReply (st nil: the reply stays in the record, shown once and
// kept nowhere).
func keepReply(st *store.Store, x *store.Record, reply string) error {
	x.ReplyFile, x.ReplyBytes = "", 0
	if len(reply) <= maxRecordReply {
		x.Reply = reply
		return nil
	}
	if st == nil {
		x.Reply = reply // shown once, kept nowhere
		return nil
	}
	// In place but not synced (store.ErrNotDurable) is kept: the record
	// names the file every reader finds.
	file, err := st.WriteReply(ReplyName(x), reply)
	if !store.InPlace(err) {
		return err
	}
	x.Reply, x.ReplyFile, x.ReplyBytes = "", file, len(reply)
	return nil
}

// ReplyName is the name of the file that keeps the whole reply of a
// record's message in $STATE/replies/: its contextId and a digest of its
// messageId, so that the replies of two messages of one conversation (a
// follow-up sent with --context archives the record before it) never share
// a file.
func ReplyName(x *store.Record) string {
	if x.MessageID == "" {
		return x.ContextID
	}
	sum := sha256.Sum256([]byte(x.MessageID))
	return x.ContextID + "." + hex.EncodeToString(sum[:6])
}

// CutText shortens text to maxChars characters (runes), saving the whole
// text in a private file (0600) of the state directory named in the
// marker. It returns the text to print, the file ("" when nothing was cut)
// and the length of the whole text in characters. maxChars 0 cuts nothing.
func CutText(what, text string, maxChars int, name string, st *store.Store) (string, string, int, error) {
	if maxChars <= 0 || len(text) <= maxChars {
		return text, "", 0, nil
	}
	total := utf8.RuneCountInString(text)
	if total <= maxChars {
		return text, "", 0, nil
	}
	end, count := 0, 0
	for i := range text {
		if count == maxChars {
			end = i
			break
		}
		count++
	}
	if st == nil {
		return "", "", 0, fmt.Errorf("cannot save the whole %s: the state directory is not available", what)
	}
	file, err := st.WriteReply(name, text) // in place but not synced: saved
	if !store.InPlace(err) {
		return "", "", 0, fmt.Errorf("save the whole %s: %w", what, err)
	}
	marker := fmt.Sprintf("\n[… %s cut at %d of %d characters; the whole %s is in %s]", what, maxChars, total, what, file)
	return text[:end] + marker, file, total, nil
}

// ReadPrefix reads the first n characters of a reply's file and counts its
// characters (Unicode code points), reading it once, a piece at a time.
// Only a regular file is read, never through a link (store.OpenReply).
func ReadPrefix(path string, n int) (string, int, error) {
	f, err := store.OpenReply(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var b strings.Builder
	total := 0
	for {
		c, _, err := r.ReadRune()
		if err == io.EOF {
			return b.String(), total, nil
		}
		if err != nil {
			return "", 0, err
		}
		if total < n {
			b.WriteRune(c)
		}
		total++
	}
}
