package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A record as the store writes it (Create, then a worker's updates).
const sampleRecord = `{
  "version": 1,
  "context_id": "0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d",
  "message_id": "5b0e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a",
  "agent": "elastic-ai-agent",
  "target": {
    "kind": "kibana",
    "url": "https://my-deployment.kb.europe-west1.gcp.cloud.es.io",
    "space": "security",
    "non_blocking": true
  },
  "identity": "3f9a0c1d2e4b5a69",
  "state": "completed",
  "message_sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
  "message_size": 5,
  "rounds_before": 0,
  "fresh_context": true,
  "poll_interval": "20s",
  "max_wait": "2h0m0s",
  "created_at": "2026-11-03T10:00:00.123456789Z",
  "updated_at": "2026-11-03T10:02:13.5+01:00",
  "sent_at": "2026-11-03T10:00:00.2Z",
  "finished_at": "2026-11-03T10:02:13Z",
  "reply": "Two jobs failed.\n",
  "http_status": 200,
  "via": "reply",
  "task_id": "t-1",
  "workers": 1
}`

const sampleA2ARecord = `{"version":1,"context_id":"ctx-a2a","message_id":"m","agent":"echo","target":{"kind":"a2a","url":"http://127.0.0.1:9999","endpoint":"http://127.0.0.1:9999/a2a","dialect":"1.0","tenant":"t","streaming":true,"auth_header":"Authorization","auth_prefix":"Bearer ","peer":"lab"},` +
	`"identity":"x","state":"failed","message":"hi","message_sha256":"","message_size":2,"rounds_before":0,"fresh_context":false,"answers_task":"t-0","poll_interval":"1s","max_wait":"-5m",` +
	`"created_at":"2026-11-03T10:00:00Z","updated_at":"2026-11-03T10:00:00Z","reason":"boom","error":{"kind":"agent_failed","message":"boom","http_status":500,"rpc_code":-32603},"last_error":null,"workers":3}`

// checkCorrupt checks the one error a damaged record may give.
func checkCorrupt(t *testing.T, err error, path string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("got %T %v, want a *CorruptError", err, err)
	}
	if ce.Path != path || !strings.Contains(err.Error(), path) {
		t.Fatalf("the error does not name the file %s: %v", path, err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("the error is not one line: %q", err)
	}
}

// FuzzLoadRecord writes arbitrary bytes as the record file of a contextId
// and checks:
//
//   - Load and List never panic;
//   - Load returns a record or a *CorruptError naming the file (one line);
//     List returns the same record, or that error and no record;
//   - a record that loads has the file's contextId, a valid one, a known
//     state and a version this build reads;
//   - encoding a loaded record and decoding it again is lossless: the
//     second encoding is the first.
func FuzzLoadRecord(f *testing.F) {
	for _, s := range []string{
		sampleRecord,
		sampleA2ARecord,
		strings.Replace(sampleRecord, `"state": "completed"`, `"state": "exploded"`, 1),
		strings.Replace(sampleRecord, `"version": 1`, `"version": 2`, 1),
		strings.Replace(sampleRecord, `"poll_interval": "20s"`, `"poll_interval": 20`, 1),
		sampleRecord[:len(sampleRecord)/2],
		`{"version":1,"context_id":"../escape","state":"queued"}`,
		`{"version":1,"CONTEXT_ID":"0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d","State":"queued","context_id":"0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d"}`,
		`null`,
		``,
		"\xEF\xBB\xBF{}",
	} {
		f.Add([]byte(s), "0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d")
		f.Add([]byte(s), "ctx-a2a")
	}
	// One store for the process: a fresh one per input costs milliseconds.
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		if CheckContextID(id) != nil {
			id = "ctx-1"
		}
		path := s.recordPath(id)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		r, err := s.Load(id)
		recs, errs := s.List()
		if err != nil {
			checkCorrupt(t, err, path)
			if len(recs) != 0 || len(errs) != 1 {
				t.Fatalf("List gave %d records and %v for a damaged record", len(recs), errs)
			}
			checkCorrupt(t, errs[0], path)
			return
		}
		if len(recs) != 1 || len(errs) != 0 || !reflect.DeepEqual(recs[0], r) {
			t.Fatalf("List gave %v and %v, Load %+v", recs, errs, r)
		}
		if r.ContextID != id || CheckContextID(r.ContextID) != nil || !r.State.Known() || r.Version != RecordVersion {
			t.Fatalf("a record that loaded: context %q (file %q), state %q, version %d", r.ContextID, id, r.State, r.Version)
		}
		checkReplyInside(t, s, r)
		b1, err := encodeRecord(r)
		if err != nil {
			t.Fatalf("a loaded record does not encode: %v", err)
		}
		r2, err := decodeRecord(path, b1)
		if err != nil {
			t.Fatalf("a loaded record, encoded, does not load: %v\n%s", err, b1)
		}
		b2, _ := encodeRecord(r2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b1, b2)
		}
	})
}

