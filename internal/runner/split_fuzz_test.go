package runner

import (
	"slices"
	"strings"
	"testing"
)

// quoteWord quotes a word so that Split reads it back as it is.
func quoteWord(w string) string { return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'" }

// FuzzSplit checks that a line Split accepts has at least one word, that
// its words quoted and joined split back to the same words, and that
// without quotes or backslashes the words are the line's fields.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{`muse exec --headless`, `a 'b c' "d\"e" f\ g`, `'it''s'`, `""`, `a "b`, `\`, "a\tb\nc", `$HOME | x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatalf("Split(%q) accepted with no words", line)
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quoteWord(w)
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("Split(%q) = %q; quoted and split again: %q, %v", line, words, again, err)
		}
		if !strings.ContainsAny(line, `'"\`) && !slices.Equal(words, strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })) {
			t.Fatalf("Split(%q) = %q, not its fields", line, words)
		}
	})
}
