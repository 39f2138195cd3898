package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// benchRecord is a record as a finished task leaves it: a reply of a few
// KiB, every timestamp set, the text gone. It is created as a send creates
// one (queued, the text in it) and moved to completed through the
// transitions, as a task gets there.
func benchRecord(b *testing.B, s *Store, id string) {
	b.Helper()
	if err := s.Create(newRecord(id)); err != nil {
		b.Fatal(err)
	}
	h, err := s.Lock(id)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	if _, err := h.Update(func(r *Record) error { r.Send(time.Now()); return nil }); err != nil {
		b.Fatal(err)
	}
	if _, err := h.Update(func(r *Record) error {
		now := time.Now()
		r.PollInterval = Duration(20 * time.Second)
		r.Reply = strings.Repeat("The audit found nothing unusual. ", 100)
		r.Via, r.HTTPStatus, r.Workers = "reply", 200, 1
		r.Finish(Completed, now)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRecordCreate measures writing a new record, as a send does
// before anything leaves: temporary file, fsync, hard link into place,
// directory fsync. Most of it is the file system's (the creation and the
// two fsyncs), so the figure depends on the disk more than on the code.
func BenchmarkRecordCreate(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := s.Create(newRecord(fmt.Sprintf("ctx-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordUpdate measures one state change of a locked record: read,
// decode, encode, write atomically with its fsyncs.
func BenchmarkRecordUpdate(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	benchRecord(b, s, "ctx-update")
	h, err := s.Lock("ctx-update")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Update(func(r *Record) error { r.Workers++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordLoad measures reading and checking one record, what
// result does without --wait.
func BenchmarkRecordLoad(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	benchRecord(b, s, "ctx-load")
	b.ReportAllocs()
	for b.Loop() {
		if r, err := s.Load("ctx-load"); err != nil || r.State != Completed {
			b.Fatalf("%v %v", r, err)
		}
	}
}

// BenchmarkRecordList measures reading every record of a state directory
// with 100 tasks, what a worker's rescan and `send --task` do.
func BenchmarkRecordList(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		benchRecord(b, s, fmt.Sprintf("ctx-%03d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if recs, errs := s.List(); len(recs) != 100 || len(errs) != 0 {
			b.Fatalf("%d records, %v", len(recs), errs)
		}
	}
}

// BenchmarkCheckContextID measures the id check every store call makes.
func BenchmarkCheckContextID(b *testing.B) {
	id := "3f6c2e1a-9b7d-4c1e-8f2a-0d5b6c7e8f90"
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckContextID(id); err != nil {
			b.Fatal(err)
		}
	}
}
