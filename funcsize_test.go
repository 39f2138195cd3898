package a2acourier

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Limits on one function (a declaration with the closures in it): the
// code that keeps the product's promises must stay readable in one sitting.
const (
	maxFuncLines    = 120
	maxFuncBranches = 35
)

// notMeasured are the trees the limits leave out: the simulator and the
// interop fixtures imitate other programs, and scripts are tools.
var notMeasured = []string{"client/agentbuildertest", "client/interop", "scripts"}

// funcSize is one function's size.
type funcSize struct {
	name            string
	lines, branches int
}

// branches counts the decisions in a function: if, for and range, each
// case and select clause but default, && and ||.
func branches(body ast.Node) int {
	n := 0
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// measure returns the size of every function of the module's Go files,
// tests included, outside notMeasured.
func measure(t *testing.T) []funcSize {
	t.Helper()
	var out []funcSize
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			for _, skip := range notMeasured {
				if filepath.ToSlash(path) == skip {
					return filepath.SkipDir
				}
			}
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				name = recvName(fn.Recv.List[0].Type) + "." + name
			}
			out = append(out, funcSize{
				name:     fmt.Sprintf("%s:%d %s", path, fset.Position(fn.Pos()).Line, name),
				lines:    fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1,
				branches: branches(fn.Body),
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func recvName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return "(*" + recvName(x.X) + ")"
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// TestFunctionsStaySmall keeps every function within maxFuncLines lines
// and maxFuncBranches branches. go test -run TestFunctionsStaySmall -v
// prints the largest.
func TestFunctionsStaySmall(t *testing.T) {
	t.Parallel()
	sizes := measure(t)
	for _, s := range sizes {
		if s.lines > maxFuncLines || s.branches > maxFuncBranches {
			t.Errorf("%s: %d lines, %d branches (at most %d and %d)", s.name, s.lines, s.branches, maxFuncLines, maxFuncBranches)
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].lines > sizes[j].lines })
	for _, s := range sizes[:min(3, len(sizes))] {
		t.Logf("longest: %s: %d lines, %d branches", s.name, s.lines, s.branches)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].branches > sizes[j].branches })
	for _, s := range sizes[:min(3, len(sizes))] {
		t.Logf("most branches: %s: %d lines, %d branches", s.name, s.lines, s.branches)
	}
}
