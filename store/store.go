// Package store keeps the local task records: one file per contextId,
// written atomically, private to the user, each guarded by a lock that the
// worker owning the task holds for its whole life. It also keeps the audit
// log and the worker's bookkeeping. It prints nothing and never exits.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/a2a-courier/a2a-courier/client/ids"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// State is a task record's state.
type State string

// The states of design.md. Once released, names never change.
const (
	Queued        State = "queued"
	Sending       State = "sending"
	Working       State = "working"
	Completed     State = "completed"
	Failed        State = "failed"
	Rejected      State = "rejected"
	Canceled      State = "canceled"
	InputRequired State = "input_required"
	Expired       State = "expired"
)

// Terminal reports whether no worker will change the state any more.
// Expired is terminal for workers, although fetch may still find a reply.
func (s State) Terminal() bool {
	switch s {
	case Completed, Failed, Rejected, Canceled, InputRequired, Expired:
		return true
	}
	return false
}

// Known reports whether s is one of the defined states.
func (s State) Known() bool {
	switch s {
	case Queued, Sending, Working, Completed, Failed, Rejected, Canceled, InputRequired, Expired:
		return true
	}
	return false
}

// Errors callers branch on.
var (
	// ErrLocked means another process holds the lock.
	ErrLocked = errors.New("locked by another process")
	// ErrNotFound means there is no record for that contextId.
	ErrNotFound = errors.New("no such task record")
	// ErrExists means a record for that contextId already exists.
	ErrExists = errors.New("a task record with that contextId already exists")
)

// CorruptError reports a record that cannot be read. Other records stay
// usable.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("task record %s is damaged: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Duration is a time.Duration that reads and writes as "20s".
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// TargetKind says what kind of agent a task was sent to. A record keeps
// its name, which never changes.
type TargetKind string

// The kinds of agent, one table.
const (
	// TargetKibana is an agent of Kibana's Agent Builder, reached through
	// Kibana's A2A endpoint and read back from its conversation store.
	TargetKibana TargetKind = "kibana"
	// TargetA2A is any other A2A agent, addressed by its card.
	TargetA2A TargetKind = "a2a"
)

// Target says where a task was sent, without any credential.
type Target struct {
	Kind  TargetKind `json:"kind"`
	URL   string     `json:"url"`
	Space string     `json:"space,omitempty"`
	// CAFile and Insecure are the TLS settings the task was sent with.
	CAFile   string `json:"ca_file,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`

	// For TargetA2A (a generic A2A agent): how the card said to talk to it.
	Endpoint string `json:"endpoint,omitempty"`
	Dialect  string `json:"dialect,omitempty"`
	Tenant   string `json:"tenant,omitempty"`
	// Binding is the protocol binding: "rest" (HTTP+JSON), or "" and
	// "jsonrpc" for JSON-RPC (records before bindings were chosen).
	Binding    string `json:"binding,omitempty"`
	Streaming  bool   `json:"streaming,omitempty"`
	AuthHeader string `json:"auth_header,omitempty"`
	AuthPrefix string `json:"auth_prefix,omitempty"`
	// Peer names the config file's peer the agent was addressed by.
	Peer string `json:"peer,omitempty"`
	// Profile names the config file's profile a Kibana task was sent with,
	// when the Kibana URL came from it (not a secret: the key stays in the
	// config file). A later command whose configured Kibana is another
	// reads the task with this profile when it still names the task's
	// Kibana.
	Profile string `json:"profile,omitempty"`
	// NonBlocking sends Kibana configuration.blocking:false (9.6+ tasks).
	NonBlocking bool `json:"non_blocking,omitempty"`
	// KibanaVersion and KibanaFlavor are what Kibana's status said when the
	// task was sent (version.number, version.build_flavor); empty when it
	// could not be read.
	KibanaVersion string `json:"kibana_version,omitempty"`
	KibanaFlavor  string `json:"kibana_build_flavor,omitempty"`
}

