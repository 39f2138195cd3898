package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// AuditEntry is one line of the audit log: metadata only. There is no field
// for message text, reply text or credentials, so none can be written.
type AuditEntry struct {
	Time          time.Time `json:"time"`
	Command       string    `json:"command"`
	Agent         string    `json:"agent,omitempty"`
	ContextID     string    `json:"context_id,omitempty"`
	MessageSize   int       `json:"message_size,omitempty"`
	MessageSHA256 string    `json:"message_sha256,omitempty"`
	State         string    `json:"state,omitempty"`
	DurationMS    int64     `json:"duration_ms"`
	HTTPStatus    int       `json:"http_status,omitempty"`
	Error         string    `json:"error,omitempty"`
}

// MaxLogBytes is the size at which the audit and worker logs are rotated;
// one previous generation (.1) is kept, so each log takes at most twice this.
const MaxLogBytes = 4 << 20

// AuditPath is the audit log file.
func (s *Store) AuditPath() string { return filepath.Join(s.dir, "audit.log") }

// Audit appends one entry. Lines are written with a single O_APPEND write,
// so concurrent processes never interleave them.
func (s *Store) Audit(e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return s.unwritable(s.appendLog(s.AuditPath(), append(b, '\n')))
}

// appendLog appends data to path, rotating path to path.1 first when it has
// grown past MaxLogBytes. The rotation happens under a lock so that two
// processes do not both rotate.
func (s *Store) appendLog(path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() >= MaxLogBytes {
		if l, err := tryLock(path + ".lock"); err == nil {
			if fi, err := os.Stat(path); err == nil && fi.Size() >= MaxLogBytes {
				rotateLog(path)
			}
			l.release()
		}
	}
	f, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// OpenLog opens the worker log for appending, rotating it when too large.
func (s *Store) OpenLog() (*os.File, error) {
	path := s.LogPath()
	if err := s.appendLog(path, nil); err != nil {
		return nil, s.unwritable(err)
	}
	// Opened so that it can be rotated (renamed) while this process holds
	// it open, on Windows too.
	f, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, s.unwritable(err)
	}
	return f, nil
}
