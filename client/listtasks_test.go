package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// TestContextTasksSDKServers lists the tasks of a context on real SDK
// servers: every page of an a2a-js v1.0 server, newest first, each with
// the ids of its messages; and ErrNoTaskList from servers that speak 0.3.
func TestContextTasksSDKServers(t *testing.T) {
	t.Parallel()
	gos, js := interoptest.StartGo(t), interoptest.StartJS(t)
	connect := func(t *testing.T, ctx context.Context, srv *interoptest.Server, mount string) *A2A {
		t.Helper()
		ra, err := ResolveAgent(ctx, nil, srv.URL(mount, interoptest.AgentSlow), "test")
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewA2A(A2AConfig{Endpoint: ra.Endpoint, Dialect: ra.Dialect, Tenant: ra.Tenant})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("a2a-js v1.0", func(t *testing.T) {
		t.Parallel()
		ctx := deadline(t, 60*time.Second)
		c := connect(t, ctx, js, interoptest.MountV1)
		if c.Dialect() != V10 {
			t.Fatalf("dialect %s", c.Dialect())
		}
		c.pageSize = 2 // five tasks: three pages
		ctxID := "ctx-list-" + uuid.NewString()
		// A task of another context must not be listed.
		if _, err := c.Send(ctx, OutgoingMessage{Text: "chunks=1 delay=1ms", MessageID: uuid.NewString(), ContextID: "other-" + ctxID}, false); err != nil {
			t.Fatal(err)
		}
		var msgIDs, taskIDs []string
		for range 5 {
			mid := uuid.NewString()
			res, err := c.Send(ctx, OutgoingMessage{Text: "chunks=1 delay=1ms", MessageID: mid, ContextID: ctxID}, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != "task" || res.State != "completed" {
				t.Fatalf("%+v", res)
			}
			msgIDs, taskIDs = append(msgIDs, mid), append(taskIDs, res.TaskID)
			time.Sleep(5 * time.Millisecond) // timestamps have millisecond precision
		}
		tasks, err := c.ContextTasks(ctx, ctxID, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ti := range tasks {
			got = append(got, ti.ID)
			if ti.State != "completed" || ti.ContextID != ctxID {
				t.Errorf("%+v", ti)
			}
		}
		want := slices.Clone(taskIDs)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Fatalf("tasks %v, want newest first %v", got, want)
		}
		for i, mid := range msgIDs {
			if !slices.Contains(tasks[len(tasks)-1-i].MessageIDs, mid) {
				t.Errorf("task %s: message ids %v lack %s", taskIDs[i], tasks[len(tasks)-1-i].MessageIDs, mid)
			}
			// FindTask takes the task holding the message, never the newest.
			if id, err := c.FindTask(ctx, ctxID, mid); err != nil || id != taskIDs[i] {
				t.Errorf("FindTask(%s) = %q, %v; want %s", mid, id, err, taskIDs[i])
			}
		}
		// Without history, no message ids (and less to read).
		bare, err := c.ContextTasks(ctx, ctxID, false)
		if err != nil || len(bare) != 5 || len(bare[0].MessageIDs) != 0 {
			t.Errorf("%+v %v", bare, err)
		}
		if none, err := c.ContextTasks(ctx, "no-such-"+ctxID, false); err != nil || len(none) != 0 {
			t.Errorf("an unknown context: %+v %v", none, err)
		}
	})

	t.Run("a2a-go v0.3", func(t *testing.T) {
		t.Parallel()
		ctx := deadline(t, 60*time.Second)
		c := connect(t, ctx, gos, interoptest.MountGo)
		if _, err := c.ContextTasks(ctx, "any", false); !errors.Is(err, ErrNoTaskList) {
			t.Fatalf("v0.3: %v", err)
		}
		// Spoken to in 1.0 anyway, it has no ListTasks (-32601).
		c.dialect = V10
		_, err := c.ContextTasks(ctx, "any", false)
		if !errors.Is(err, ErrNoTaskList) || rpcCode(err) != -32601 {
			t.Fatalf("forced 1.0: %v", err)
		}
		if id, err := c.FindTask(ctx, "any", "m"); id != "" || !errors.Is(err, ErrNoTaskList) {
			t.Errorf("FindTask %q %v", id, err)
		}
	})

	t.Run("a2a-js v0.3", func(t *testing.T) {
		t.Parallel()
		ctx := deadline(t, 60*time.Second)
		c := connect(t, ctx, js, interoptest.MountV03)
		if _, err := c.ContextTasks(ctx, "any", false); !errors.Is(err, ErrNoTaskList) {
			t.Fatalf("v0.3: %v", err)
		}
	})
}

// TestContextTasksServerQuirks covers what the SDK servers do not show:
// HTTP 404/405/501 for the method, a filter the server ignores, a page token
// that does not move, timestamps missing or in another precision.
func TestContextTasksServerQuirks(t *testing.T) {
	t.Parallel()
	type reply func(w http.ResponseWriter, id, params string)
	serve := func(t *testing.T, f reply) (*A2A, *atomic.Int32) {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			body, _ := io.ReadAll(r.Body)
			if gjson.GetBytes(body, "method").String() != "ListTasks" || r.Header.Get("A2A-Version") != "1.0" {
				t.Errorf("request %s, A2A-Version %q", body, r.Header.Get("A2A-Version"))
			}
			f(w, gjson.GetBytes(body, "id").Raw, gjson.GetBytes(body, "params").Raw)
		}))
		t.Cleanup(srv.Close)
		c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V10})
		if err != nil {
			t.Fatal(err)
		}
		return c, &calls
	}
	ctx := context.Background()
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented} {
		t.Run(fmt.Sprint("HTTP ", status), func(t *testing.T) {
			t.Parallel()
			c, _ := serve(t, func(w http.ResponseWriter, _, _ string) { w.WriteHeader(status) })
			if _, err := c.ContextTasks(ctx, "c1", false); !errors.Is(err, ErrNoTaskList) {
				t.Fatalf("%v", err)
			}
		})
	}
	t.Run("-32004 unsupported", func(t *testing.T) {
		t.Parallel()
		c, _ := serve(t, func(w http.ResponseWriter, id, _ string) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32004,"message":"unsupported"}}`, id)
		})
		if _, err := c.ContextTasks(ctx, "c1", false); !errors.Is(err, ErrNoTaskList) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("other errors are not a missing list", func(t *testing.T) {
		t.Parallel()
		c, _ := serve(t, func(w http.ResponseWriter, id, _ string) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom"}}`, id)
		})
		if _, err := c.ContextTasks(ctx, "c1", false); err == nil || errors.Is(err, ErrNoTaskList) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("filter ignored, token stuck, odd timestamps", func(t *testing.T) {
		t.Parallel()
		var history atomic.Value
		c, calls := serve(t, func(w http.ResponseWriter, id, params string) {
			history.Store(gjson.Get(params, "historyLength").Raw)
			page := `{"id":"t-old","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T10:00:00Z"},"history":[{"messageId":"m-old"}]},` +
				`{"id":"t-other","contextId":"c2","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-01T12:00:00Z"}},` +
				`{"id":"t-nots","contextId":"c1","status":{"state":3}},` +
				`{"id":"t-new","contextId":"c1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-01-01T11:00:00.123456789Z"},"history":[{"messageId":"m-new"}]}`
			if gjson.Get(params, "pageToken").String() == "" {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[%s],"nextPageToken":"p2"}}`, id, page)
				return
			}
			// The same token again, and a task already seen.
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[{"id":"t-new","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}],"nextPageToken":"p2"}}`, id)
		})
		tasks, err := c.ContextTasks(ctx, "c1", true)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ti := range tasks {
			got = append(got, ti.ID+":"+ti.State)
		}
		if strings.Join(got, " ") != "t-new:working t-old:completed t-nots:completed" {
			t.Errorf("tasks %v", got)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("%d calls: a stuck page token must end the listing", n)
		}
		if h := history.Load(); h != "100" {
			t.Errorf("with history, historyLength %v: the server's default may be the whole history, or cut it", h)
		}
		if id, _ := c.FindTask(ctx, "c1", "m-old"); id != "t-old" {
			t.Errorf("FindTask %q", id)
		}
		if _, err := c.ContextTasks(ctx, "c1", false); err != nil || history.Load() != "0" {
			t.Errorf("without history: historyLength %v, %v", history.Load(), err)
		}
	})
}