// ErrorInfo is the classified error behind a failed or rejected task.
type ErrorInfo struct {
	Kind       string `json:"kind"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"http_status,omitempty"`
	RPCCode    int    `json:"rpc_code,omitempty"`
	// RetryAfterSeconds is the wait the server asked for (Retry-After on a
	// 429 or 503), rounded up to whole seconds; 0 when it named none.
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
	// Proxy is what the proxy the environment names had to do with the
	// failure, so that the record's hint names the proxy too.
	Proxy *ProxyInfo `json:"proxy,omitempty"`
}

// ProxyInfo is the record's form of a proxy's part in a failure
// (client.ProxyProblem): the proxy's host:port (never its URL), its
// refusal and whether its URL carried credentials, or the proxy variable
// that could not be read (or ALL_PROXY, which is not read).
type ProxyInfo struct {
	Host        string `json:"host,omitempty"`
	Status      int    `json:"status,omitempty"`
	Credentials bool   `json:"credentials,omitempty"`
	Unreadable  string `json:"unreadable,omitempty"`
	Unread      string `json:"unread,omitempty"`
}

// Record is one task. It holds the message text only until the request
// leaves; after that, its SHA-256 and size.
type Record struct {
	Version   int    `json:"version"`
	ContextID string `json:"context_id"`
	MessageID string `json:"message_id"`
	Agent     string `json:"agent"`
	Target    Target `json:"target"`
	// Identity is a short fingerprint of the target and credential, so a
	// task is only ever worked on with the credential it was sent with.
	Identity string `json:"identity"`
	State    State  `json:"state"`

	Message       string `json:"message,omitempty"`
	MessageSHA256 string `json:"message_sha256"`
	MessageSize   int    `json:"message_size"`
	// Parts are the files and data the message carries beside its text:
	// what they are, never their content (which waits in the spool until
	// the record is final).
	Parts []Part `json:"parts,omitempty"`
	// OutDir is where the files of the reply are saved (send --out);
	// empty: beside the record (ReplyFilesDir).
	OutDir       string `json:"out_dir,omitempty"`
	RoundsBefore int    `json:"rounds_before"`
	FreshContext bool   `json:"fresh_context"`
	// AnswersTask is the task this message answers (a generic agent's
	// input-required), sent as message.taskId.
	AnswersTask string `json:"answers_task,omitempty"`
	// Question is the question that message answers, so that the task
	// restating it before taking the answer in is not taken for a new one.
	Question string `json:"question,omitempty"`
	// LocalContext says the contextId only names the record: the server's
	// context was unknown, so the message carries none.
	LocalContext bool `json:"local_context,omitempty"`

	PollInterval Duration `json:"poll_interval"`
	MaxWait      Duration `json:"max_wait"`

	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	SentAt     *time.Time `json:"sent_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`

	Reply string `json:"reply,omitempty"`
	// ReplyFile holds a reply too large to keep in the record (Reply is
	// then empty), ReplyBytes its size.
	ReplyFile  string `json:"reply_file,omitempty"`
	ReplyBytes int    `json:"reply_bytes,omitempty"`
	// ReplyParts are the parts of the reply of a generic agent: its texts
	// (their text while the reply is in the record), files (saved, named
	// by Path) and data.
	ReplyParts []ReplyPart `json:"reply_parts,omitempty"`
	Reason     string      `json:"reason,omitempty"`
	// Lost marks an expired task the server can no longer show (it forgot
	// the task, or the answer that named it was lost and the protocol
	// cannot look it up): no command reads its reply back.
	Lost       bool       `json:"lost,omitempty"`
	Error      *ErrorInfo `json:"error,omitempty"`
	LastError  *ErrorInfo `json:"last_error,omitempty"`
	HTTPStatus int        `json:"http_status,omitempty"`
	Via        string     `json:"via,omitempty"`
	TaskID     string     `json:"task_id,omitempty"`
	// ConnectionLost says that the connection that carried a blocking send
	// (or stream) ended before its answer: cut, timed out, handed off, its
	// worker gone. On a release that aborts such a run with its connection
	// (Kibana 9.6, Serverless) the reply will most likely never come.
	ConnectionLost bool `json:"connection_lost,omitempty"`
	// Path is how a Kibana send went: "task" (blocking:false, followed with
	// tasks/get), "blocking" or "stream"; empty until the server's answer
	// said, when the release was unknown.
	Path string `json:"path,omitempty"`

	// Workers counts the worker processes that took the task.
	Workers int `json:"workers"`
	// Refusals counts the sends of this message the server refused before
	// taking anything in (HTTP 429, or 503 with Retry-After); each is sent
	// again, a bounded number of times, after the wait the server asked.
	Refusals int `json:"refusals,omitempty"`
	// RetryAt is when a message the server refused may be sent again; set
	// while the record is queued after a refusal.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// CanceledBy says who ended a canceled task: "cancel" (the cancel
	// command), "interrupt" (Ctrl-C on send), or empty when the server
	// canceled or aborted it.
	CanceledBy string `json:"canceled_by,omitempty"`
	// Verbose says the command that created the task was run with -v:
	// whoever works on it shows its HTTP requests (never a credential),
	// a detached worker in its log.
	Verbose bool `json:"verbose,omitempty"`
	// Progress is the task's latest status update ("Calling tool X…")
	// while it runs, as the process working on it last wrote it (at most
	// every few seconds; never the history of them). Dropped once final.
	Progress *Progress `json:"progress,omitempty"`
}

