// Command bombmem measures what reading hostile conversations costs: it
// serves a gzip bomb (1 MB of gzip inflating to -mib MiB of zeros, behind
// a conversation's opening) on loopback and reads it with -n concurrent
// GetConversation calls, as a worker's tasks would. Run it under
// /usr/bin/time -v and read "Maximum resident set size" (docs/performance.md,
// "Hostile servers").
//
//	go build -o /tmp/bombmem ./scripts/bombmem && /usr/bin/time -v /tmp/bombmem -n 10
//
// With -kibana it serves a hostile Kibana, and with -a2a a hostile generic
// A2A agent (-mode, see serveHostileA2A), for the real binary to be
// measured against:
//
//	/tmp/bombmem -a2a 127.0.0.1:0 -mode chunks &   # prints its URL
//	/usr/bin/time -v a2a-courier send --url <URL> hi
package main

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
)

func main() {
	n := flag.Int("n", 1, "concurrent reads")
	mib := flag.Int("mib", 1000, "decoded size of the bomb in MiB")
	lie := flag.Bool("lie", false, "make the gzip trailer claim 100 bytes")
	kibana := flag.String("kibana", "", "instead, serve a hostile Kibana on this address (e.g. 127.0.0.1:0) for the real binary: "+
		"status and card as Kibana 9.5, every A2A POST cut with a proxy's 502, every conversation the bomb; prints its URL")
	a2a := flag.String("a2a", "", "instead, serve a hostile generic A2A agent on this address (e.g. 127.0.0.1:0), hostile as -mode says; prints its URL")
	var o a2aOptions
	flag.StringVar(&o.mode, "mode", "chunks", "with -a2a: chunks, list, name, parts, samename, context or failed")
	flag.IntVar(&o.chunks, "chunks", 1600, "with -a2a -mode chunks: artifact-update events")
	flag.IntVar(&o.chunkKiB, "chunk-kib", 256, "with -a2a -mode chunks: KiB of text in each event")
	flag.IntVar(&o.padKiB, "pad-kib", 0, "with -a2a -mode chunks: KiB of metadata beside the text in each event")
	flag.IntVar(&o.mib, "name-mib", 30, "with -a2a -mode name: MiB of the file part's name")
	flag.IntVar(&o.parts, "parts", 20000, "with -a2a -mode parts or samename: file parts in the reply")
	flag.IntVar(&o.reason, "reason-mib", 30, "with -a2a -mode failed: MiB of the failed task's status text")
	flag.Parse()
	if *a2a != "" {
		serveHostileA2A(*a2a, o)
		return
	}
	body := bomb(*mib)
	if *lie {
		binary.LittleEndian.PutUint32(body[len(body)-4:], 100)
	}
	if *kibana != "" {
		serveHostileKibana(*kibana, body)
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	k, err := client.NewKibana(client.KibanaConfig{URL: srv.URL, APIKey: "a2V5OnNlY3JldA==", Retries: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	start := time.Now()
	errs := make([]error, *n)
	var wg sync.WaitGroup
	for i := range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = k.GetConversation(context.Background(), "c")
		}()
	}
	wg.Wait()
	fmt.Printf("%d reads of a %d-byte gzip body inflating to %d MiB in %s\n", *n, len(body), *mib, time.Since(start).Round(time.Millisecond))
	for i, err := range errs {
		if i < 3 || err != nil && errs[0] != nil && err.Error() != errs[0].Error() {
			fmt.Printf("  read %d: kind %s: %v\n", i, client.KindOf(err), err)
		}
	}
}

// serveHostileKibana answers as a Kibana 9.5 would, but for the
// conversations: every one is the bomb. A send is cut (502), so a2a-courier
// recovers by reading the conversation, as after a proxy's cut.
func serveHostileKibana(addr string, bomb []byte) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	json := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/api/status":
			json(w, `{"name":"hostile","version":{"number":"9.5.1","build_flavor":"traditional"},"status":{"overall":{"level":"available"}}}`)
		case strings.HasSuffix(p, ".json") && strings.HasPrefix(p, "/api/agent_builder/a2a/"):
			w.Header().Set("Cache-Control", "public, max-age=3600")
			json(w, `{"name":"Hostile","protocolVersion":"0.3.0","capabilities":{"streaming":false}}`)
		case strings.HasPrefix(p, "/api/agent_builder/a2a/") && r.Method == http.MethodPost:
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
		case strings.HasPrefix(p, "/api/agent_builder/conversations/"):
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/json")
			w.Write(bomb)
		default:
			http.NotFound(w, r)
		}
	}))
}

// bomb is a gzip member of mib MiB of zeros, built from one compressed
// segment repeated (compressing 1000 MiB takes seconds).
func bomb(mib int) []byte {
	var seg [3][]byte
	var out bytes.Buffer
	fw, _ := flate.NewWriter(&out, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := range seg {
		start := out.Len()
		fw.Write(zeros)
		fw.Flush()
		seg[i] = bytes.Clone(out.Bytes()[start:])
	}
	if !bytes.Equal(seg[1], seg[2]) {
		panic("the deflate segments of zeros differ")
	}
	b := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
	b = append(b, seg[0]...)
	for i := 1; i < mib; i++ {
		b = append(b, seg[1]...)
	}
	b = append(b, 3, 0)
	crc := uint32(0)
	for range mib {
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	b = binary.LittleEndian.AppendUint32(b, crc)
	return binary.LittleEndian.AppendUint32(b, uint32(mib<<20))
}
