package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/internal/courier"
)

// a2aOptions shape the hostile generic A2A agent of -a2a.
type a2aOptions struct {
	mode     string // chunks, list, name, parts, samename, context
	chunks   int    // chunks: artifact-update events
	chunkKiB int    // chunks: KiB of text in each
	padKiB   int    // chunks: KiB of metadata beside the text in each
	mib      int    // name: MiB of the file part's name
	parts    int    // parts, samename: file parts in the reply
	reason   int    // failed: MiB of the failed task's status text
}

// serveHostileA2A answers as a generic A2A agent on addr, hostile in one
// way (o.mode), for the real binary (send --url, tasks --url, fetch --url):
//
//   - chunks: an A2A 0.3 streaming agent whose message/stream sends
//     o.chunks artifact-update events of o.chunkKiB KiB each (append:true),
//     beside o.padKiB KiB of metadata, then completed; its tasks/get
//     shows the task completed with no artifacts (it keeps none).
//   - list: an A2A 1.0 agent whose ListTasks ignores pageSize: every page
//     about 30 MiB of small tasks (380,000), other tasks on every page,
//     always with a next page.
//   - name: a Message reply with one file part named o.mib MiB of '<'.
//   - parts: a Message reply of o.parts file parts, each its own name.
//   - samename: a Message reply of o.parts file parts, all named report.txt.
//   - context: a Message reply that names another contextId.
//   - failed: a Task reply, failed, whose status message says o.reason MiB
//     of '<' (tasks/get shows it the same).
//
// It prints its URL, and the identity a worker of it serves (for
// `a2a-courier worker --identity`, to run the worker under /usr/bin/time).
func serveHostileA2A(addr string, o a2aOptions) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	base := "http://" + ln.Addr().String()
	fmt.Println(base)
	fmt.Println("identity", courier.Fingerprint(courier.Origin(base+"/"), ""))
	var mu sync.Mutex
	lastContext := "c"
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/json")
			if o.mode == "list" {
				fmt.Fprintf(w, `{"name":"Hostile","supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{}}`, base+"/")
				return
			}
			fmt.Fprintf(w, `{"name":"Hostile","protocolVersion":"0.3.0","url":%q,"capabilities":{"streaming":%v}}`, base+"/", o.mode == "chunks")
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		ctx := gjson.GetBytes(body, "params.message.contextId").String()
		mu.Lock()
		if ctx != "" {
			lastContext = ctx
		}
		ctx = lastContext
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch method := gjson.GetBytes(body, "method").String(); {
		case method == "message/stream":
			streamChunks(w, id, ctx, o)
		case o.mode == "failed" && (method == "message/send" || method == "tasks/get"):
			failedTask(w, id, ctx, o)
		case method == "tasks/get":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"completed"}}}`, id, ctx)
		case method == "ListTasks":
			n := gjson.GetBytes(body, "params.pageToken").Int()
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[`, id)
			w.Write(listPage(n))
			fmt.Fprintf(w, `],"nextPageToken":"%d"}}`, n+1)
		case method == "message/send":
			reply(w, id, ctx, o)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		}
	}))
}

// streamChunks sends the chunks of -mode chunks.
func streamChunks(w http.ResponseWriter, id, ctx string, o a2aOptions) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":\"t-1\",\"contextId\":%q,\"status\":{\"state\":\"working\"}}}\n\n", id, ctx)
	text, pad := strings.Repeat("a", o.chunkKiB<<10), strings.Repeat("p", o.padKiB<<10)
	for i := range o.chunks {
		_, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t-1\",\"contextId\":%q,\"append\":%v,\"metadata\":{\"pad\":\"%s\"},\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"kind\":\"text\",\"text\":\"%s\"}]}}}\n\n",
			id, ctx, i > 0, pad, text)
		if err != nil {
			return // the client stopped reading
		}
	}
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t-1\",\"contextId\":%q,\"final\":true,\"status\":{\"state\":\"completed\"}}}\n\n", id, ctx)
}

// reply answers message/send with the Message of -mode name, parts,
// samename or context.
func reply(w http.ResponseWriter, id, ctx string, o a2aOptions) {
	var parts bytes.Buffer
	switch o.mode {
	case "name":
		fmt.Fprintf(&parts, `{"kind":"file","file":{"name":"%s","mimeType":"text/plain","bytes":"aGk="}}`, strings.Repeat("<", o.mib<<20))
	case "parts", "samename":
		for i := range o.parts {
			if i > 0 {
				parts.WriteByte(',')
			}
			name := fmt.Sprintf("f%05d.txt", i)
			if o.mode == "samename" {
				name = "report.txt"
			}
			fmt.Fprintf(&parts, `{"kind":"file","file":{"name":%q,"mimeType":"text/plain","bytes":%q}}`, name, base64.StdEncoding.EncodeToString([]byte(fmt.Sprint("part ", i))))
		}
	case "context":
		ctx = "another-context"
		parts.WriteString(`{"kind":"text","text":"the reply of another conversation"}`)
	default:
		parts.WriteString(`{"kind":"text","text":"hello"}`)
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"message","role":"agent","messageId":"r-1","contextId":%q,"parts":[%s]}}`, id, ctx, parts.String())
}

// failedTask answers with the task of -mode failed.
func failedTask(w http.ResponseWriter, id, ctx string, o a2aOptions) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"failed","message":{"kind":"message","role":"agent","messageId":"s-1","parts":[{"kind":"text","text":"%s"}]}}}}`,
		id, ctx, strings.Repeat("<", o.reason<<20))
}

// listPage is page n of ListTasks: about 30 MiB of small tasks.
func listPage(n int64) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 30<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"t-%d-%d","contextId":"c-%d","status":{"state":"TASK_STATE_COMPLETED"}}`, n, i, i)
	}
	return b.Bytes()
}