// Progress is a status update of a running task.
type Progress struct {
	// State is the task's state with it ("working"), as the agent said.
	State string `json:"state,omitempty"`
	// Text is the status message's text (credentials redacted; at most
	// 1,000 bytes).
	Text string `json:"text"`
	// At is when it was seen.
	At time.Time `json:"at"`
}

// RecordVersion is the record format written by this build.
const RecordVersion = 1

// Deadline is when a worker stops waiting and marks the task expired.
func (r *Record) Deadline() time.Time {
	start := r.CreatedAt
	if r.SentAt != nil {
		start = *r.SentAt
	}
	return start.Add(time.Duration(r.MaxWait))
}

// Store is a state directory.
type Store struct {
	dir string
	now func() time.Time
	// syncFault: SetDirSyncFault.
	syncFault dirSyncFault
}

// Open prepares the state directory dir, creating it 0700 if needed and
// tightening its mode when it is wider (on Windows: an owner-only ACL).
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("no state directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: abs, now: time.Now}
	for _, d := range []string{abs, s.tasksDir(), s.workersDir(), s.logsDir(), s.repliesDir()} {
		if err := ensurePrivateDir(d); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
	}
	return s, nil
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) tasksDir() string   { return filepath.Join(s.dir, "tasks") }
func (s *Store) workersDir() string { return filepath.Join(s.dir, "workers") }
func (s *Store) logsDir() string    { return filepath.Join(s.dir, "logs") }
func (s *Store) repliesDir() string { return filepath.Join(s.dir, "replies") }

// TasksDir is the directory of record files, for watchers.
func (s *Store) TasksDir() string { return s.tasksDir() }

// LogPath is the worker log file.
func (s *Store) LogPath() string { return filepath.Join(s.logsDir(), "worker.log") }

// ensurePrivateDir makes d a private directory (ownfile.EnsureDir: 0700,
// or an owner-only ACL on Windows).
func ensurePrivateDir(d string) error { return ownfile.EnsureDir(d) }

// MaxContextIDLen bounds a contextId so that every file named after it
// (".<id>.json.tmp-<random>" while it is written) fits the 255 bytes a
// file name may have, and so does Kibana's conversation id "a2a-<id>".
const MaxContextIDLen = 200

// validID accepts the ids of the shared rule (ids.Valid) up to
// MaxContextIDLen long.
func validID(id string) bool { return ids.Valid(id, MaxContextIDLen) }

