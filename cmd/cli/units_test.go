package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods is how many methods a type of cmd/ may declare: a type with
// more is doing the work of several (issue 22: App had 87).
const maxMethods = 15

// cmdFiles parses every non-test Go file of cmd/, whatever its build tags.
func cmdFiles(t *testing.T) (*token.FileSet, map[string][]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		pkgs[dir] = append(pkgs[dir], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs[filepath.Join("..", "cli")]) == 0 {
		t.Fatal("no file of cmd/cli parsed: the test must run in cmd/cli")
	}
	return fset, pkgs
}

// receiverName is the name of a method's receiver type.
func receiverName(fd *ast.FuncDecl) string {
	e := fd.Recv.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// No type of cmd/ declares more than maxMethods methods (non-test files).
func TestNoTypeHasTooManyMethods(t *testing.T) {
	t.Parallel()
	_, pkgs := cmdFiles(t)
	for dir, files := range pkgs {
		methods := map[string][]string{}
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
					continue
				}
				recv := receiverName(fd)
				methods[recv] = append(methods[recv], fd.Name.Name)
			}
		}
		for typ, ms := range methods {
			if len(ms) > maxMethods {
				sort.Strings(ms)
				t.Errorf("%s: type %s declares %d methods (at most %d): %s", dir, typ, len(ms), maxMethods, strings.Join(ms, ", "))
			}
		}
	}
}

// No package-level var of cmd/ is assigned outside its declaration (the
// linker's -X, which sets Version and Commit, is no assignment): a command
// line's state is its own, never the package's.
func TestNoPackageStateIsAssigned(t *testing.T) {
	t.Parallel()
	fset, pkgs := cmdFiles(t)
	for dir, files := range pkgs {
		vars := map[string]bool{}
		for _, f := range files {
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
					for _, s := range gd.Specs {
						for _, n := range s.(*ast.ValueSpec).Names {
							vars[n.Name] = true
						}
					}
				}
			}
		}
		for _, f := range files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				locals := declaredIn(fd)
				check := func(e ast.Expr) {
					if name := rootIdent(e); name != "" && vars[name] && !locals[name] {
						t.Errorf("%s: package-level var %s of %s is assigned in %s", fset.Position(e.Pos()), name, dir, fd.Name.Name)
					}
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch s := n.(type) {
					case *ast.AssignStmt:
						if s.Tok != token.DEFINE {
							for _, l := range s.Lhs {
								check(l)
							}
						}
					case *ast.IncDecStmt:
						check(s.X)
					case *ast.UnaryExpr:
						if s.Op == token.AND {
							check(s.X) // its address, to be written through
						}
					}
					return true
				})
			}
		}
	}
}

// rootIdent is the variable an assigned expression writes into: x of x,
// x.f, x[i], *x.
func rootIdent(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// declaredIn are the names fd declares itself (parameters, results,
// receivers, := and var inside), which may shadow a package-level var.
func declaredIn(fd *ast.FuncDecl) map[string]bool {
	names := map[string]bool{}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				names[n.Name] = true
			}
		}
	}
	fields(fd.Recv)
	fields(fd.Type.Params)
	fields(fd.Type.Results)
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				names[id.Name] = true
			}
		case *ast.FuncLit:
			fields(s.Type.Params)
			fields(s.Type.Results)
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{s.Key, s.Value} {
				if id, ok := e.(*ast.Ident); ok && s.Tok == token.DEFINE {
					names[id.Name] = true
				}
			}
		}
		return true
	})
	return names
}
