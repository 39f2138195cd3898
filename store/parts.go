package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/filename"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// Part is what a record keeps of a file or data part its message carries
// beside the text: what it is, never its content.
type Part struct {
	// Kind is "file" or "data".
	Kind string `json:"kind"`
	// Name is a file's name (its base name, as sent).
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	// Size and SHA256 are the content's length in bytes and its hex
	// SHA-256: a file's bytes, a data part's JSON as sent.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ReplyPart is one part of an agent's answer as a record keeps it: a
// text (its text while the reply is kept in the record), a file (saved to
// Path, or named by URL, never fetched) or data (its JSON as sent).
type ReplyPart struct {
	// Source is "message", "artifact" or "status": where the part came
	// from (the Message answered, an artifact of the task, its final
	// status message).
	Source string `json:"source"`
	// Kind is "text", "file" or "data".
	Kind      string `json:"kind"`
	Text      string `json:"text,omitempty"`
	Name      string `json:"name,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	// Size is the text's, the file's or the data's length in bytes.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	// Path is where a file's bytes were saved.
	Path string `json:"path,omitempty"`
	// URL is where a file given by reference is.
	URL  string          `json:"url,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Artifact names the artifact of a part of Source "artifact".
	Artifact string `json:"artifact,omitempty"`
	// Problem says why a part could not be read or saved whole.
	Problem string `json:"problem,omitempty"`
}

func (s *Store) spoolDir() string { return filepath.Join(s.dir, "spool") }

func (s *Store) spoolName(id, messageID string) (string, error) {
	if err := CheckContextID(id); err != nil {
		return "", err
	}
	if !validID(messageID) {
		return "", fmt.Errorf("invalid messageId %q", shorten(messageID, 60))
	}
	return id + "." + messageID + ".parts", nil
}

// WriteSpool keeps the content of a message's parts (files, data) for the
// worker that sends it, in a private file (0600) of the state directory
// named by the context and the message. The record keeps what the parts
// are, never their content; the spool goes when the record is final.
func (s *Store) WriteSpool(id, messageID string, content []byte) error {
	name, err := s.spoolName(id, messageID)
	if err != nil {
		return err
	}
	if err := ensurePrivateDir(s.spoolDir()); err != nil {
		return s.unwritable(err)
	}
	// In place but not synced (ErrNotDurable) counts as kept: a machine's
	// crash that lost it leaves a record whose spool is missing, which its
	// worker ends failed, nothing sent.
	if err := s.writeAtomic(s.spoolDir(), name, content); !InPlace(err) {
		return s.unwritable(err)
	}
	return nil
}

// ReadSpool returns what WriteSpool kept, at most max bytes (the most the
// caller's spool of that message can hold); an error wrapping
// fs.ErrNotExist when there is none. The spool is read as the store's own
// file (readOwnFile): anything but a regular file (a FIFO, which would
// block the worker for ever, a link to /dev/zero, which has no end) and a
// file over max are refused, never read.
func (s *Store) ReadSpool(id, messageID string, max int64) ([]byte, error) {
	name, err := s.spoolName(id, messageID)
	if err != nil {
		return nil, err
	}
	b, err := readOwnFile(filepath.Join(s.spoolDir(), name), max)
	var nr *boundedfile.NotRegularError
	var tl *boundedfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return nil, fmt.Errorf("the spool is %s, not a regular file", boundedfile.Kind(nr.Mode))
	case errors.As(err, &tl):
		return nil, fmt.Errorf("the spool is over the %s its parts can take", boundedfile.SizeText(max))
	}
	return b, err
}

// RemoveSpool removes a message's spool, if any.
func (s *Store) RemoveSpool(id, messageID string) {
	if name, err := s.spoolName(id, messageID); err == nil {
		os.Remove(filepath.Join(s.spoolDir(), name))
	}
}

// ReplyFilesDir is the directory beside the records where the files of a
// reply are saved: replies/<name>.files/, name being that of the reply's
// own file (a contextId, and a digest of the messageId).
func (s *Store) ReplyFilesDir(name string) (string, error) {
	if !validID(name) {
		return "", fmt.Errorf("invalid reply name %q", shorten(name, 60))
	}
	return filepath.Join(s.repliesDir(), name+".files"), nil
}

// SaveFile writes content as a new file of dir (created 0700 when
// missing), named after name made safe (SafeFileName): never over a file
// already there; a name taken gets "-2", "-3", … up to "-100" before its
// extension, and past those the first 12 hex digits of the content's
// SHA-256 ("report-3f6c2e1a7b4d.txt", then "-2", … after that), so that
// any number of files of one name are all saved. When a file of one of
// those names holds the same content already, its path is returned, and
// nothing is written. The file is private to its owner (0600) and whole
// once it has its name. It returns the file's path.
func SaveFile(dir, name string, content []byte) (string, error) {
	if err := ownfile.MkdirAll(dir); err != nil {
		return "", err
	}
	name = SafeFileName(name)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	sum := sha256.Sum256(content)
	digest := stem + "-" + hex.EncodeToString(sum[:6])
	for n := 1; n <= 2*maxSameName; n++ {
		try := name
		switch {
		case n > maxSameName+1:
			try = fmt.Sprintf("%s-%d%s", digest, n-maxSameName, ext)
		case n > maxSameName:
			try = digest + ext
		case n > 1:
			try = fmt.Sprintf("%s-%d%s", stem, n, ext)
		}
		path := filepath.Join(dir, try)
		if _, err := os.Lstat(path); err == nil {
			if holds(path, content) {
				// Saved before (a fetch that reads the reply again): kept,
				// not saved a second time beside itself.
				return path, nil
			}
			continue // taken: no copy written to find that out
		}
		err := createExclusive(dir, try, content, syncDir)
		if InPlace(err) {
			// Saved (a directory that could not be synced, ErrNotDurable,
			// still holds it for every reader: the reply names it).
			return path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		// Taken meanwhile: the same check as above.
		if holds(path, content) {
			return path, nil
		}
	}
	return "", fmt.Errorf("save %s: %d files of that name, and %d of that name and content's digest, are in %s already", name, maxSameName, maxSameName, dir)
}

// maxSameName is how many numbered names SaveFile tries for one name
// before it names the file by its content's digest (and as many numbered
// digest names after that).
const maxSameName = 100

// holds reports whether path is a regular file (not a link) whose content
// is content. The file read is the one looked at (boundedfile.ReadNoLink):
// a link put in its place is not followed, a FIFO not waited on (out_dir
// is the user's, and others may write in it), and no more than content's
// length is read.
func holds(path string, content []byte) bool {
	got, _, err := boundedfile.ReadNoLink(path, int64(len(content)))
	return err == nil && bytes.Equal(got, content)
}

// SafeFileName makes a name an agent gave a file fit to name a file
// (internal/filename.Safe: its last element only, no controls, no format
// characters, no hidden file, bounded, Windows' refused names replaced).
func SafeFileName(name string) string { return filename.Safe(name) }