// CheckContextID refuses ids that could escape the state directory or do
// not look like a contextId at all.
func CheckContextID(id string) error {
	if id == "" {
		return errors.New("the contextId is empty")
	}
	if !validID(id) {
		return fmt.Errorf("invalid contextId %q: use letters, digits and . _ ~ : @ + - (at most %d, not starting with '.')", shorten(id, 60), MaxContextIDLen)
	}
	return nil
}

func shorten(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (s *Store) recordPath(id string) string { return filepath.Join(s.tasksDir(), id+".json") }
func (s *Store) lockPath(id string) string   { return filepath.Join(s.tasksDir(), id+".lock") }

// Create writes a new record, failing with ErrExists if one is there.
func (s *Store) Create(r *Record) error {
	if err := CheckContextID(r.ContextID); err != nil {
		return err
	}
	if r.State != Queued && r.State != Sending {
		// A record starts queued (a worker sends it) or sending (this
		// process does).
		return fmt.Errorf("task record %s: %w: a record starts queued or sending, not %s", r.ContextID, ErrIllegalMove, r.State)
	}
	now := s.now().UTC()
	r.Version = RecordVersion
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	r.UpdatedAt = now
	settle(r)
	b, err := encodeRecord(r)
	if err != nil {
		return err
	}
	err = createExclusive(s.tasksDir(), r.ContextID+".json", b, s.syncDir)
	if errors.Is(err, fs.ErrExist) {
		return ErrExists
	}
	return s.unwritable(err)
}

// Load reads the record of a contextId.
func (s *Store) Load(id string) (*Record, error) {
	if err := CheckContextID(id); err != nil {
		return nil, err
	}
	return s.load(s.recordPath(id))
}

func (s *Store) load(path string) (*Record, error) { return s.readRecord(path, path) }

// encodeRecord is the one encoding of a record file; decodeRecord reads it.
// '<', '>' and '&' are written as themselves, not as \u003c (six bytes for
// one): a record is read by programs, never put in HTML, and a reply of
// markup would otherwise grow six-fold. A record over MaxRecordBytes is
// refused: it would not be read back.
func encodeRecord(r *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(b) > MaxRecordBytes {
		return nil, fmt.Errorf("task record %s would be %s, over the %s a record may have", r.ContextID,
			boundedfile.SizeText(int64(len(b))), boundedfile.SizeText(MaxRecordBytes))
	}
	return b, nil
}

func decodeRecord(path string, b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	switch {
	case r.Version < 1 || r.Version > RecordVersion:
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("unknown record version %d", r.Version)}
	case r.ContextID == "" || CheckContextID(r.ContextID) != nil:
		return nil, &CorruptError{Path: path, Err: errors.New("missing or invalid context_id")}
	case !r.State.Known():
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("unknown state %q", r.State)}
	case filepath.Base(path) != r.ContextID+".json":
		return nil, &CorruptError{Path: path, Err: errors.New("context_id does not match the file name")}
	}
	return &r, nil
}

// List returns every readable record, newest first, and the errors of the
// records that could not be read.
func (s *Store) List() ([]*Record, []error) {
	entries, err := os.ReadDir(s.tasksDir())
	if err != nil {
		return nil, []error{err}
	}
	var recs []*Record
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		r, err := s.load(filepath.Join(s.tasksDir(), name))
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.After(recs[j].CreatedAt) })
	return recs, errs
}

// Handle is the right to write one record: the holder of its lock.
type Handle struct {
	s    *Store
	id   string
	lock *fileLock
}

// Lock takes the record's lock without waiting. It returns ErrLocked when
// another process (a worker, a foreground send) holds it.
func (s *Store) Lock(id string) (*Handle, error) {
	if err := CheckContextID(id); err != nil {
		return nil, err
	}
	l, err := tryLock(s.lockPath(id))
	if err != nil {
		return nil, s.unwritable(err)
	}
	// Who holds it, for a caller that finds it held (LockHolder); a lock
	// is no less held when this cannot be written.
	l.writeOwner()
	return &Handle{s: s, id: id, lock: l}, nil
}

