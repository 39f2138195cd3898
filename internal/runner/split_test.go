package runner

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`muse exec --headless`, []string{"muse", "exec", "--headless"}},
		{`  a   b  `, []string{"a", "b"}},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}},
		{`a "x\"y" 'it''s'`, []string{"a", `x"y`, "its"}},
		{`a b\ c`, []string{"a", "b c"}},
		{`echo $HOME | rm -rf ; x > y`, []string{"echo", "$HOME", "|", "rm", "-rf", ";", "x", ">", "y"}},
		{`a ""`, []string{"a", ""}},
	}
	for _, c := range cases {
		got, err := Split(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `   `, `a 'b`, `a "b`, `a \`} {
		if got, err := Split(bad); err == nil {
			t.Errorf("Split(%q) = %q, want an error", bad, got)
		}
	}
}
