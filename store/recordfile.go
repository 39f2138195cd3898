package store

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
)

// MaxRecordBytes bounds a record file, read or written. A record keeps a
// reply of at most 4 MiB (a larger one goes to a file of replies/), and
// while unsent a message of at most 4 MiB; written as JSON, a character may
// take six bytes (<, >, & and control characters are \u-escaped), so
// 64 MiB holds any record the program makes. The store writes none larger
// (encodeRecord refuses it) and reads none larger.
const MaxRecordBytes = 64 << 20

// maxCancelMarker bounds a cancel marker: it holds a messageId.
const maxCancelMarker = 4 << 10

// readOwnFile reads a file the store wrote itself (by rename, in its own
// directory) without trusting what is at path now: only a regular file,
// not a link, opened without blocking (a FIFO would wait for ever, deaf
// to signals) and at most max bytes (/dev/zero has no end).
func readOwnFile(path string, max int64) ([]byte, error) {
	b, _, err := boundedfile.ReadNoLink(path, max)
	return b, err
}

// readRecordFile reads a record's file: ErrNotFound when there is none, a
// *CorruptError naming the file when it is not one the store writes
// (a link, a FIFO, a device, a directory, a file over MaxRecordBytes).
func readRecordFile(path string) ([]byte, error) {
	b, err := readOwnFile(path, MaxRecordBytes)
	var nr *boundedfile.NotRegularError
	var tl *boundedfile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrNotFound
	case errors.As(err, &nr):
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("it is %s, not a regular file", boundedfile.Kind(nr.Mode))}
	case errors.As(err, &tl):
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("it is over the %s a record may have", boundedfile.SizeText(MaxRecordBytes))}
	}
	return b, err
}

// readRecord reads the record file at path (a live record, or an archived
// one) as the record of the live path as: its contextId is the file name's.
// A record that names a reply file outside the state directory is refused
// (a *CorruptError): the store writes none there, and result would print
// whatever file an edited record named.
func (s *Store) readRecord(path, as string) (*Record, error) {
	b, err := readRecordFile(path)
	if err != nil {
		return nil, err
	}
	r, err := decodeRecord(as, b)
	var ce *CorruptError
	if errors.As(err, &ce) {
		ce.Path = path
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkReplyPaths(r); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	return r, nil
}

// checkReplyPaths refuses the paths of a record's reply that the store
// would not have written: the reply's file (WriteReply) is a file of
// replies/ itself; a saved part (SaveFile) is in replies/ or in the
// record's out_dir.
func (s *Store) checkReplyPaths(r *Record) error {
	if r.ReplyFile != "" && !s.replyFileOK(r.ReplyFile) {
		return fmt.Errorf("it names a reply file outside the state directory (%q is not a file of %s)", shorten(r.ReplyFile, 200), s.repliesDir())
	}
	for _, p := range r.ReplyParts {
		if p.Path != "" && !within(s.repliesDir(), p.Path) && (r.OutDir == "" || !within(r.OutDir, p.Path)) {
			return fmt.Errorf("it names a reply's file outside the state directory and the record's out_dir (%q)", shorten(p.Path, 200))
		}
	}
	return nil
}

// replyFileOK reports whether path names a file directly in replies/ (by
// its name, or through another path to that same directory: a state
// directory reached through a link). The file itself is opened without
// following a link (OpenReply).
func (s *Store) replyFileOK(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	dir := filepath.Dir(filepath.Clean(path))
	if dir == s.repliesDir() {
		return true
	}
	a, err1 := os.Stat(dir)
	b, err2 := os.Stat(s.repliesDir())
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// within reports whether path, cleaned, is inside dir.
func within(dir, path string) bool {
	if !filepath.IsAbs(path) || !filepath.IsAbs(dir) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// OpenReply opens the file of a record's reply (ReplyFile, which Load
// checked is in replies/): a regular file, not a link, never a FIFO or a
// device, which a reader would wait on for ever or read without end. The
// caller closes it; memory is the caller's to bound (ReadPrefix keeps a
// prefix).
func OpenReply(path string) (*os.File, error) {
	return boundedfile.OpenNoLink(path, math.MaxInt64)
}
