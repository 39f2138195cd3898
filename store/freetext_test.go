package store

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRecordsKeepFreeTextSmall: whatever a writer puts in a record's
// reason, error and last error messages, status update, agent name and
// Kibana release, Create and Update write at most MaxFreeText bytes of
// each, the start of the text and a marker saying how long it was; the
// record they return is the one written, and the reply is left whole.
func TestRecordsKeepFreeTextSmall(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	huge := func(c string) string { return strings.Repeat(c, 3<<20) }
	r := newRecord("free")
	r.Agent, r.Target.KibanaVersion = huge("a"), huge("9")
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	h, err := s.Lock("free")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	got, err := h.Update(func(x *Record) error {
		x.State = Sending
		x.LastError = &ErrorInfo{Kind: "connection", Message: huge("l")}
		x.Progress = &Progress{State: huge("s"), Text: huge("p")}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Progress; len(p.Text) > MaxFreeText || len(p.State) > MaxFreeText {
		t.Errorf("progress: %d and %d bytes", len(p.Text), len(p.State))
	}
	reply := huge("r")
	got, err = h.Update(func(x *Record) error {
		x.State, x.Reply, x.Reason = Failed, reply, huge("é")
		x.Error = &ErrorInfo{Kind: "rpc", Message: huge("<")}
		x.Progress = &Progress{State: "working", Text: huge("p")}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load("free")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*Record{got, loaded} {
		for field, text := range map[string]string{"reason": rec.Reason, "agent": rec.Agent, "kibana_version": rec.Target.KibanaVersion,
			"error.message": rec.Error.Message, "last_error.message": rec.LastError.Message} {
			if len(text) > MaxFreeText || len(text) < MaxFreeText-4 || !strings.HasSuffix(text, "… [cut: 3145728 bytes in all]") && !strings.HasSuffix(text, "… [cut: 6291456 bytes in all]") ||
				!utf8.ValidString(text) {
				t.Errorf("%s: %d bytes, …%q", field, len(text), text[max(len(text)-40, 0):])
			}
		}
		if rec.Progress != nil {
			t.Errorf("a final record keeps a running task's progress: %d bytes", len(rec.Progress.Text))
		}
		if rec.Reply != reply {
			t.Errorf("the reply was cut: %d bytes", len(rec.Reply))
		}
	}
	if fi, _ := os.Stat(s.recordPath("free")); fi.Size() > int64(len(reply))+64<<10 {
		t.Errorf("a record of %d bytes", fi.Size())
	}
}

// CutText: a text within the bound is itself; a longer one is its start,
// cut at a rune's start, and the marker, within the bound; cut again, it
// stays as it is.
func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{strings.Repeat("x", 40), 40, strings.Repeat("x", 40)},
		{strings.Repeat("x", 41), 40, strings.Repeat("x", 14) + "… [cut: 41 bytes in all]"},
		{strings.Repeat("é", 30), 41, strings.Repeat("é", 7) + "… [cut: 60 bytes in all]"},
		{strings.Repeat("x", 100), 10, "… [cut: 100 bytes in all]"},
	} {
		got := CutText(tc.in, tc.max)
		if got != tc.want || CutText(got, tc.max) != got && len(got) <= tc.max {
			t.Errorf("CutText(%d bytes, %d) = %q, want %q", len(tc.in), tc.max, got, tc.want)
		}
	}
}

func FuzzCutText(f *testing.F) {
	f.Add("why it failed", 4096)
	f.Add(strings.Repeat("é", 3000), 4096)
	f.Add(strings.Repeat("<", 5000), 64)
	f.Add("\xff\xfe"+strings.Repeat("日本", 40), 50)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := CutText(s, max)
		if len(s) <= max {
			if got != s {
				t.Fatalf("a text within the bound was changed: %q", got)
			}
			return
		}
		marker := fmt.Sprintf("… [cut: %d bytes in all]", len(s))
		kept, ok := strings.CutSuffix(got, marker)
		if !ok || !strings.HasPrefix(s, kept) {
			t.Fatalf("%q is not a start of the text and the marker %q", got, marker)
		}
		if len(marker) <= max && len(got) > max {
			t.Fatalf("%d bytes, over the bound %d", len(got), max)
		}
		if kept != "" && !utf8.RuneStart(s[len(kept)]) {
			t.Fatalf("cut inside a rune at %d", len(kept))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("a valid text became invalid: %q", got)
		}
		if len(got) <= max && CutText(got, max) != got {
			t.Fatalf("cut again: %q", CutText(got, max))
		}
	})
}
