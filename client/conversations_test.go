package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

const testKey = "dGVzdDprZXk=" // base64 of test:key

func simOptions(version agentbuildertest.Version) agentbuildertest.Options {
	return agentbuildertest.Options{
		Version: version,
		Keys:    []agentbuildertest.Key{{APIKey: testKey, Username: "tester"}, {APIKey: "b3RoZXI6a2V5", Username: "other"}},
		Agents: []agentbuildertest.Agent{
			{ID: "elastic-ai-agent", Name: "Elastic AI Agent"},
			{ID: "audit-agent", Name: "Audit Analyst", Tools: []string{"platform.core.search", "platform.core.execute_esql"}, ToolResultBytes: 32 << 10},
		},
	}
}

// recordingServer serves the simulator on loopback and records the query
// of every conversation-list request.
type recordingServer struct {
	*agentbuildertest.Sim
	URL string

	mu      sync.Mutex
	queries []url.Values
}

func newRecordingServer(t *testing.T, opts agentbuildertest.Options) *recordingServer {
	t.Helper()
	rs := &recordingServer{Sim: agentbuildertest.New(opts)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/api/agent_builder/conversations") {
			rs.mu.Lock()
			rs.queries = append(rs.queries, r.URL.Query())
			rs.mu.Unlock()
		}
		rs.Sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); rs.Sim.Close() })
	rs.URL = srv.URL
	return rs
}

func (rs *recordingServer) listQueries() []url.Values {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]url.Values(nil), rs.queries...)
}

func newKibana(t testing.TB, base string) *client.Kibana {
	t.Helper()
	k, err := client.NewKibana(client.KibanaConfig{URL: base, APIKey: testKey, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var t0 = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)

func ids(cs []client.ConversationSummary) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestListConversationsUnorderedListIsSortedOnTheClient(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V92, agentbuildertest.V95} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			rs := newRecordingServer(t, simOptions(v))
			// Conversations 2k and 2k+1 share a second, the odd one 1 ms
			// later: as text, "…:05Z" sorts after "…:05.001Z", as instants
			// it is before.
			const n = 40
			var want []string
			for i := n - 1; i >= 0; i-- {
				want = append(want, fmt.Sprintf("a2a-c%02d", i))
			}
			for i := 0; i < n; i++ {
				ts := t0.Add(time.Duration(i/2) * time.Second)
				if i%2 == 1 {
					ts = ts.Add(time.Millisecond)
				}
				rs.PutConversation("", fmt.Sprintf("a2a-c%02d", i), "elastic-ai-agent", "tester", fmt.Sprintf("Title %d", i), ts)
			}
			rs.PutConversation("", "a2a-not-mine", "elastic-ai-agent", "other", "Other's", t0.Add(time.Hour))
			k := newKibana(t, rs.URL)
			for try := 0; try < 3; try++ { // the simulator shuffles each time
				list, err := k.ListConversations(context.Background(), client.ListConversationsOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(list.Conversations); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("order:\n got %v\nwant %v", got, want)
				}
				if list.Paginated || list.Capped || list.Total != n {
					t.Fatalf("list = paginated %v capped %v total %d", list.Paginated, list.Capped, list.Total)
				}
			}
			list, err := k.ListConversations(context.Background(), client.ListConversationsOptions{Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(list.Conversations); strings.Join(got, ",") != strings.Join(want[:5], ",") || list.Total != n {
				t.Fatalf("limit 5: got %v (total %d), want %v", got, list.Total, want[:5])
			}
			c := list.Conversations[0]
			if c.Title != "Title 39" || c.AgentID != "elastic-ai-agent" || c.UpdatedAt != "2026-11-03T10:00:19.001Z" {
				t.Fatalf("first entry = %+v", c)
			}
			for _, q := range rs.listQueries() {
				if len(q) != 0 {
					t.Fatalf("a 9.2–9.5 list request carried query parameters %v; those versions refuse unknown keys", q)
				}
			}
		})
	}
}

