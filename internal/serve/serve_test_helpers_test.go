package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/runner"
)

func runnerLimits(grace time.Duration) runner.Limits {
	l := runner.DefaultLimits
	l.Grace = grace
	return l
}

func TestAuditLogRotates(t *testing.T) {
	dir := t.TempDir()
	a, err := openAudit(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	entry := auditEntry{Caller: strings.Repeat("c", 1000), Op: "send", Outcome: "started"}
	for i := 0; i < 2*MaxAuditBytes/1000+10; i++ {
		a.write(entry)
	}
	for _, name := range []string{"audit.jsonl", "audit.jsonl.1"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() > MaxAuditBytes || fi.Size() == 0 {
			t.Fatalf("%s: %v %v", name, fi, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("%d files", len(entries))
	}
}
