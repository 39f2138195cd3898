package courier

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/store"
)

// ProbeReport is what a probe worker found about how it was started: the
// promises of spawn, checked from the inside (doctor).
type ProbeReport struct {
	PID int `json:"pid"`
	// Detached: out of reach of the caller's terminal or console. On Unix,
	// the leader of a session of its own (no controlling terminal: no
	// SIGHUP when the caller's closes, no Ctrl-C of its process group); on
	// Windows, attached to no console (no CTRL_C_EVENT, no
	// CTRL_CLOSE_EVENT from the caller's console window).
	Detached bool `json:"detached"`
	// InJob (Windows): still in a job object after its start, so the job
	// refused the breakaway and the worker ends when the caller's job does.
	InJob        bool `json:"in_job,omitempty"`
	StdinDevNull bool `json:"stdin_devnull"`
	Credential   bool `json:"credential"`
}

// ErrNoProbeReport means a probe worker started but did not report back in
// time.
var ErrNoProbeReport = errors.New("no report from the worker")

// Probe starts a worker the way a real one is started, as a probe with a
// dummy credential, and waits up to timeout for its report. An error other
// than ErrNoProbeReport means it could not be started.
func (c *Courier) Probe(timeout time.Duration) (*ProbeReport, error) {
	token := uuid.NewString()
	if err := c.spawn([]string{"worker", "--state-dir", c.Store.Dir(), "--probe", token}, "probe"); err != nil {
		return nil, err
	}
	report := c.probePath(token)
	defer os.Remove(report)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(report)
		if err == nil {
			var rep ProbeReport
			if json.Unmarshal(b, &rep) != nil {
				break
			}
			return &rep, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, ErrNoProbeReport
}

func (c *Courier) probePath(token string) string {
	return filepath.Join(c.Store.Dir(), "workers", "probe-"+token+".json")
}

// WriteProbe is the probe worker's part: it writes how it was started for
// Probe to read. cred is its credential's descriptor or handle, nil when it
// has none.
func (c *Courier) WriteProbe(token string, cred *os.File) error {
	if err := store.CheckContextID(token); err != nil {
		return err
	}
	rep := ProbeReport{PID: os.Getpid(), Detached: detached(), InJob: inJob(), StdinDevNull: stdinIsNull()}
	if cred != nil {
		key, err := ReadCredential(cred)
		rep.Credential = err == nil && strings.TrimSpace(key.Reveal()) != ""
	}
	b, _ := json.Marshal(rep)
	return c.inPlace(store.WriteFileAtomic(filepath.Join(c.Store.Dir(), "workers"), "probe-"+token+".json", b))
}
