package store

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestFindTask: the newest live record bearing the task id that the filter
// accepts; damaged records, other tasks and an empty id find nothing.
func TestFindTask(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	add := func(id, task string, age time.Duration, st State) {
		t.Helper()
		r := newRecord(id)
		r.TaskID, r.CreatedAt = task, base.Add(-age)
		if err := s.Create(r); err != nil {
			t.Fatal(err)
		}
		if st != Queued {
			h, err := s.Lock(id)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			if _, err := h.Update(func(x *Record) error { x.State = Sending; return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Update(func(x *Record) error { x.State = st; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("followed", "task-1", 2*time.Hour, InputRequired)
	add("answer", "task-1", time.Hour, Queued)
	add("other", "task-2", 0, Working)
	if err := os.WriteFile(s.recordPath("damaged"), []byte(`{"task_id":"task-1"`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		task  string
		where func(*Record) bool
		want  string
	}{
		{"task-1", nil, "answer"},
		{"task-1", func(r *Record) bool { return r.State != Queued }, "followed"},
		{"task-1", func(r *Record) bool { return r.State == Completed }, ""},
		{"task-2", nil, "other"},
		{"task-3", nil, ""},
		{"", nil, ""},
	}
	for _, c := range cases {
		r, err := FindTask(s, c.task, c.where)
		switch {
		case c.want == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("%q: %v %v, want ErrNotFound", c.task, r, err)
		case c.want != "" && (err != nil || r.ContextID != c.want):
			t.Errorf("%q: %v %v, want %s", c.task, r, err, c.want)
		}
	}
}
