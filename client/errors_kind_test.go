package client

import "testing"

// Every kind's name reads back as that kind: records keep the name.
func TestParseKind(t *testing.T) {
	t.Parallel()
	for k, name := range kindNames {
		if got, ok := ParseKind(name); !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", name, got, ok, k)
		}
	}
	if k, ok := ParseKind("no such kind"); ok || k != KindUnexpected {
		t.Errorf("an unknown name gave %v, %v", k, ok)
	}
}
