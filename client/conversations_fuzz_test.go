package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// jsonField is one member of a JSON object as written: its key unescaped
// and raw, and its value.
type jsonField struct {
	key    string
	rawKey string
	value  json.RawMessage
}

// objectFields splits a JSON object with encoding/json, keeping the order
// and the raw spelling of the keys. ok is false when raw is not an object.
func objectFields(raw []byte) ([]jsonField, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []jsonField
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		rawKey := strings.TrimLeft(string(raw[start:dec.InputOffset()]), " \t\r\n,")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, jsonField{key: tok.(string), rawKey: rawKey, value: v})
	}
	return out, true
}

// field returns the first member named key, and whether the object has
// it more than once.
func field(fs []jsonField, key string) (v json.RawMessage, found, dup bool) {
	for _, f := range fs {
		if f.key == key {
			if found {
				return v, true, true
			}
			v, found = f.value, true
		}
	}
	return v, found, false
}

// jsonText is the text a value reads as, with gjson's Result.String rules:
// strings unescaped, null empty, integers as written, other numbers as the
// shortest float, objects and arrays as written.
func jsonText(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		json.Unmarshal(v, &s)
		return s
	case 'n':
		return ""
	case 't', 'f', '{', '[':
		return string(v)
	}
	digits := strings.TrimPrefix(string(v), "-")
	if strings.Trim(digits, "0123456789") == "" {
		return string(v)
	}
	x, _ := strconv.ParseFloat(string(v), 64)
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// member reads path (keys, or indexes of arrays) below v, as gjson does:
// the first member of each name. judged is false when a step meets two
// members of that name.
func member(v json.RawMessage, path ...string) (out json.RawMessage, found, judged bool) {
	for _, p := range path {
		switch {
		case len(v) > 0 && v[0] == '{':
			fs, _ := objectFields(v)
			x, ok, dup := field(fs, p)
			if dup {
				return nil, false, false
			}
			if !ok {
				return nil, false, true
			}
			v = x
		case len(v) > 0 && v[0] == '[':
			var elems []json.RawMessage
			json.Unmarshal(v, &elems)
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(elems) || strconv.Itoa(i) != p {
				return nil, false, true
			}
			v = elems[i]
		default:
			return nil, false, true
		}
	}
	return v, true, true
}

// refRounds is the reference reading of a conversation, on encoding/json:
// the elements of the first top-level "rounds" member, each read as
// readRound promises. ok is false for documents it does not judge: not
// valid JSON (which includes being UTF-8: encoding/json would turn bad
// bytes into U+FFFD where gjson keeps them, and send refuses such text), a
// top-level key spelling "rounds" with escapes (which the one-pass scanner
// does not recognise, by design), or two members of one name in an object
// the extraction reads (JSON leaves their meaning open).
func refRounds(doc []byte) (raws []string, rounds []Round, ok bool) {
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return nil, nil, false
	}
	top, isObj := objectFields(doc)
	if !isObj {
		return nil, nil, true
	}
	var rv json.RawMessage
	for _, f := range top {
		if f.key == "rounds" && f.rawKey != `"rounds"` {
			return nil, nil, false
		}
		if f.key == "rounds" && rv == nil {
			rv = f.value
		}
	}
	if len(rv) == 0 || rv[0] != '[' {
		return nil, nil, true
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(rv, &elems); err != nil {
		return nil, nil, false
	}
	for i, e := range elems {
		raws = append(raws, string(e))
		rd, judged := refRound(i, e)
		if !judged {
			return nil, nil, false
		}
		rounds = append(rounds, rd)
	}
	return raws, rounds, true
}

