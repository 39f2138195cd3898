package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveFileSavesEverySameNamedFile: any number of files of one name are
// all saved, each once: report.txt, report-2.txt … report-100.txt, then
// the content's digest (report-<12 hex>.txt); saving a content again
// returns the file that holds it, whichever name it took. A directory
// that holds a thousand files of the name already (an --out directory
// many replies went to) takes more.
func TestSaveFileSavesEverySameNamedFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	const n = 150
	paths := map[string]int{}
	for i := range n {
		p, err := SaveFile(dir, "report.txt", []byte(fmt.Sprint("part ", i)))
		if err != nil {
			t.Fatalf("file %d: %v", i+1, err)
		}
		if j, ok := paths[p]; ok {
			t.Fatalf("files %d and %d saved to %s", j+1, i+1, p)
		}
		paths[p] = i
		switch base := filepath.Base(p); {
		case i == 0 && base != "report.txt", i > 0 && i < 100 && base != fmt.Sprintf("report-%d.txt", i+1):
			t.Fatalf("file %d named %s", i+1, base)
		case i >= 100 && (len(base) != len("report-0123456789ab.txt") || !strings.HasPrefix(base, "report-")):
			t.Fatalf("file %d named %s, want the content's digest", i+1, base)
		}
	}
	for p, i := range paths {
		if b, _ := os.ReadFile(p); string(b) != fmt.Sprint("part ", i) {
			t.Fatalf("%s holds %q", p, b)
		}
	}
	for _, i := range []int{0, 99, 100, n - 1} {
		p, err := SaveFile(dir, "report.txt", []byte(fmt.Sprint("part ", i)))
		if err != nil || paths[p] != i {
			t.Errorf("part %d saved again: %s %v", i, p, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != n {
		t.Errorf("%d files after saving again, want %d", len(entries), n)
	}

	full := t.TempDir()
	for i := 1; i <= 1000; i++ {
		name := "report.txt"
		if i > 1 {
			name = fmt.Sprintf("report-%d.txt", i)
		}
		os.WriteFile(filepath.Join(full, name), []byte("an earlier reply's"), 0o600)
	}
	for i := range 5 {
		if p, err := SaveFile(full, "report.txt", []byte(fmt.Sprint("new ", i))); err != nil || !strings.HasPrefix(filepath.Base(p), "report-") {
			t.Fatalf("with 1,000 files of the name there: %s %v", p, err)
		}
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1005 {
		t.Errorf("%d files, want 1005", len(entries))
	}
}

// TestRecordsKeepMarkupAsIs: a record writes '<', '>' and '&' as
// themselves, not six bytes each (\u003c), and reads them back.
func TestRecordsKeepMarkupAsIs(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	r := newRecord("ctx-1")
	r.Reply = strings.Repeat("<b>&</b>", 1000)
	r.ReplyParts = []ReplyPart{{Source: "message", Kind: "data", Data: []byte(`{"html":"<p>"}`), Name: "<x>"}}
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(s.recordPath("ctx-1"))
	if bytes.Contains(raw, []byte(`\u003c`)) || !bytes.Contains(raw, []byte(r.Reply)) || !bytes.Contains(raw, []byte(`"<p>"`)) {
		t.Fatalf("the record escapes markup: %.200s", raw)
	}
	if len(raw) > len(r.Reply)+2000 {
		t.Errorf("a record of a %d-byte reply is %d bytes", len(r.Reply), len(raw))
	}
	got, err := s.Load("ctx-1")
	var data bytes.Buffer
	if err == nil {
		err = json.Compact(&data, got.ReplyParts[0].Data)
	}
	if err != nil || got.Reply != r.Reply || got.ReplyParts[0].Name != "<x>" || data.String() != `{"html":"<p>"}` {
		t.Fatalf("read back: %v, a reply of %d bytes, part %q %s", err, len(got.Reply), got.ReplyParts[0].Name, data.String())
	}
}
