package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ConversationSummary is one entry of the conversation list: what the list
// says about a conversation, never its content.
type ConversationSummary struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	AgentID   string `json:"agent_id"`
	UpdatedAt string `json:"updated_at"`
	CreatedAt string `json:"-"`
}

// ListConversationsOptions selects and bounds a conversation list.
type ListConversationsOptions struct {
	// AgentID, when set, keeps the conversations of that agent only.
	AgentID string
	// Limit is the most conversations returned, newest first; 0 means all
	// that the server lists.
	Limit int
	// LastActivity, when set, says when the caller knows a conversation
	// last had a round (a reply it recorded itself). An unpaged list (9.2
	// to 9.5) is sorted by the later of that and updated_at: the
	// onechat-era converter of 9.2 and 9.3 never moved updated_at forward
	// on follow-up rounds. A paged list keeps the server's order.
	LastActivity func(id string) (time.Time, bool)
}

// ConversationList is the caller's conversations, newest first.
type ConversationList struct {
	Conversations []ConversationSummary
	// Total is how many conversations the server reports for the query:
	// the pagination total (9.6 and later), or the length of the unpaged
	// list (9.2 to 9.5).
	Total int
	// Paginated reports that the server paginates its list (9.6 and later).
	Paginated bool
	// Capped reports that the server could not list every conversation:
	// 9.2 to 9.5 return at most 1000, in no order, so the newest may be
	// missing; 9.6 pages reach at most 10000.
	Capped bool
	// Requests is the number of list requests made.
	Requests int
}

// Server-side bounds of the conversation list (Agent Builder routes).
const (
	unpagedListCap = 1000  // ES size of the 9.2–9.5 list
	pagedListCap   = 10000 // page * per_page bound of the 9.6 list
)

// ListConversations lists the caller's conversations in the configured
// space, newest first (by updated_at). Kibana 9.2 to 9.5 return them in no
// order, so they are sorted here; 9.6 paginates, and the pages are followed
// until opts.Limit conversations are read or the list ends.
//
// The first request carries no pagination parameters, since 9.2 to 9.5
// refuse query keys they do not know; later pages reuse the page size the
// server reported.
func (k *Kibana) ListConversations(ctx context.Context, opts ListConversationsOptions) (*ConversationList, error) {
	const op = "list conversations"
	if opts.AgentID != "" {
		if err := CheckID("agent id", opts.AgentID); err != nil {
			return nil, &Error{Kind: KindBadRequest, Op: op, Message: err.Error()}
		}
	}
	q := url.Values{}
	if opts.AgentID != "" {
		q.Set("agent_id", opts.AgentID)
	}
	out := &ConversationList{}
	seen := map[string]bool{}
	add := func(results gjson.Result) int {
		n := 0
		results.ForEach(func(_, c gjson.Result) bool {
			n++
			s := readSummary(c)
			if s.ID == "" || seen[s.ID] {
				return true
			}
			seen[s.ID] = true
			out.Conversations = append(out.Conversations, s)
			return true
		})
		return n
	}
	get := func(q url.Values) (string, error) {
		out.Requests++
		resp, err := k.t.do(ctx, &request{op: op, method: http.MethodGet, path: k.apiPath("/api/agent_builder/conversations"),
			query: q, idempotent: true})
		if err != nil {
			return "", err
		}
		body := unsafeString(resp.body)
		if !gjson.Get(body, "results").IsArray() {
			return "", &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the response has no results list"}
		}
		return body, nil
	}

	body, err := get(q)
	if err != nil {
		return nil, err
	}
	pag := gjson.Get(body, "pagination")
	got := add(gjson.Get(body, "results"))
	if !pag.IsObject() {
		out.Total = got
		out.Capped = got >= unpagedListCap
	} else {
		out.Paginated = true
		out.Total = int(pag.Get("total").Int())
		perPage := int(pag.Get("per_page").Int())
		if perPage <= 0 {
			perPage = got
		}
		want := out.Total
		if opts.Limit > 0 && opts.Limit < want {
			want = opts.Limit
		}
		read := got
		for page := 2; read < want && got > 0 && perPage > 0; page++ {
			if page*perPage > pagedListCap {
				out.Capped = true
				break
			}
			q.Set("page", strconv.Itoa(page))
			q.Set("per_page", strconv.Itoa(perPage))
			if body, err = get(q); err != nil {
				return nil, err
			}
			got = add(gjson.Get(body, "results"))
			read += got
		}
	}
	var known func(string) (time.Time, bool)
	if !out.Paginated {
		known = opts.LastActivity
	}
	sortNewestFirst(out.Conversations, known)
	if opts.Limit > 0 && len(out.Conversations) > opts.Limit {
		out.Conversations = out.Conversations[:opts.Limit]
	}
	if out.Total < len(out.Conversations) {
		out.Total = len(out.Conversations)
	}
	return out, nil
}