// Locked reports whether some process holds the record's lock.
func (s *Store) Locked(id string) bool {
	if CheckContextID(id) != nil {
		return false
	}
	l, err := tryLock(s.lockPath(id))
	if err != nil {
		return errors.Is(err, ErrLocked)
	}
	l.release()
	return false
}

// LockHolder returns the process id of the holder of the record's lock, as
// that holder wrote it; 0 when unknown. It is only meaningful while the
// lock is held (Locked): a holder that died leaves its id behind.
func (s *Store) LockHolder(id string) int {
	if CheckContextID(id) != nil {
		return 0
	}
	return readOwner(s.lockPath(id))
}

// ContextID returns the id of the locked record.
func (h *Handle) ContextID() string { return h.id }

// Load reads the locked record.
func (h *Handle) Load() (*Record, error) { return h.s.Load(h.id) }

// Update reads the record, lets fn change it, and writes it atomically.
func (h *Handle) Update(fn func(*Record) error) (*Record, error) {
	if h.lock == nil {
		// Another process may hold the record now: writing would race it.
		return nil, fmt.Errorf("task record %s: update after the lock was released", h.id)
	}
	r, err := h.Load()
	if err != nil {
		return nil, err
	}
	from := r.State
	if err := fn(r); err != nil {
		return nil, err
	}
	if err := checkMove(h.id, from, r.State); err != nil {
		return nil, err
	}
	r.UpdatedAt = h.s.now().UTC()
	settle(r)
	b, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	err = h.s.writeAtomic(h.s.tasksDir(), h.id+".json", b)
	if !InPlace(err) {
		return nil, fmt.Errorf("write task record %s: %w", h.id, h.s.unwritable(err))
	}
	if r.State.Terminal() && len(r.Parts) > 0 {
		h.s.RemoveSpool(h.id, r.MessageID) // nobody sends the message any more
	}
	if err != nil {
		// In place, every reader sees it: the record comes back with the
		// error, for the caller to weigh.
		return r, fmt.Errorf("write task record %s: %w", h.id, err)
	}
	return r, nil
}

// Release gives the lock up. The record stays.
func (h *Handle) Release() {
	if h != nil && h.lock != nil {
		h.lock.release()
		h.lock = nil
	}
}

// WriteReply stores a whole reply in a private file and returns its path,
// for output that was cut short.
func (s *Store) WriteReply(id, reply string) (string, error) {
	if err := CheckContextID(id); err != nil {
		return "", err
	}
	name := id + ".txt"
	err := s.writeAtomic(s.repliesDir(), name, []byte(reply))
	if !InPlace(err) {
		return "", s.unwritable(err)
	}
	// In place (ErrNotDurable too): the path comes back with the error.
	return filepath.Join(s.repliesDir(), name), err
}

// Archive moves the locked record to tasks/archive/, keeping it for the
// record but freeing its contextId for the next exchange in the same
// conversation.
func (h *Handle) Archive() error {
	dir := filepath.Join(h.s.tasksDir(), "archive")
	if err := ensurePrivateDir(dir); err != nil {
		return h.s.unwritable(err)
	}
	name := fmt.Sprintf("%s.%d.json", h.id, h.s.now().UnixNano())
	if err := ownfile.Rename(h.s.recordPath(h.id), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("archive task record %s: %w", h.id, h.s.unwritable(err))
	}
	return notDurable(filepath.Join(dir, name), h.s.syncDir(h.s.tasksDir()))
}

// LoadArchived returns the archived record of a context's message (an
// exchange a later message of the same context moved aside), or
// ErrNotFound.
func (s *Store) LoadArchived(id, messageID string) (*Record, error) {
	if err := CheckContextID(id); err != nil {
		return nil, err
	}
	for _, r := range s.Archived(id) {
		if r.MessageID == messageID {
			return r, nil
		}
	}
	return nil, ErrNotFound
}

