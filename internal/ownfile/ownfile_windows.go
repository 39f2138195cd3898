package ownfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// shareAll lets other handles read, write, rename and remove a file while
// this one has it open. Go's os.Open shares reading and writing only, and
// Windows refuses to rename over (or remove) a file that a handle without
// FILE_SHARE_DELETE has open.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// OpenFile opens path as os.OpenFile does with the flags O_RDONLY,
// O_WRONLY, O_RDWR, O_CREATE, O_EXCL, O_TRUNC and O_APPEND (and, in the
// high bits, FILE_FLAG_* values, as os.OpenFile takes them:
// FILE_FLAG_OPEN_REPARSE_POINT opens a link itself), but shares the file
// with FILE_SHARE_DELETE, so that it can be renamed over or removed while
// this handle is open, and creates a new file with the owner-only DACL.
// The handle is not inherited by child processes.
func OpenFile(path string, flag int) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(extended(path))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_CREATE != 0 {
		access |= windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 && flag&os.O_TRUNC == 0 {
		// As os.OpenFile: appending rights without FILE_WRITE_DATA, so
		// that every write goes to the end of the file, whoever else
		// writes it.
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL) | uint32(flag)&windows.FILE_FLAG_OPEN_REPARSE_POINT
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS // as os.Open: a directory opens too
	}
	var create uint32
	var sa *windows.SecurityAttributes
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	default:
		create = windows.OPEN_EXISTING
	}
	if flag&os.O_CREATE != 0 {
		// Used only if the file is created; one there keeps its own.
		if sa, err = securityAttributes(false); err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
	}
	h, err := windows.CreateFile(p, access, shareAll, sa, create, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// extended gives a path of MAX_PATH (260) characters or more the \\?\
// prefix that lets the Windows API take it (os does the same for its own
// calls): a record's temporary file in a deep profile can be that long.
func extended(path string) string {
	if len(path) < 248 || strings.HasPrefix(path, `\\?\`) {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if strings.HasPrefix(abs, `\\`) {
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}

// MkdirAll creates dir and the parents it lacks, each with the owner-only
// DACL, which what is created in them inherits. A directory that is there
// already is left as it is.
func MkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := MkdirAll(parent); err != nil {
			return err
		}
	}
	sa, err := securityAttributes(true)
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	p, err := windows.UTF16PtrFromString(extended(dir))
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	if err := windows.CreateDirectory(p, sa); err != nil {
		if fi, serr := os.Lstat(dir); serr == nil && fi.IsDir() {
			return nil // made meanwhile
		}
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// EnsureDir makes dir a private directory: created with the owner-only
// DACL when missing, given it when its DACL lets others in.
func EnsureDir(d string) error {
	if err := MkdirAll(d); err != nil {
		return err
	}
	fi, err := os.Stat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	if !inspect(d, true).Open {
		return nil
	}
	if err := makePrivate(d, true); err != nil {
		return fmt.Errorf("%s is readable by others and cannot be made private: %w", d, err)
	}
	return nil
}

// Rename replaces to with from, atomically. It renames with POSIX
// semantics (os.Root.Rename: FILE_RENAME_POSIX_SEMANTICS, Windows 10 1607
// and later on NTFS), which replaces a file that readers have open with
// FILE_SHARE_DELETE (as OpenFile opens), and falls back to a classic
// rename where the file system has none. A rename that a handle refuses
// (one opened without FILE_SHARE_DELETE: an antivirus scanner, an
// indexer, Go's os.Open; or any open handle at all, under Wine) is tried
// again for a while: see retry.
func Rename(from, to string) error { return retry(func() error { return rename(from, to) }) }

func rename(from, to string) error {
	dir := filepath.Dir(from)
	rel, err := filepath.Rel(dir, to)
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, `..\`) {
		return move(from, to, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Rename(filepath.Base(from), rel); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// PlaceNew gives the complete file from the name to, failing with an
// error that wraps fs.ErrExist when to is there already: a rename that
// does not replace (MoveFileEx without MOVEFILE_REPLACE_EXISTING), which
// no other writer can race and which every Windows file system has (FAT
// and exFAT have no hard links). from is gone once it succeeds.
func PlaceNew(from, to string) error {
	return retry(func() error { return move(from, to, windows.MOVEFILE_WRITE_THROUGH) })
}

// move is MoveFileEx. MOVEFILE_WRITE_THROUGH is documented to matter only
// for a move done as a copy and a delete (to another volume), which these
// never are: it is no promise of durability for a rename.
func move(from, to string, flags uint32) error {
	f, err := windows.UTF16PtrFromString(extended(from))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(extended(to))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	if err := windows.MoveFileEx(f, t, flags); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// retryFor bounds how long a rename another handle refuses is tried again:
// long enough for a scanner that opened a fresh file (a few hundred
// milliseconds) and for readers that hold a record for an instant, short
// enough that a directory that really refuses is reported.
const retryFor = 5 * time.Second

// onRetry, when set (by tests), is told of each refusal before the wait.
var onRetry func(error)

// retry runs op until it succeeds, fails for a reason a wait does not
// mend, or retryFor has passed; the waits double from 1 ms to 25 ms.
func retry(op func() error) error {
	deadline := time.Now().Add(retryFor)
	wait := time.Millisecond
	for {
		err := op()
		if err == nil || !refusedByAHandle(err) || time.Now().After(deadline) {
			return err
		}
		if onRetry != nil {
			onRetry(err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 25*time.Millisecond)
	}
}

// refusedByAHandle reports the errors Windows gives when another handle
// keeps a file from being renamed or removed: a sharing violation, or
// "access denied" (what a file open without FILE_SHARE_DELETE, or one
// waiting for its last handle to close before it goes, gives a rename).
func refusedByAHandle(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// SyncDir does nothing on Windows: a directory cannot be flushed there
// (FlushFileBuffers needs a handle open for writing, which a directory's
// is not: ERROR_ACCESS_DENIED). NTFS journals its directories: a rename is
// whole or not at all after a crash, and the file's data was flushed
// before it; the latest renames may be lost to a power cut before the
// journal is written (docs/design.md, "Task records").
func SyncDir(string) error { return nil }

// File says whether others can get at the file path: whether its DACL
// grants anyone but the owner, the user, SYSTEM and Administrators access
// to it. fi is not used (a FileInfo carries no ACL on Windows).
func File(path string, _ fs.FileInfo) Access { return inspect(path, false) }

// Dir is File for a directory.
func Dir(path string, _ fs.FileInfo) Access { return inspect(path, true) }

// FileHint is the command that makes the file path private (icacls).
func FileHint(path string) string { return icaclsHint(path, false, nil) }

// DirHint is the command that makes the directory path private.
func DirHint(path string) string { return icaclsHint(path, true, nil) }

// PrivateWords is how a hint names a private file.
const PrivateWords = "readable by you alone"
