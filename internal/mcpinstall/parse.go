package mcpinstall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// maxNesting bounds how many arrays and objects a configuration file may
// open inside one another. An assistant's MCP configuration nests five or
// six levels; 1000 is the bound of client.MaxNesting, and of the JSON
// parsers the assistants themselves are built on.
//
// The bound exists for hujson, whose parser (and Standardize, Pack, Clone)
// recurses once per level: a file of four million '[' (8 MB, under
// maxFileSize) overflowed the stack and ended the process at 1 GB, with
// --dry-run too. At 1000 levels it needs a few hundred kilobytes of stack.
const maxNesting = 1000

// nestsTooDeep reports whether a file opens more than maxNesting arrays or
// objects inside one another. It is one pass without recursion that skips
// strings and comments as hujson reads them (a string ends at its first
// unescaped quote, a line comment at its line's end, a block comment at
// "*/"), so brackets inside them do not count. On a file hujson refuses it
// may judge either way: hujson stops at its first error, and up to there
// the two read the same brackets.
func nestsTooDeep(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(b) && b[i+1] == '/':
				if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
					i += j
				} else {
					i = len(b)
				}
			case i+1 < len(b) && b[i+1] == '*':
				if j := bytes.Index(b[i+2:], []byte("*/")); j >= 0 {
					i += 2 + j + 1
				} else {
					i = len(b)
				}
			}
		case '[', '{':
			if depth++; depth > maxNesting {
				return true
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// parseConfig parses a configuration file (JSON, or JSON with comments and
// trailing commas), refusing one that nests deeper than maxNesting before
// any recursive parse.
func parseConfig(b []byte) (hujson.Value, error) {
	if nestsTooDeep(b) {
		return hujson.Value{}, cannotEdit(nil, "the file nests deeper than %d levels: not an MCP configuration", maxNesting)
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return hujson.Value{}, cannotEdit(err, "the file is not JSON (or JSON with comments): %s", termui.Escaped(err.Error(), 160))
	}
	return v, nil
}

// memberName is the name of an object's member, decoded ("\u006d" is m),
// and whether it could be.
func memberName(m hujson.ObjectMember) (string, bool) {
	var got string
	lit, ok := m.Name.Value.(hujson.Literal)
	return got, ok && json.Unmarshal(lit, &got) == nil
}

// unique refuses an object that names one of names twice. The assistants
// read their file with JSON.parse (or a parser like it), which keeps the
// last of two members of one name; an edit of the first would never be
// loaded, and an edit of the last would leave beside it a stale entry a
// person reading the file takes for the one in use. where says whose
// members they are ("" for the top level).
func unique(obj *hujson.Object, where string, names ...string) error {
	seen := map[string]bool{}
	for _, m := range obj.Members {
		n, ok := memberName(m)
		if !ok {
			continue
		}
		for _, want := range names {
			if n != want {
				continue
			}
			if seen[n] {
				return cannotEdit(nil, "the file has %q twice%s: the assistant reads only the last, and a2a-courier will not choose; keep one of them", n, where)
			}
			seen[n] = true
		}
	}
	return nil
}

// path names where a member is, for unique's message: ` in "mcpServers"`,
// ` in "a2a-courier" of "mcpServers"`.
func path(keys ...string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[len(keys)-1-i] = fmt.Sprintf("%q", k)
	}
	return " in " + strings.Join(q, " of ")
}