func TestListConversationsFollowsPagesUntilTheLimit(t *testing.T) {
	t.Parallel()
	rs := newRecordingServer(t, simOptions(agentbuildertest.V96))
	const n = 2500
	for i := 0; i < n; i++ {
		agent := "elastic-ai-agent"
		if i%5 == 0 {
			agent = "audit-agent"
		}
		rs.PutConversation("", fmt.Sprintf("a2a-%04d", i), agent, "tester", fmt.Sprintf("T%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	k := newKibana(t, rs.URL)
	cases := []struct {
		name         string
		opts         client.ListConversationsOptions
		wantN        int
		wantTotal    int
		wantRequests int
		wantFirst    string
		wantLast     string
	}{
		{"all", client.ListConversationsOptions{}, n, n, 3, "a2a-2499", "a2a-0000"},
		{"limit within the first page", client.ListConversationsOptions{Limit: 20}, 20, n, 1, "a2a-2499", "a2a-2480"},
		{"limit on the second page", client.ListConversationsOptions{Limit: 1500}, 1500, n, 2, "a2a-2499", "a2a-1000"},
		{"limit on a page boundary", client.ListConversationsOptions{Limit: 2000}, 2000, n, 2, "a2a-2499", "a2a-0500"},
		{"limit beyond the end", client.ListConversationsOptions{Limit: 9000}, n, n, 3, "a2a-2499", "a2a-0000"},
		{"agent filter", client.ListConversationsOptions{AgentID: "audit-agent"}, 500, 500, 1, "a2a-2495", "a2a-0000"},
	}
	for _, tc := range cases {
		before := len(rs.listQueries())
		list, err := k.ListConversations(context.Background(), tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ids(list.Conversations)
		if len(got) != tc.wantN || list.Total != tc.wantTotal || list.Requests != tc.wantRequests || !list.Paginated || list.Capped {
			t.Fatalf("%s: got %d (total %d, %d requests, paginated %v, capped %v), want %d (total %d, %d requests)",
				tc.name, len(got), list.Total, list.Requests, list.Paginated, list.Capped, tc.wantN, tc.wantTotal, tc.wantRequests)
		}
		if got[0] != tc.wantFirst || got[len(got)-1] != tc.wantLast {
			t.Fatalf("%s: first %s last %s, want %s and %s", tc.name, got[0], got[len(got)-1], tc.wantFirst, tc.wantLast)
		}
		for i := 1; i < len(got); i++ {
			if got[i] >= got[i-1] {
				t.Fatalf("%s: not newest first at %d: %s after %s", tc.name, i, got[i], got[i-1])
			}
		}
		qs := rs.listQueries()[before:]
		if len(qs) != tc.wantRequests {
			t.Fatalf("%s: the server saw %d requests", tc.name, len(qs))
		}
		if qs[0].Has("page") || qs[0].Has("per_page") {
			t.Fatalf("%s: the first request carries pagination parameters: %v", tc.name, qs[0])
		}
		for p, q := range qs[1:] {
			if q.Get("page") != fmt.Sprint(p+2) || q.Get("per_page") != "1000" || q.Get("agent_id") != tc.opts.AgentID {
				t.Fatalf("%s: request %d query %v", tc.name, p+2, q)
			}
		}
	}
}

func TestListConversationsReportsTheUnpagedCap(t *testing.T) {
	t.Parallel()
	rs := newRecordingServer(t, simOptions(agentbuildertest.V93))
	for i := 0; i < 1003; i++ {
		rs.PutConversation("", fmt.Sprintf("a2a-%04d", i), "elastic-ai-agent", "tester", "t", t0.Add(time.Duration(i)*time.Second))
	}
	list, err := newKibana(t, rs.URL).ListConversations(context.Background(), client.ListConversationsOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !list.Capped || list.Total != 1000 || len(list.Conversations) != 10 {
		t.Fatalf("capped %v total %d n %d", list.Capped, list.Total, len(list.Conversations))
	}
}

func TestListConversationsErrors(t *testing.T) {
	t.Parallel()
	srv := agentbuildertest.NewServer(simOptions(agentbuildertest.V95))
	t.Cleanup(srv.Close)
	k := newKibana(t, srv.URL)
	if _, err := k.ListConversations(context.Background(), client.ListConversationsOptions{AgentID: "../x"}); !client.IsKind(err, client.KindBadRequest) {
		t.Fatalf("bad agent id: %v", err)
	}
	bad, _ := client.NewKibana(client.KibanaConfig{URL: srv.URL, APIKey: "bm9wZTpub3Bl", Retries: -1})
	if _, err := bad.ListConversations(context.Background(), client.ListConversationsOptions{}); !client.IsKind(err, client.KindAuth) {
		t.Fatalf("bad key: %v", err)
	}
	list, err := k.ListConversations(context.Background(), client.ListConversationsOptions{})
	if err != nil || len(list.Conversations) != 0 || list.Total != 0 {
		t.Fatalf("empty list: %+v, %v", list, err)
	}
}

var markers = []string{agentbuildertest.ReasoningMarker, agentbuildertest.ToolResultMarker, agentbuildertest.ProgressMarker}

func checkNoMarkers(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, m := range markers {
			if strings.Contains(s, m) {
				t.Fatalf("%s: %q reached the output", what, m)
			}
		}
	}
}

func TestPickRoundAndEachRoundReadOnlyInputAndReply(t *testing.T) {
	t.Parallel()
	doc := agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-big", Rounds: 5, Bytes: 2 << 20,
		Reply: "Reply {{round}} with \"quotes\" and ünïcode"}, true)
	for _, m := range markers {
		if !strings.Contains(string(doc), m) {
			t.Fatalf("the seeded document lacks %s", m)
		}
	}
	conv := client.NewConversation(doc)
	for _, tc := range []struct{ i, wantIndex int }{{-1, 4}, {0, 0}, {2, 2}, {4, 4}, {-5, 0}} {
		r, n, ok := conv.PickRound(tc.i)
		if !ok || n != 5 || r.Index != tc.wantIndex {
			t.Fatalf("PickRound(%d) = index %d, n %d, ok %v", tc.i, r.Index, n, ok)
		}
		want := fmt.Sprintf("Reply %d with \"quotes\" and ünïcode", tc.wantIndex+1)
		if r.Response != want || !r.HasResponse || r.Input != fmt.Sprintf("Question %d", tc.wantIndex+1) || r.Status != "completed" || r.ID == "" {
			t.Fatalf("PickRound(%d) = %+v", tc.i, r)
		}
		checkNoMarkers(t, "PickRound", r.Input, r.Response, r.ID, r.Status, r.StartedAt)
	}
	for _, i := range []int{5, 9, -6} {
		if _, n, ok := conv.PickRound(i); ok || n != 5 {
			t.Fatalf("PickRound(%d) found a round (n %d)", i, n)
		}
	}
	seen := 0
	n := conv.EachRound(func(r client.Round) bool {
		if r.Index != seen || r.Response != fmt.Sprintf("Reply %d with \"quotes\" and ünïcode", seen+1) {
			t.Fatalf("EachRound: round %d = %+v", seen, r)
		}
		checkNoMarkers(t, "EachRound", r.Input, r.Response)
		seen++
		return true
	})
	if n != 5 || seen != 5 {
		t.Fatalf("EachRound saw %d of %d", seen, n)
	}
	if _, n, ok := client.NewConversation([]byte(`{"id":"x","rounds":[]}`)).PickRound(-1); ok || n != 0 {
		t.Fatal("a conversation without rounds has a last round")
	}
	r, _, _ := client.NewConversation([]byte(`{"id":"x","rounds":[{"input":{"message":"q"},"status":"in_progress","steps":[]}]}`)).PickRound(-1)
	if r.HasResponse || r.Status != "in_progress" || r.Input != "q" {
		t.Fatalf("in-progress round = %+v", r)
	}
}

// TestGetConversationHoldsOneCopy checks the memory contract of show: the
// body is read into one buffer of its final size and rounds are extracted
// without copying it. It measures bytes allocated, not time.
func TestGetConversationHoldsOneCopy(t *testing.T) {
	// Not parallel: it reads the process-wide allocation counter.
	const size = 8 << 20
	for _, gz := range []bool{false, true} {
		opts := simOptions(agentbuildertest.V95)
		opts.DisableGzip = !gz
		opts.Seed = []agentbuildertest.SeedConversation{{ID: "a2a-big", Rounds: 10, Bytes: size}}
		srv := agentbuildertest.NewServer(opts)
		doc, _ := srv.ConversationJSON("", "a2a-big")
		k := newKibana(t, srv.URL)
		show := func() {
			conv, err := k.GetConversation(context.Background(), "a2a-big")
			if err != nil {
				t.Fatal(err)
			}
			if r, _, ok := conv.PickRound(-1); !ok || r.Response != "Answer to question 10." {
				t.Fatalf("last round = %+v", r)
			}
		}
		show() // warm up: the simulator renders and compresses once
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		show()
		runtime.ReadMemStats(&after)
		srv.Close()
		allocated := after.TotalAlloc - before.TotalAlloc
		limit := uint64(len(doc)) + 1<<20
		if gz {
			limit += uint64(len(doc)) / 4 // the compressed body, held while it is decoded
		}
		t.Logf("gzip %v: document %d bytes, allocated %d bytes (%.2fx)", gz, len(doc), allocated, float64(allocated)/float64(len(doc)))
		if allocated > limit {
			t.Fatalf("gzip %v: reading a %d-byte conversation allocated %d bytes (limit %d)", gz, len(doc), allocated, limit)
		}
	}
}

func TestSeedConversationOptions(t *testing.T) {
	t.Parallel()
	opts := simOptions(agentbuildertest.V92)
	opts.Seed = []agentbuildertest.SeedConversation{{ID: "a2a-s", Rounds: 3, Bytes: 100 << 10, Title: "Seeded", UpdatedAt: t0}}
	srv := agentbuildertest.NewServer(opts)
	t.Cleanup(srv.Close)
	doc, ok := srv.ConversationJSON("", "a2a-s")
	if !ok || len(doc) < 90<<10 || len(doc) > 110<<10 || !json.Valid(doc) {
		t.Fatalf("seeded document: ok %v, %d bytes", ok, len(doc))
	}
	conv, err := newKibana(t, srv.URL).GetConversation(context.Background(), "a2a-s")
	if err != nil {
		t.Fatal(err)
	}
	if conv.Title() != "Seeded" || conv.UpdatedAt() != "2026-11-03T10:00:00Z" || conv.RoundCount() != 3 {
		t.Fatalf("seeded conversation: %s %s %d", conv.Title(), conv.UpdatedAt(), conv.RoundCount())
	}
	if r, _, _ := conv.PickRound(-1); r.Status != "" {
		t.Fatalf("9.2 rounds have no status, got %q", r.Status)
	}
	bad := simOptions(agentbuildertest.V95)
	bad.Keys = nil
	bad.Seed = []agentbuildertest.SeedConversation{{ID: "x"}}
	if err := bad.Validate(); err == nil {
		t.Fatal("a seed without owner was accepted")
	}
}
