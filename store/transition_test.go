package store

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const storeImport = "github.com/a2a-courier/a2a-courier/store"

// TestStateChangesOnlyThroughTransitions: outside this package, no code
// (tests aside, which set up records in any state) assigns a record's
// State: a record's state changes only through its transitions (Send,
// Requeue, Work, Finish, Cancel; As for a copy that is shown, never
// written), so that what a transition writes is said in one place. A new
// record names its state in its literal, and Create accepts only queued or
// sending.
func TestStateChangesOnlyThroughTransitions(t *testing.T) {
	t.Parallel()
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !importsStore(f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var lhs []ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				lhs = n.Lhs
			case *ast.IncDecStmt:
				lhs = []ast.Expr{n.X}
			}
			for _, e := range lhs {
				if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "State" {
					bad = append(bad, fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: a record's state is written outside its transitions (store/transition.go)", b)
	}
}

func importsStore(f *ast.File) bool {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == storeImport {
			return true
		}
	}
	return false
}

// TestTransitions: each transition writes the state with what goes with
// it, through Update, and the state machine still refuses a move that no
// transition may make.
func TestTransitions(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	if err := s.Create(newRecord("tr")); err != nil {
		t.Fatal(err)
	}
	h, err := s.Lock("tr")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	step := func(fn func(*Record)) *Record {
		t.Helper()
		r, err := h.Update(func(x *Record) error { fn(x); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := step(func(x *Record) { x.Send(now) })
	if r.State != Sending || r.Message != "" || r.SentAt == nil || !r.SentAt.Equal(now) {
		t.Fatalf("send: %+v", r)
	}
	retry := now.Add(time.Minute)
	r = step(func(x *Record) { x.Requeue("hello", &retry) })
	if r.State != Queued || r.Message != "hello" || r.SentAt != nil || r.RetryAt == nil {
		t.Fatalf("requeue: %+v", r)
	}
	r = step(func(x *Record) { x.Send(now) })
	if r.RetryAt != nil || r.Message != "" {
		t.Fatalf("sent again: %+v", r)
	}
	r = step(func(x *Record) { x.Work(); x.Progress = &Progress{Text: "step 1"} })
	if r.State != Working || r.Progress == nil {
		t.Fatalf("work: %+v", r)
	}
	r = step(func(x *Record) { x.Finish(Expired, now.Add(time.Hour)) })
	if r.State != Expired || r.FinishedAt == nil || !r.FinishedAt.Equal(now.Add(time.Hour)) || r.Progress != nil {
		t.Fatalf("finish: %+v", r)
	}
	r = step(func(x *Record) { x.Cancel("cancel", "asked", now.Add(2*time.Hour)) })
	if r.State != Canceled || r.CanceledBy != "cancel" || r.Reason != "asked" {
		t.Fatalf("cancel: %+v", r)
	}
	if _, err := h.Update(func(x *Record) error { x.Send(now); return nil }); !errors.Is(err, ErrIllegalMove) {
		t.Fatalf("canceled → sending: %v", err)
	}
	if shown := r.As(Working); shown.State != Working || r.State != Canceled {
		t.Fatalf("As changed the record: %s %s", shown.State, r.State)
	}
}
