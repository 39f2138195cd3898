package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// refDepth is the nesting of valid JSON b, by encoding/json's tokens.
func refDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, most := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			most = max(most, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// FuzzDecodeResponse feeds bodies to decodeResponse, the transport's reader
// and checker of a 2xx body: plain or gzip, with a known length or not,
// with the gzip trailer's length (ISIZE) as sent or replaced, cut short,
// or in two members, the document repeated to make bombs. The cap is a few
// KiB so that small inputs reach it.
//
// Properties: no panic, no stack overflow (a crash of the fuzzing
// process); what the decoder reserves never passes the wire body plus the
// cap (twice the wire body while a body of unknown length is joined), nor
// does it allocate past that and a constant; the reservation is given back;
// a failure is a one-line *Error of KindProtocol (bad or oversized body) or
// KindConnection (cut or corrupt); a body that encoding/json calls valid,
// no deeper than MaxNesting and within the cap, comes back byte for byte,
// and a deeper one is ErrNestedTooDeep; one it calls invalid fails.
func FuzzDecodeResponse(f *testing.F) {
	const (
		none = -1 // keep the trailer's ISIZE
	)
	f.Add([]byte(`{"id":"c","rounds":[]}`), false, uint8(0), int64(none), uint16(0), uint8(0), uint16(1), uint8(16))
	f.Add([]byte(`{"id":"c","rounds":[]}`), true, uint8(1), int64(none), uint16(0), uint8(0), uint16(1), uint8(16))
	f.Add(deep(MaxNesting), false, uint8(0), int64(none), uint16(0), uint8(0), uint16(1), uint8(16))
	f.Add(deep(MaxNesting+1), true, uint8(0), int64(none), uint16(0), uint8(0), uint16(1), uint8(16))
	f.Add([]byte(strings.Repeat(`{"a":`, 3000)), true, uint8(1), int64(none), uint16(0), uint8(0), uint16(1), uint8(255))
	f.Add([]byte(`["`+strings.Repeat("[", 3000)+`"]`), false, uint8(1), int64(none), uint16(0), uint8(0), uint16(1), uint8(255))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00"), true, uint8(0), int64(none), uint16(0), uint8(0), uint16(60000), uint8(0)) // a bomb
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00"), true, uint8(1), int64(10), uint16(0), uint8(0), uint16(60000), uint8(0))   // lying ISIZE
	f.Add([]byte(`[1,2,3]`), true, uint8(0), int64(1<<32-1), uint16(0), uint8(0), uint16(1), uint8(0))
	f.Add([]byte(`{"id":"c","rounds":[{"x":"`+strings.Repeat("y", 200)+`"}]}`), true, uint8(0), int64(none), uint16(9), uint8(0), uint16(1), uint8(4)) // cut
	f.Add([]byte(`{"id":"c","x":[1,2]}`), true, uint8(0), int64(none), uint16(0), uint8(1), uint16(1), uint8(4))                                       // two members
	f.Add([]byte(`{"id":"c"}`), false, uint8(2), int64(none), uint16(0), uint8(2), uint16(1), uint8(4))                                                // quick check
	f.Fuzz(func(t *testing.T, doc []byte, zip bool, framing uint8, isize int64, cut uint16, shape uint8, repeat uint16, capKiB uint8) {
		// The document, repeated: small inputs make bombs.
		if repeat == 0 || len(doc) == 0 {
			repeat = 1
		}
		if n := len(doc) * int(repeat); n > 4<<20 {
			repeat = uint16(max(1, (4<<20)/len(doc)))
		}
		plain := bytes.Repeat(doc, int(repeat))
		maxBody := int64(capKiB)<<10 + 1024
		quickAbove := int64(0)
		if shape == 2 {
			quickAbove = 512 // large bodies are then only checked for their shape
		}
		wire := plain
		if zip {
			var b bytes.Buffer
			parts := [][]byte{plain}
			if shape == 1 {
				parts = [][]byte{plain[:len(plain)/2], plain[len(plain)/2:]}
			}
			for _, p := range parts {
				zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
				zw.Write(p)
				zw.Close()
			}
			wire = b.Bytes()
			if isize >= 0 && len(wire) >= 4 {
				binary.LittleEndian.PutUint32(wire[len(wire)-4:], uint32(isize))
			}
		}
		intact := int(cut) == 0
		if int(cut) > 0 {
			wire = wire[:max(0, len(wire)-int(cut))]
		}
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: -1, Body: io.NopCloser(bytes.NewReader(wire))}
		switch framing % 3 {
		case 0:
			resp.ContentLength = int64(len(wire))
		case 1:
			resp.TransferEncoding = []string{"chunked"}
		}
		if zip {
			resp.Header.Set("Content-Encoding", "gzip")
		}

		b := NewReadBudget(1 << 30)
		l := b.lease()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		data, err := decodeResponse(context.Background(), "fuzz", resp, maxBody, quickAbove, l)
		runtime.ReadMemStats(&after)
		l.release()

		w := int64(len(wire))
		if limit := 2*w + max(maxBody, inflateScratch) + 4<<20; l.peak > limit {
			t.Fatalf("reserved %d bytes, over %d (wire %d, cap %d)", l.peak, limit, w, maxBody)
		}
		// Allocated: what was reserved, the chunk reserved past the end
		// of a body of unknown length, the inflaters' state and the
		// error's text.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*w+maxBody+8<<20); got > limit {
			t.Fatalf("allocated %d bytes, over %d (wire %d, cap %d)", got, limit, w, maxBody)
		}
		if b.InUse() != 0 {
			t.Fatalf("%d bytes still reserved", b.InUse())
		}
		if int64(len(data)) > maxBody {
			t.Fatalf("a body of %d bytes passed the %d cap", len(data), maxBody)
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Kind != KindProtocol && ce.Kind != KindConnection {
				t.Fatalf("got %v (%T), want a protocol or connection *Error", err, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || len([]rune(msg)) > 500 {
				t.Fatalf("not one short line: %q", msg)
			}
		}
		// What the body should come to, when the test knows.
		trusted := intact && (!zip || isize < 0)
		if !trusted || quickAbove > 0 {
			return
		}
		checkDecoded(t, plain, maxBody, data, err)
	})
}

// checkDecoded checks what a whole, trusted body came to: refused when it
// is empty, over the cap, not JSON or nested too deep, else returned byte
// for byte.
func checkDecoded(t *testing.T, plain []byte, maxBody int64, data []byte, err error) {
	t.Helper()
	switch {
	case len(plain) == 0:
		if err == nil {
			t.Fatal("an empty body was accepted")
		}
	case int64(len(plain)) > maxBody:
		if !errors.Is(err, ErrReplyTooLarge) {
			t.Fatalf("a body of %d bytes over the %d cap: got %v", len(plain), maxBody, err)
		}
	case !json.Valid(plain):
		if err == nil {
			t.Fatalf("invalid JSON was accepted: %.80q", plain)
		}
	case refDepth(plain) > MaxNesting:
		if !errors.Is(err, ErrNestedTooDeep) {
			t.Fatalf("nesting %d: got %v, want ErrNestedTooDeep", refDepth(plain), err)
		}
	default:
		if err != nil {
			t.Fatalf("valid JSON (nesting %d, %d bytes) refused: %v", refDepth(plain), len(plain), err)
		}
		if !bytes.Equal(data, plain) {
			t.Fatal("the body came back changed")
		}
	}
}
