package a2acourier

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// rewriters are the calls that rewrite a text: a regular expression, a
// string replacement.
var rewriters = map[string]bool{
	"regexp": true, "strings.Replace": true, "strings.ReplaceAll": true, "strings.NewReplacer": true,
	"bytes.Replace": true, "bytes.ReplaceAll": true,
}

// rewritesAllowed are the files of cmd/ and internal/ that may call a
// rewriter, each with why it is no rewrite of a printed text. A printed
// command or hint is a value (internal/nextstep), rendered where it is
// printed, for people or for the MCP server's tools: its text is never
// rewritten after.
var rewritesAllowed = map[string]string{
	"cmd/cli/main.go":               "cobra's usage template, and flag names' spelling: not printed text",
	"cmd/cli/tasks.go":              "a server's task state word (input-required) as a record's state",
	"cmd/cli/demo.go":               "quotes a value for the demo's shell line",
	"internal/config/duration.go":   "parses a duration setting",
	"internal/termui/termui.go":     "a tab of a server's text as a space in a table cell",
	"internal/httplog/httplog.go":   "redacts a URL's secrets in an error for the -v log",
	"internal/userdirs/userdirs.go": "a Windows path's separators",
	"internal/courier/ledger.go":    "a state word of --state as a record's state",
	"internal/shellcmd/shellcmd.go": "quotes a value for a POSIX shell",
	"internal/filename/filename.go": "a file name's backslashes as separators before its last element is taken: a name, not printed text",
	"internal/shellcmd/shell.go":    "quotes a value for PowerShell (its escape is the backtick)",
	"internal/mcpinstall/check.go":  "an error's lines on one line",
}

// TestNoTextIsRewritten keeps printed texts from being rewritten: no
// regular expression or string replacement in cmd/ and internal/ but
// where rewritesAllowed says why.
func TestNoTextIsRewritten(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, root := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			path = filepath.ToSlash(path)
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || !(rewriters[pkg.Name] || rewriters[pkg.Name+"."+sel.Sel.Name]) {
					return true
				}
				used[path] = true
				if _, ok := rewritesAllowed[path]; !ok {
					t.Errorf("%s: %s.%s rewrites a text: print a nextstep value instead (or say in rewritesAllowed why it is no printed text)",
						fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for path := range rewritesAllowed {
		if !used[path] {
			t.Errorf("%s rewrites no text any more: take it out of rewritesAllowed", path)
		}
	}
}