// refRound is refRounds' reading of round i, e: ok is false when the round
// holds a member the reference does not judge (a name given twice).
func refRound(i int, e json.RawMessage) (Round, bool) {
	rd := Round{Index: i}
	fs, isObj := objectFields(e)
	if !isObj {
		rd.Malformed = "it is not an object: " + oneLine(strings.TrimSpace(string(e)), 40)
		return rd, true
	}
	ok := true
	get := func(key string) (json.RawMessage, bool) {
		v, found, dup := field(fs, key)
		if dup {
			ok = false
		}
		return v, found
	}
	if v, found := get("id"); found {
		rd.ID = jsonText(v)
	}
	if v, found := get("status"); found {
		rd.Status = jsonText(v)
	}
	if v, found := get("started_at"); found {
		rd.StartedAt = jsonText(v)
	}
	if v, found := get("input"); found {
		m, _, judged := member(v, "message")
		rd.Input = jsonText(m)
		ok = ok && judged
	}
	textReply := true
	if v, found := get("response"); found {
		m, has, judged := member(v, "message")
		rd.Response, rd.HasResponse = jsonText(m), has
		textReply = !has || len(m) > 0 && m[0] == '"'
		ok = ok && judged
	}
	if v, found := get("interruption"); found {
		t, _, j1 := member(v, "type")
		reason, _, j2 := member(v, "error", "message")
		source, _, j3 := member(v, "aborted_by", "source")
		ok = ok && j1 && j2 && j3
		switch {
		case jsonText(t) != "":
			rd.Interruption, rd.InterruptionReason = jsonText(t), jsonText(reason)
			if rd.Interruption == "aborted" {
				rd.InterruptionReason = jsonText(source)
			}
		case len(v) > 0 && v[0] == '{':
			rd.Interruption = "failed"
		}
	}
	switch {
	case rd.Interruption != "" || rd.Status == "awaiting_prompt" || rd.Status == "in_progress":
	case !rd.HasResponse:
		rd.Malformed = "it has no response"
	case !textReply:
		rd.Malformed = "its response is not text"
	}
	if rd.Status == "awaiting_prompt" {
		get("pending_prompts")
		get("pending_prompt")
		for _, p := range [][]string{{"pending_prompts", "0", "message"}, {"pending_prompts", "0", "title"}, {"pending_prompt", "message"}, {"pending_prompt", "title"}} {
			m, _, judged := member(e, p...)
			ok = ok && judged
			if t := jsonText(m); t != "" {
				rd.Prompt = t
				break
			}
		}
	}
	return rd, ok
}

// refOutcome is findOutcome and roundOutcome written out over rounds.
func refOutcome(rounds []Round, sha string, before int, fresh bool) (Outcome, bool) {
	var mine, first *Round
	for i := range rounds {
		if i < before {
			continue
		}
		if first == nil {
			first = &rounds[i]
		}
		if HashText(rounds[i].Input) == sha {
			mine = &rounds[i]
			break
		}
	}
	if mine == nil && fresh {
		mine = first
	}
	if mine == nil {
		return Outcome{}, false
	}
	if mine.Malformed != "" {
		return Outcome{malformed: mine.Malformed}, false
	}
	switch mine.Interruption {
	case "":
	case "aborted":
		return roundOutcome(*mine) // the reason's wording is roundOutcome's
	default:
		return Outcome{State: StateFailed, Reason: nonEmpty(mine.InterruptionReason, "the agent's run failed"), Via: "conversation", HTTPStatus: 200}, true
	}
	switch mine.Status {
	case "", "completed":
		return Outcome{State: StateCompleted, Reply: mine.Response, Via: "conversation", HTTPStatus: 200}, true
	case "awaiting_prompt":
		return Outcome{State: StateInputRequired, Reply: nonEmpty(mine.Prompt, mine.Response), Via: "conversation", HTTPStatus: 200}, true
	}
	return Outcome{}, false
}

// offsetIn is where sub starts inside s, which it must be a part of.
func offsetIn(s, sub string) int {
	if len(sub) == 0 {
		return -1
	}
	return int(uintptr(unsafe.Pointer(unsafe.StringData(sub))) - uintptr(unsafe.Pointer(unsafe.StringData(s))))
}