// Archived returns the archived records of a context's earlier exchanges,
// newest first; files that cannot be read are left out.
func (s *Store) Archived(id string) []*Record {
	if CheckContextID(id) != nil {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(s.tasksDir(), "archive", id+".*.json"))
	sort.Sort(sort.Reverse(sort.StringSlice(matches))) // newest first: the names end in a time
	var recs []*Record
	for _, m := range matches {
		// An archived file is named <id>.<time>.json: read as the record
		// it was.
		if r, err := s.readRecord(m, s.recordPath(id)); err == nil {
			recs = append(recs, r)
		}
	}
	return recs
}

func (s *Store) cancelPath(id string) string { return filepath.Join(s.tasksDir(), id+".cancel") }

// RequestCancel asks whoever works on a task to stop and mark it canceled:
// only the lock holder writes a record, so the request is a marker file
// that the worker notices. The marker names the message it cancels, so a
// marker left behind never cancels a later message of the same context.
func (s *Store) RequestCancel(id, messageID string) error {
	if err := CheckContextID(id); err != nil {
		return err
	}
	return s.unwritable(s.writeAtomic(s.tasksDir(), id+".cancel", []byte(messageID)))
}

// CancelRequested reports whether a cancel was requested for the message
// messageID of a task.
func (s *Store) CancelRequested(id, messageID string) bool {
	b, err := readOwnFile(s.cancelPath(id), maxCancelMarker)
	return err == nil && string(b) == messageID
}

// ClearCancel removes a task's cancel marker.
func (s *Store) ClearCancel(id string) { os.Remove(s.cancelPath(id)) }

// cacheEntry is a cached document: an agent card (cards/), or what a
// server said about itself (servers/).
type cacheEntry struct {
	FetchedAt time.Time       `json:"fetched_at"`
	MaxAge    Duration        `json:"max_age"`
	Doc       json.RawMessage `json:"doc"`
}

func (s *Store) cachePath(dir, key string) string { return filepath.Join(s.dir, dir, key+".json") }

// LoadCard returns a cached card while it is fresh (its server's max-age).
func (s *Store) LoadCard(key string) ([]byte, bool) { return s.loadCached("cards", key) }

// SaveCard caches a card for maxAge; a card with no max-age is not kept.
func (s *Store) SaveCard(key string, card []byte, maxAge time.Duration) error {
	return s.saveCached("cards", key, card, maxAge)
}

// ForgetCard drops a cached card (its agent turned out not to exist).
func (s *Store) ForgetCard(key string) { os.Remove(s.cachePath("cards", key)) }

// LoadServerInfo returns what a server said about itself (Kibana's
// version, say) while it is fresh.
func (s *Store) LoadServerInfo(key string) ([]byte, bool) { return s.loadCached("servers", key) }

// SaveServerInfo keeps what a server said about itself for maxAge.
func (s *Store) SaveServerInfo(key string, doc []byte, maxAge time.Duration) error {
	return s.saveCached("servers", key, doc, maxAge)
}

func (s *Store) loadCached(dir, key string) ([]byte, bool) {
	if CheckContextID(key) != nil {
		return nil, false
	}
	b, err := readOwnFile(s.cachePath(dir, key), MaxRecordBytes)
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || len(e.Doc) == 0 {
		return nil, false
	}
	age := s.now().Sub(e.FetchedAt)
	if age < 0 || age > time.Duration(e.MaxAge) {
		return nil, false
	}
	return e.Doc, true
}

func (s *Store) saveCached(dir, key string, doc []byte, maxAge time.Duration) error {
	if maxAge <= 0 || CheckContextID(key) != nil || !json.Valid(doc) {
		return nil
	}
	full := filepath.Join(s.dir, dir)
	if err := ensurePrivateDir(full); err != nil {
		return err
	}
	b, err := json.Marshal(cacheEntry{FetchedAt: s.now().UTC(), MaxAge: Duration(maxAge), Doc: doc})
	if err != nil {
		return err
	}
	// A cache needs no fsync: a file a crash damages reads as a miss.
	f, err := ownfile.CreateTemp(full, "."+key+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = ownfile.Rename(f.Name(), s.cachePath(dir, key))
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}
