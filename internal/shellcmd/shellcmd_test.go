package shellcmd

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"lab": "lab", "": "''", "my lab": "'my lab'", "it's": `'it'\''s'`, "https://x.example.com:9243/p": "https://x.example.com:9243/p",
		"$(rm -rf ~)": "'$(rm -rf ~)'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
