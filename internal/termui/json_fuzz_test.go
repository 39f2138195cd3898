package termui

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzJSON: any string, encoded as encoding/json does, then through JSON:
// the same value decoded, and nothing a terminal acts on left raw; a
// document with nothing to escape is unchanged.
func FuzzJSON(f *testing.F) {
	f.Add("\u009b2J\x7f\u202e\u200b\U000E0041 ok 日本語")
	f.Add("plain")
	f.Add("\xff\x80")
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"s": s, "list": []string{s, "x"}}); err != nil {
			t.Fatal(err)
		}
		out := JSON(b.Bytes())
		var before, after any
		if err := json.Unmarshal(b.Bytes(), &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("JSON made %q invalid: %q: %v", b.Bytes(), out, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("JSON changed the value: %q → %q", b.Bytes(), out)
		}
		if !utf8.Valid(out) {
			t.Fatalf("not UTF-8: %q", out)
		}
		clean := true
		for _, r := range string(out) {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("%U left raw in %q", r, out)
			}
		}
		for _, r := range s {
			if r == utf8.RuneError || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r) {
				clean = false
			}
		}
		if clean && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029") && !bytes.Equal(out, b.Bytes()) {
			t.Fatalf("a document with nothing to escape changed: %q → %q", b.Bytes(), out)
		}
	})
}