// checkSplitter runs eachRoundRaw over any bytes: it must end, and hand
// out non-empty, ordered, non-overlapping parts of the document.
func checkSplitter(t *testing.T, doc []byte) int {
	t.Helper()
	c := NewConversation(doc)
	end := 0
	calls := 0
	n := c.eachRoundRaw(func(i int, raw string) bool {
		calls++
		if i != calls-1 || calls > len(doc) {
			t.Fatalf("round %d at call %d of a %d-byte document", i, calls, len(doc))
		}
		off := offsetIn(c.s, raw)
		if off < end || off+len(raw) > len(doc) {
			t.Fatalf("round %d at [%d, %d) of a %d-byte document, after %d", i, off, off+len(raw), len(doc), end)
		}
		end = off + len(raw)
		return true
	})
	if n != calls {
		t.Fatalf("eachRoundRaw saw %d rounds but called back %d times", n, calls)
	}
	return n
}

// FuzzConversationRounds reads an arbitrary document as a conversation and
// checks:
//
//   - eachRoundRaw, EachRound, PickRound and Outcome never panic and end
//     on any bytes, also on every prefix of the document (a body cut
//     short); the splitter hands out ordered, non-overlapping, non-empty
//     parts of the document, at most one per byte;
//   - on valid JSON (UTF-8) they agree with refRounds (encoding/json): the same
//     number of rounds, the same raw text of each, and for each round the
//     same id, status, started_at, input, response (and whether it
//     exists) and prompt; PickRound(i) for i in [-n-1, n] is round i (or
//     from the end) and reports n; EachRound stops when told;
//   - Outcome(sha of a round's input, roundsBefore, fresh) is the
//     reference's findOutcome over the reference rounds.
func FuzzConversationRounds(f *testing.F) {
	seeded := agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-ctx", Rounds: 3, Bytes: 6 << 10}, true)
	pre96 := agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-old", Rounds: 2, Bytes: 3 << 10, Input: "Q{{round}} \"quoted\" \\ back", Reply: "A{{round}}\n```json\n{\"rounds\":[]}\n```"}, false)
	for _, doc := range []string{
		string(seeded),
		string(pre96),
		`{"id":"a2a-x","rounds":[{"id":"r1","status":"awaiting_prompt","input":{"message":"delete the index?"},"steps":[],"pending_prompts":[{"id":"p","type":"confirmation","title":"Confirmation required","message":"Delete index logs-1?"}],"response":{"message":""}}]}`,
		`{"id":"a2a-x","rounds":[{"id":"r1","status":"in_progress","input":{"message":"Q"},"steps":[{"type":"reasoning","reasoning":"thinking"}]}]}`,
		`{"title":"a \"rounds\": [ tricky","rounds":[{"q":"\\"},{"q":"\\\\\""},{"q":"]}[{,"},{"q":"\\\\"}]}`,
		`{"user":{"rounds":[{"nested":true}]},"rounds":[{"r":"\u005d"},{"r":"x\\\\\\\"y"},{"n":-1.5e3,"t":true,"f":false,"z":null}]}`,
		` { "id" : "x" , "rounds" : [ { "input" : { "message" : 12.50 } , "response" : { "message" : {"a":[1, 2]} } } , 7, "s", null, [] ] } `,
		`{"rounds":[{"input":{"message":"a"},"response":"not an object"},{"response":{"text":"no message"}}],"rounds":[]}`,
		`{"rounds":[{"st\u0061tus":"awaiting_prompt","pending_prompt":{"title":"T"},"response":{"message":"R"}}]}`,
		`{"r\u006funds":[{"id":"escaped key"}],"rounds":[{"id":"plain"}]}`,
		`{"id":"x","rounds":`,
		`{"id":"x","rounds":[{"input":{"message":"a`,
		`{"rounds":[1,,2]}`,
		`{"rounds":[{"a":"b"}]`,
		`[{"rounds":[1]}]`,
		``,
	} {
		f.Add([]byte(doc), int16(-1), uint16(0), false, uint16(0))
		f.Add([]byte(doc), int16(1), uint16(1), true, uint16(len(doc)/2))
	}
	f.Fuzz(func(t *testing.T, doc []byte, pick int16, pickInput uint16, fresh bool, cut uint16) {
		checkSplitter(t, doc)
		if len(doc) > 0 {
			checkSplitter(t, doc[:int(cut)%len(doc)])
		}
		c := NewConversation(doc)
		c.EachRound(func(Round) bool { return true })
		c.PickRound(int(pick))
		c.Outcome("", 0, fresh)
		c.Outcome(HashText(""), int(pickInput%4), fresh)

		raws, want, ok := refRounds(doc)
		if !ok {
			return
		}
		n := len(want)
		var gotRaw []string
		if got := c.eachRoundRaw(func(_ int, raw string) bool { gotRaw = append(gotRaw, raw); return true }); got != n {
			t.Fatalf("eachRoundRaw saw %d rounds, want %d", got, n)
		}
		for i := range raws {
			if gotRaw[i] != raws[i] {
				t.Fatalf("round %d raw\n got %q\nwant %q", i, gotRaw[i], raws[i])
			}
		}
		var got []Round
		if m := c.EachRound(func(r Round) bool { got = append(got, r); return true }); m != n {
			t.Fatalf("EachRound counted %d rounds, want %d", m, n)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("round %d\n got %+v\nwant %+v\nraw %s", i, got[i], want[i], raws[i])
			}
		}
		if n > 0 {
			stop := int(pickInput) % n
			calls := 0
			if m := c.EachRound(func(Round) bool { calls++; return calls <= stop }); m != stop+1 || calls != stop+1 {
				t.Fatalf("EachRound told to stop at round %d returned %d after %d calls", stop, m, calls)
			}
		}
		i := int(pick)%(n+2) - 1 // -1 .. n
		if pick < 0 {
			i = -1 - int(-(int(pick)+1))%(n+1) // -1 .. -n-1
		}
		r, m, found := c.PickRound(i)
		j := i
		if i < 0 {
			j = n + i
		}
		if m != n || found != (j >= 0 && j < n) {
			t.Fatalf("PickRound(%d) of %d rounds: n %d found %v", i, n, m, found)
		}
		if found && r != want[j] {
			t.Fatalf("PickRound(%d)\n got %+v\nwant %+v", i, r, want[j])
		}
		if n > 0 {
			k := int(pickInput) % n
			sha := HashText(want[k].Input)
			before := int(pick) % (n + 1)
			if before < 0 {
				before = -before
			}
			gotOut, gotOK := c.Outcome(sha, before, fresh)
			wantOut, wantOK := refOutcome(want, sha, before, fresh)
			if gotOK != wantOK || !reflect.DeepEqual(gotOut, wantOut) {
				t.Fatalf("Outcome(round %d's input, %d, %v) = %+v %v, want %+v %v", k, before, fresh, gotOut, gotOK, wantOut, wantOK)
			}
			last, lastOK := c.Outcome("", 0, false)
			wantLast, wantLastOK := refOutcome(want[n-1:], HashText(want[n-1].Input), 0, true)
			if !reflect.DeepEqual(last, wantLast) || lastOK != wantLastOK {
				t.Fatalf("Outcome of the last round = %+v %v, want %+v %v", last, lastOK, wantLast, wantLastOK)
			}
		}
	})
}