// readSummary copies the list fields out of one entry, so that the page's
// body is not kept alive by them.
func readSummary(c gjson.Result) ConversationSummary {
	return ConversationSummary{
		ID:        strings.Clone(c.Get("id").String()),
		Title:     strings.Clone(c.Get("title").String()),
		AgentID:   strings.Clone(c.Get("agent_id").String()),
		UpdatedAt: strings.Clone(c.Get("updated_at").String()),
		CreatedAt: strings.Clone(c.Get("created_at").String()),
	}
}

// sortNewestFirst orders by updated_at, newest first, comparing instants
// rather than strings ("10:00:12Z" is later than "10:00:12.001Z" as text
// only), or by a later time known of the conversation (known, may be nil).
// Entries without a readable time go last; ties go by id.
func sortNewestFirst(cs []ConversationSummary, known func(string) (time.Time, bool)) {
	type key struct {
		t  time.Time
		ok bool
	}
	keys := make(map[string]key, len(cs))
	for _, c := range cs {
		t, err := time.Parse(time.RFC3339Nano, c.UpdatedAt)
		k := key{t, err == nil}
		if known != nil {
			if kt, ok := known(c.ID); ok && (!k.ok || kt.After(k.t)) {
				k = key{kt, true}
			}
		}
		keys[c.ID] = k
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := keys[cs[i].ID], keys[cs[j].ID]
		switch {
		case a.ok != b.ok:
			return a.ok
		case a.ok && !a.t.Equal(b.t):
			return a.t.After(b.t)
		case !a.ok && cs[i].UpdatedAt != cs[j].UpdatedAt:
			return cs[i].UpdatedAt > cs[j].UpdatedAt
		}
		return cs[i].ID < cs[j].ID
	})
}

// PickRound returns round i (0-based; negative counts from the end) and the
// number of rounds, walking the document once. Only the round returned is
// read with gjson, in one pass over its keys: the steps of every round
// (reasoning, tool calls, tool results) are skipped over, never copied or
// decoded.
func (c *Conversation) PickRound(i int) (Round, int, bool) {
	var picked, last string
	n := c.eachRoundRaw(func(j int, raw string) bool {
		if j == i {
			picked = raw
		}
		last = raw
		return true
	})
	switch {
	case i == -1 && n > 0:
		return readRound(n-1, last), n, true
	case i < -1 && n+i >= 0:
		return c.PickRound(n + i)
	case i >= 0 && i < n:
		return readRound(i, picked), n, true
	}
	return Round{}, n, false
}

// EachRound calls fn with every round in order until fn returns false, and
// returns the number of rounds seen. Rounds are read as PickRound reads them.
func (c *Conversation) EachRound(fn func(Round) bool) int {
	return c.eachRoundRaw(func(j int, raw string) bool {
		return fn(readRound(j, raw))
	})
}

// eachRoundRaw calls fn with the text of each element of the top-level
// "rounds" array until fn returns false, and returns how many it saw.
//
// gjson would take two passes over the array here: one to find where it
// ends (Get "rounds"), one to split it (ForEach). This finds the array
// and splits it in a single pass that jumps through strings, which make up
// nearly all of a large document, with strings.IndexByte.
func (c *Conversation) eachRoundRaw(fn func(i int, raw string) bool) int {
	s := c.s
	i := topLevelValue(s, "rounds")
	if i < 0 || i >= len(s) || s[i] != '[' {
		return 0
	}
	n := 0
	for i++; ; n++ {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] == ']' {
			return n
		}
		end := skipValue(s, i)
		if end <= i {
			return n // malformed: stop rather than loop
		}
		if !fn(n, s[i:end]) {
			return n + 1
		}
		if i = skipSpace(s, end); i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// topLevelValue returns the offset of the value of key in the JSON object
// s, or -1.
func topLevelValue(s, key string) int {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return -1
	}
	for i++; ; i++ {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '"' {
			return -1
		}
		end := skipString(s, i)
		if end-1 <= i {
			return -1
		}
		k := jsonKey(s[i:end])
		i = skipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return -1
		}
		i = skipSpace(s, i+1)
		if k == key {
			return i
		}
		i = skipSpace(s, skipValue(s, i))
		if i >= len(s) || s[i] != ',' {
			return -1
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the string that starts at s[i]
// (a '"'), or len(s) if it does not end.
func skipString(s string, i int) int {
	for i++; ; i++ {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return len(s)
		}
		i += j
		k := i - 1
		for k > 0 && s[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 { // an even run of backslashes: the quote ends the string
			return i + 1
		}
	}
}

// skipValue returns the offset just past the value that starts at s[i].
func skipValue(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			i = skipString(s, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the enclosing value ends: a scalar ended
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i // a scalar ends at a comma or at white space
			}
		}
		i++
	}
	return len(s)
}

