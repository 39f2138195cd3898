package serve

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// auditEntry is one line of the audit log: metadata only, never a
// message's content, a reply, a reason the command wrote, or a token.
type auditEntry struct {
	Time    string `json:"time"`
	Caller  string `json:"caller,omitempty"`
	Op      string `json:"op"`
	Binding string `json:"binding,omitempty"`
	Bytes   int    `json:"bytes,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Files   int    `json:"files,omitempty"`
	Task    string `json:"task,omitempty"`
	Context string `json:"context,omitempty"`
	Outcome string `json:"outcome"`
	Exit    *int   `json:"exit,omitempty"`
	Status  int    `json:"http,omitempty"`
	Count   int    `json:"count,omitempty"`
}

// MaxAuditBytes is the audit log's size past which it is rotated: the
// log becomes audit.jsonl.1 (replacing the one before) and a new one
// starts, so that at most twice this is kept.
const MaxAuditBytes = 8 << 20

// audit appends entries to <state>/audit.jsonl, owner-only.
type audit struct {
	mu   sync.Mutex
	path string
	f    *os.File
	size int64
	// unauth counts refused tokens since the last line said so: a flood
	// of bad tokens writes a line a minute, not a line each.
	unauth     int
	unauthLast time.Time
}

func openAudit(path string) (*audit, error) {
	a := &audit{path: path}
	return a, a.open()
}

func (a *audit) open() error {
	f, err := ownfile.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	a.f, a.size = f, fi.Size()
	return nil
}

// rotate moves a full log aside; a failure keeps the current one.
func (a *audit) rotate() {
	a.f.Close()
	ownfile.Rename(a.path, a.path+".1")
	if err := a.open(); err != nil {
		a.f, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
}

func (a *audit) write(e auditEntry) {
	if e.Time == "" {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(e)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.size+int64(len(b))+1 > MaxAuditBytes {
		a.rotate()
	}
	n, _ := a.f.Write(append(b, '\n'))
	a.size += int64(n)
}

// refused notes a request with an unknown token: at most a line a minute,
// with the count.
func (a *audit) refused(now time.Time) {
	a.mu.Lock()
	a.unauth++
	if now.Sub(a.unauthLast) < time.Minute {
		a.mu.Unlock()
		return
	}
	n := a.unauth
	a.unauth, a.unauthLast = 0, now
	a.mu.Unlock()
	a.write(auditEntry{Op: "auth", Outcome: "refused", Count: n, Status: 401})
}

func (a *audit) close() { a.f.Close() }