// checkReplyInside fails when a record that loaded names a reply file
// anywhere but directly in replies/ (by its name or another path to the
// same directory), or a part's file outside replies/ and its out_dir.
func checkReplyInside(t *testing.T, s *Store, r *Record) {
	t.Helper()
	if r.ReplyFile != "" {
		dir := filepath.Dir(filepath.Clean(r.ReplyFile))
		a, err1 := os.Stat(dir)
		b, err2 := os.Stat(s.repliesDir())
		if !filepath.IsAbs(r.ReplyFile) || err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Fatalf("a record that loaded names the reply file %q, outside %s", r.ReplyFile, s.repliesDir())
		}
	}
	for _, p := range r.ReplyParts {
		if p.Path != "" && !within(s.repliesDir(), p.Path) && (r.OutDir == "" || !within(r.OutDir, p.Path)) {
			t.Fatalf("a record that loaded names the part file %q (out_dir %q)", p.Path, r.OutDir)
		}
	}
}

// FuzzRecordFile puts at a record's path what may be there instead of the
// record the store wrote: the record with a fuzzed reply_file, part path
// and out_dir, as a regular file, a FIFO, a link (to it, or to
// /dev/zero), a directory, or a file over MaxRecordBytes; and checks:
//
//   - Load and List return, within a deadline (a FIFO never blocks them);
//   - anything but a regular file, and a file over the cap, is a
//     *CorruptError naming the file, one line, and List reports it alone;
//   - a record that loads names its reply file in replies/ and its parts'
//     files in replies/ or its out_dir; one that names its reply file in
//     replies/ by name loads.
func FuzzRecordFile(f *testing.F) {
	f.Add(uint8(0), "/etc/passwd", "", "")
	f.Add(uint8(0), "REPLIES/x.txt", "REPLIES/x.files/a.pdf", "")
	f.Add(uint8(0), "REPLIES/../tasks/x.json", "/tmp/out/a", "/tmp/out")
	f.Add(uint8(0), "", "/tmp/out/../etc/a", "/tmp/out")
	for k := uint8(1); k < 6; k++ {
		f.Add(k, "REPLIES/x.txt", "", "")
	}
	s, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	elsewhere := f.TempDir()
	const id = "0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d"
	f.Fuzz(func(t *testing.T, kind uint8, replyFile, partPath, outDir string) {
		replyFile = strings.ReplaceAll(replyFile, "REPLIES", s.repliesDir())
		partPath = strings.ReplaceAll(partPath, "REPLIES", s.repliesDir())
		var rec map[string]any
		json.Unmarshal([]byte(sampleRecord), &rec)
		rec["reply_file"], rec["out_dir"] = replyFile, outDir
		rec["reply_parts"] = []map[string]any{{"source": "message", "kind": "file", "path": partPath, "size": 1}}
		data, _ := json.Marshal(rec)
		path := s.recordPath(id)
		defer os.RemoveAll(path)
		regular := kind%6 == 0
		switch kind % 6 {
		case 0:
			os.WriteFile(path, data, 0o600)
		case 1:
			if why := makeFIFO(path); why != "" {
				t.Skip(why)
			}
		case 2:
			if why := makeSymlink(zeroDevice(), path); why != "" {
				t.Skip(why)
			}
		case 3:
			other := filepath.Join(elsewhere, id+".json")
			os.WriteFile(other, data, 0o600)
			if why := makeSymlink(other, path); why != "" {
				t.Skip(why)
			}
		case 4:
			os.Mkdir(path, 0o700)
		case 5:
			os.WriteFile(path, data, 0o600)
			os.Truncate(path, MaxRecordBytes+1+int64(len(replyFile))) // sparse
		}
		var r *Record
		var recs []*Record
		var errs []error
		done := make(chan struct{})
		go func() { defer close(done); r, err = s.Load(id); recs, errs = s.List() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("kind %d: Load or List blocked", kind%6)
		}
		if !regular {
			checkCorrupt(t, err, path)
			if len(recs) != 0 || len(errs) != 1 {
				t.Fatalf("kind %d: List gave %v and %v", kind%6, recs, errs)
			}
			return
		}
		if err != nil {
			checkCorrupt(t, err, path)
			if replyFile != "" && filepath.Dir(replyFile) == s.repliesDir() && filepath.Clean(replyFile) == replyFile && partPath == "" {
				t.Fatalf("a reply file of replies/ (%q) was refused: %v", replyFile, err)
			}
			return
		}
		checkReplyInside(t, s, r)
		if len(recs) != 1 || len(errs) != 0 {
			t.Fatalf("List gave %v and %v, Load a record", recs, errs)
		}
	})
}