// readRound reads the fields of one round in a single pass over its keys.
// The keys are walked with the scanner of eachRoundRaw, which jumps through
// strings with strings.IndexByte, and only the small values asked for are
// read with gjson: a round's steps (reasoning, tool calls, tool results:
// nearly all of its bytes) are skipped at that speed, where gjson's own
// walk over them took twice as long as the split of the whole document.
func readRound(i int, raw string) Round {
	rd := Round{Index: i}
	if t := strings.TrimSpace(raw); t == "" || t[0] != '{' {
		rd.Malformed = "it is not an object: " + oneLine(t, 40)
		return rd
	}
	textReply := true
	eachKey(raw, func(k, v string) bool {
		switch k {
		case "id":
			rd.ID = gjson.Parse(v).String()
		case "status":
			rd.Status = gjson.Parse(v).String()
		case "started_at":
			rd.StartedAt = gjson.Parse(v).String()
		case "input":
			rd.Input = gjson.Get(v, "message").String()
		case "response":
			if m := gjson.Get(v, "message"); m.Exists() {
				rd.Response = m.String()
				rd.HasResponse = true
				textReply = m.Type == gjson.String
			}
		case "interruption":
			// Kibana's newest rounds model: a failed or aborted execution
			// forms a round with status completed, an empty response and
			// interruption {type: failed, error: {code, message}} or
			// {type: aborted, aborted_by: {source}}.
			in := gjson.Parse(v)
			if t := in.Get("type").String(); t != "" {
				rd.Interruption = t
				rd.InterruptionReason = in.Get("error.message").String()
				if t == "aborted" {
					rd.InterruptionReason = in.Get("aborted_by.source").String()
				}
			} else if in.IsObject() {
				rd.Interruption = "failed"
			}
		}
		return true
	})
	switch {
	case rd.Interruption != "" || rd.Status == "awaiting_prompt" || rd.Status == "in_progress":
	case !rd.HasResponse:
		rd.Malformed = "it has no response"
	case !textReply:
		rd.Malformed = "its response is not text"
	}
	if rd.Status == "awaiting_prompt" {
		for _, p := range []string{"pending_prompts.0.message", "pending_prompts.0.title", "pending_prompt.message", "pending_prompt.title"} {
			if v := gjson.Get(raw, p).String(); v != "" {
				rd.Prompt = v
				break
			}
		}
	}
	return rd
}

// roundInput reads a round's input message, walking its keys only as far
// as "input" (which Kibana writes before the steps).
func roundInput(raw string) string {
	var in string
	eachKey(raw, func(k, v string) bool {
		if k == "input" {
			in = gjson.Get(v, "message").String()
			return false
		}
		return true
	})
	return in
}

// jsonKey returns a quoted JSON key's text; a key written with escapes
// (rare: Kibana writes none) is decoded.
func jsonKey(quoted string) string {
	k := quoted[1 : len(quoted)-1]
	if strings.IndexByte(k, '\\') >= 0 {
		var u string
		if json.Unmarshal([]byte(quoted), &u) == nil {
			return u
		}
	}
	return k
}

// eachKey calls fn with each key of the JSON object s and the text of its
// value, until fn returns false or the object ends.
func eachKey(s string, fn func(key, value string) bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return
	}
	for i++; ; i++ {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '"' {
			return
		}
		end := skipString(s, i)
		if end-1 <= i {
			return
		}
		k := jsonKey(s[i:end])
		i = skipSpace(s, end)
		if i >= len(s) || s[i] != ':' {
			return
		}
		i = skipSpace(s, i+1)
		vend := skipValue(s, i)
		if vend <= i || !fn(k, s[i:vend]) {
			return
		}
		i = skipSpace(s, vend)
		if i >= len(s) || s[i] != ',' {
			return
		}
	}
}

// quickCheckConversationBytes is the size above which a conversation body
// is not validated as a whole before it is read: validation is a pass over
// the document as long as the extraction itself (docs/performance.md).
const quickCheckConversationBytes = 8 << 20

// wellFormed reports whether a response body may be read as JSON. Bodies
// up to quickAbove bytes (all of them when quickAbove is 0) are validated.
// A larger body is only checked to be one object, and only when its
// framing already proved it complete: a Content-Length that was read in
// full, a chunked body that reached its last chunk, or a gzip stream whose
// CRC and length matched. Otherwise it is validated too. The bodies spared
// validation are not checked for nesting either: only the iterative round
// scanner and gjson.Get read them, which need no bound (see MaxNesting).
func wellFormed(resp *http.Response, data []byte, quickAbove int64) bool {
	complete := resp.ContentLength >= 0 || slices.Contains(resp.TransferEncoding, "chunked") ||
		strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip")
	if quickAbove <= 0 || int64(len(data)) <= quickAbove || !complete {
		return validJSONBytes(data)
	}
	t := bytes.TrimSpace(data)
	return len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}'
}