// TestContextTasksHistoryIsBounded: a server whose default historyLength is
// the whole history, with long tasks, would send pages of history larger
// than the response cap; with history asked for, pages are smaller and each
// task brings only its newest messages, so the listing fits.
func TestContextTasksHistoryIsBounded(t *testing.T) {
	t.Parallel()
	const tasks, messages = 30, 300
	text := strings.Repeat("x", 200)
	task := func(i, history int) string {
		var b strings.Builder
		for m := messages - history; m < messages; m++ {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"messageId":"m-%d-%d","role":"ROLE_USER","parts":[{"text":%q}]}`, i, m, text)
		}
		return fmt.Sprintf(`{"id":"t-%d","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T10:%02d:00Z"},"history":[%s]}`, i, i, b.String())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p := gjson.GetBytes(body, "params")
		// As the spec says: pageSize defaults to 50; historyLength unset is
		// the server's default (here the whole history), 0 none.
		size, history := 50, messages
		if v := p.Get("pageSize"); v.Exists() {
			size = int(v.Int())
		}
		if v := p.Get("historyLength"); v.Exists() {
			history = min(int(v.Int()), messages)
		}
		start := int(p.Get("pageToken").Int())
		var list []string
		for i := start; i < min(start+size, tasks); i++ {
			list = append(list, task(tasks-1-i, history)) // newest first
		}
		next := ""
		if start+size < tasks {
			next = fmt.Sprint(start + size)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[%s],"nextPageToken":%q}}`, gjson.GetBytes(body, "id").Raw, strings.Join(list, ","), next)
	}))
	t.Cleanup(srv.Close)
	// Whole histories: 30 tasks of 300 messages of some 280 bytes, 2.5 MB.
	c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V10, MaxResponseBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := c.ContextTasks(ctx, "c1", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != tasks || list[0].ID != "t-29" || len(list[0].MessageIDs) != 100 {
		t.Fatalf("%d tasks, first %s with %d message ids", len(list), list[0].ID, len(list[0].MessageIDs))
	}
	if id, err := c.FindTask(ctx, "c1", fmt.Sprintf("m-7-%d", messages-1)); err != nil || id != "t-7" {
		t.Errorf("FindTask %q %v", id, err)
	}
}