// fuzzTime makes a time between years 1 and 9999 with a zone offset of
// less than a day, to the nanosecond.
func fuzzTime(sec int64, nsec int32, offMin int16) time.Time {
	const lo, hi = -62135596800, 253402300799 // 0001-01-01 to 9999-12-31
	sec = lo + (sec%(hi-lo)+(hi-lo))%(hi-lo)
	ns := (int64(nsec)%1e9 + 1e9) % 1e9
	off := int(offMin) % (24 * 60)
	return time.Unix(sec, ns).In(time.FixedZone("", off*60))
}

func sameTime(a, b time.Time) bool {
	_, oa := a.Zone()
	_, ob := b.Zone()
	return a.Equal(b) && oa == ob
}

// FuzzRecordRoundTrip builds a valid record from fuzzed fields and checks
// that the store's encoding (encodeRecord, as Create and Update write) and
// decoding (decodeRecord, as Load reads) give every field back: strings
// (as valid UTF-8; JSON cannot carry other bytes), numbers, durations of
// any size and sign, instants to the nanosecond with their zone offsets,
// optional times and errors. (The files themselves: FuzzLoadRecord and
// TestCreateLoadUpdate; each write is fsynced, too slow to fuzz.)
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add("ctx-1", "elastic-ai-agent", "https://kb.example.com", "hello\nworld", "Two jobs failed.", "", int64(20e9), int64(2*3600e9),
		int64(1793700000), int32(123456789), int16(60), uint8(3), true, -32603)
	f.Add("a:b@c+d~e_f-g.h", "échø", "http://[::1]:5601/base", "\x00\u2028</script>", "\xff\xfe", "reason", int64(-1<<63), int64(1<<63-1),
		int64(-62135596800), int32(-1), int16(-1439), uint8(8), false, 0)
	f.Fuzz(func(t *testing.T, id, agent, url, message, reply, reason string, poll, maxWait, sec int64, nsec int32, offMin int16,
		state uint8, withTimes bool, rpcCode int) {
		if CheckContextID(id) != nil {
			id = "ctx-1"
		}
		valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
		states := []State{Queued, Sending, Working, Completed, Failed, Rejected, Canceled, InputRequired, Expired}
		created := fuzzTime(sec, nsec, offMin)
		in := &Record{
			Version: RecordVersion, ContextID: id, MessageID: valid(message + "-id"), Agent: valid(agent),
			Target:   Target{Kind: "a2a", URL: valid(url), Endpoint: valid(url) + "/a2a", Dialect: "1.0", Streaming: withTimes, AuthPrefix: "Bearer "},
			Identity: "0123456789abcdef", State: states[int(state)%len(states)],
			Message: valid(message), MessageSHA256: strings.Repeat("ab", 32), MessageSize: len(message),
			RoundsBefore: int(offMin), FreshContext: !withTimes, AnswersTask: valid(reason),
			PollInterval: Duration(poll), MaxWait: Duration(maxWait), CreatedAt: created, UpdatedAt: fuzzTime(sec/7, nsec, offMin/2),
			Reply: valid(reply), Reason: valid(reason), HTTPStatus: int(nsec), Via: "reply", TaskID: valid(agent), Workers: int(state),
		}
		if withTimes {
			sent, finished := created.Add(time.Duration(nsec)), fuzzTime(sec/2, nsec/3, -offMin)
			in.SentAt, in.FinishedAt = &sent, &finished
			in.Error = &ErrorInfo{Kind: "rpc_error", Message: valid(reason), HTTPStatus: 200, RPCCode: rpcCode}
			in.LastError = &ErrorInfo{Kind: "connection_lost", Message: valid(reply)}
		}
		b, err := encodeRecord(in)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		got, err := decodeRecord("/state/tasks/"+id+".json", b)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, b)
		}
		compareRecords(t, got, in)
	})
}

func compareRecords(t *testing.T, got, want *Record) {
	t.Helper()
	g, w := *got, *want
	if !sameTime(g.CreatedAt, w.CreatedAt) || !sameTime(g.UpdatedAt, w.UpdatedAt) {
		t.Fatalf("times: created %v updated %v, want %v %v", g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
	}
	for _, p := range [][2]*time.Time{{g.SentAt, w.SentAt}, {g.FinishedAt, w.FinishedAt}} {
		if (p[0] == nil) != (p[1] == nil) || p[0] != nil && !sameTime(*p[0], *p[1]) {
			t.Fatalf("optional time %v, want %v", p[0], p[1])
		}
	}
	g.CreatedAt, g.UpdatedAt, g.SentAt, g.FinishedAt = time.Time{}, time.Time{}, nil, nil
	w.CreatedAt, w.UpdatedAt, w.SentAt, w.FinishedAt = time.Time{}, time.Time{}, nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("record\n got %+v\nwant %+v", g, w)
	}
	for _, s := range []string{g.Message, g.Reply, g.Agent} {
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 came back: %q", s)
		}
	}
}