// jsonString is s as encoding/json writes it, and the text it reads back
// as (invalid UTF-8 becomes U+FFFD).
func jsonString(s string) (quoted, text string) {
	b, _ := json.Marshal(s)
	json.Unmarshal(b, &text)
	return string(b), text
}

// FuzzConversationPlanted builds a conversation in Kibana's shape around
// fuzzed texts: the input, the reply, and a planted text that goes
// everywhere else: reasoning, tool calls and their parameters, tool
// results (also as nested {"input":{"message":…}} and
// {"response":{"message":…}} objects, and as JSON written inside
// strings), the title, a nested "rounds" array before the real one, and
// members after it. The round's keys come in a fuzzed order. It checks:
//
//   - the round is found, and its Input and Response are exactly the input
//     and the reply, whatever the planted text is;
//   - the planted text never comes back in Round.Input or Round.Response
//     (unless the input or the reply itself contains it), nor in the
//     Outcome read for that input.
func FuzzConversationPlanted(f *testing.F) {
	f.Add("What failed last night?", "Two jobs failed: ingest-7 and backup-2.", "SECRET-REASONING-7f3a", uint8(0), uint8(0))
	f.Add("Q", "", `"},"response":{"message":"PLANTED`, uint8(3), uint8(1))
	f.Add("a\\\"b", "c]}d", `\"input\":{\"message\":\"x\"}`, uint8(5), uint8(2))
	f.Add("ünïcødé 😀", "\x00\x1f\u2028", "\xff\xfe", uint8(7), uint8(3))
	f.Fuzz(func(t *testing.T, input, reply, planted string, order, status uint8) {
		qInput, wantInput := jsonString(input)
		qReply, wantReply := jsonString(reply)
		qPlanted, plantedText := jsonString(planted)
		_, nested := jsonString(`{"input":{"message":` + qPlanted + `},"response":{"message":` + qPlanted + `}}`)
		qNested, _ := jsonString(nested)
		statuses := []string{"", "completed", "in_progress", "awaiting_prompt"}
		st := statuses[int(status)%len(statuses)]

		steps := `[{"type":"reasoning","reasoning":` + qPlanted + `},` +
			`{"type":"tool_call","tool_call_id":"tc1","tool_id":"platform.core.search","params":{"query":` + qPlanted + `,"input":{"message":` + qPlanted + `}},` +
			`"progression":[{"message":` + qPlanted + `}],` +
			`"results":[{"type":"other","data":{"response":{"message":` + qPlanted + `},"text":` + qNested + `}}]},` +
			`{"type":"reasoning","reasoning":` + qNested + `}]`
		members := []string{
			`"id":"r-1"`,
			`"input":{"message":` + qInput + `,"attachments":[{"message":` + qPlanted + `}]}`,
			`"steps":` + steps,
			`"response":{"message":` + qReply + `,"structured":{"message":` + qPlanted + `}}`,
			`"started_at":"2026-11-03T10:00:00.000Z"`,
			`"trace_id":` + qPlanted,
			`"model_usage":{"input":{"message":` + qPlanted + `},"response":{"message":` + qPlanted + `}}`,
		}
		if st != "" {
			members = append(members, `"status":"`+st+`"`)
		}
		// A fuzzed order of the round's members.
		for i := len(members) - 1; i > 0; i-- {
			j := int(order) % (i + 1)
			members[i], members[j] = members[j], members[i]
			order = order/3 + uint8(i)
		}
		round := "{" + strings.Join(members, ",") + "}"
		other := `{"id":"r-0","input":{"message":"an earlier question"},"steps":[{"type":"reasoning","reasoning":` + qPlanted + `}],"response":{"message":"an earlier answer"}}`
		doc := `{"id":"a2a-ctx","title":` + qPlanted + `,"user":{"rounds":[` + round + `]},"agent_id":"elastic-ai-agent",` +
			`"rounds":[` + other + `,` + round + `],"after":{"rounds":[{"input":{"message":` + qPlanted + `}}]}}`
		if !json.Valid([]byte(doc)) {
			t.Fatalf("the test built invalid JSON: %s", doc)
		}

		c := NewConversation([]byte(doc))
		r, n, found := c.PickRound(-1)
		if !found || n != 2 {
			t.Fatalf("found %v, %d rounds; want the 2 rounds", found, n)
		}
		if r.Input != wantInput || r.Response != wantReply || !r.HasResponse || r.Status != st || r.ID != "r-1" {
			t.Fatalf("round\n got %+v\nwant input %q response %q status %q", r, wantInput, wantReply, st)
		}
		if plantedText == "" || strings.Contains(wantInput, plantedText) || strings.Contains(wantReply, plantedText) {
			return
		}
		if strings.Contains(r.Input, plantedText) || strings.Contains(r.Response, plantedText) {
			t.Fatalf("the planted text %q came back in %+v", plantedText, r)
		}
		out, ok := c.Outcome(HashText(wantInput), 1, false)
		if st == "in_progress" {
			if ok {
				t.Fatalf("an unfinished round gave the outcome %+v", out)
			}
			return
		}
		if !ok || strings.Contains(out.Reply, plantedText) {
			t.Fatalf("Outcome %+v %v shows the planted text %q or is missing", out, ok, plantedText)
		}
	})
}
