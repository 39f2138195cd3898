package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// gjsonRounds is the reference: the rounds as gjson splits them.
func gjsonRounds(doc string) []string {
	var out []string
	rounds := gjson.Get(doc, "rounds")
	if !rounds.IsArray() {
		return nil // ForEach would call back once with a null
	}
	rounds.ForEach(func(_, r gjson.Result) bool {
		out = append(out, r.Raw)
		return true
	})
	return out
}

// TestEachRoundRawAgreesWithGjson checks the one-pass splitter against
// gjson on documents with the strings that trip scanners: escaped quotes,
// runs of backslashes, brackets inside strings, pretty-printing, rounds
// that are not the last key.
func TestEachRoundRawAgreesWithGjson(t *testing.T) {
	t.Parallel()
	seeded := string(agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-x", Rounds: 7, Bytes: 300 << 10}, true))
	var v any
	if err := json.Unmarshal([]byte(seeded), &v); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	docs := []string{
		seeded,
		string(pretty),
		`{"id":"x","rounds":[]}`,
		`{"id":"x","rounds":[ ]}`,
		`{"id":"x"}`,
		`{"rounds":null,"id":"x"}`,
		`{"id":"x","rounds":[{"a":"b"}],"after":"z"}`,
		` { "id" : "x" , "rounds" : [ { "a" : 1 } , { "b" : [ 1 , 2 ] } ] , "after" : { "rounds" : [ {"no":1} ] } } `,
		`{"title":"a \"rounds\": [ tricky","rounds":[{"q":"\\"},{"q":"\\\\\""},{"q":"]}[{,"},{"q":"\\\\"}]}`,
		`{"user":{"rounds":[{"nested":true}]},"rounds":[{"r":"\u005d"},{"r":"x\\\\\\\"y"},{"n":-1.5e3,"t":true,"f":false,"z":null}]}`,
		`{"events":[{"a":[[[]]]},"s"],"rounds":[{"x":{"y":{"z":[{}]}}}, {"unicode":"ünï “q” \ud83d\ude00"}]}`,
	}
	for _, doc := range docs {
		if !gjson.Valid(doc) {
			t.Fatalf("test document is not JSON: %s", doc)
		}
		want := gjsonRounds(doc)
		var got []string
		n := NewConversation([]byte(doc)).eachRoundRaw(func(_ int, raw string) bool {
			got = append(got, raw)
			return true
		})
		if n != len(want) || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("document %.80q:\n got %d %q\nwant %d %q", doc, n, got, len(want), want)
		}
	}
}

// readRoundGjson is the reference: the fields as gjson's walk over the
// round's keys reads them.
func readRoundGjson(i int, r gjson.Result) Round {
	rd := Round{Index: i}
	if !r.IsObject() {
		rd.Malformed = "it is not an object: " + oneLine(strings.TrimSpace(r.Raw), 40)
		return rd
	}
	textReply := true
	r.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			rd.ID = v.String()
		case "status":
			rd.Status = v.String()
		case "started_at":
			rd.StartedAt = v.String()
		case "input":
			rd.Input = v.Get("message").String()
		case "response":
			if m := v.Get("message"); m.Exists() {
				rd.Response = m.String()
				rd.HasResponse = true
				textReply = m.Type == gjson.String
			}
		case "interruption":
			if t := v.Get("type").String(); t != "" {
				rd.Interruption, rd.InterruptionReason = t, v.Get("error.message").String()
				if t == "aborted" {
					rd.InterruptionReason = v.Get("aborted_by.source").String()
				}
			} else if v.IsObject() {
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
			if v := r.Get(p).String(); v != "" {
				rd.Prompt = v
				break
			}
		}
	}
	return rd
}

// TestReadRoundAgreesWithGjson checks the round reader, which walks keys
// with the string-skipping scanner, against gjson's own walk.
func TestReadRoundAgreesWithGjson(t *testing.T) {
	t.Parallel()
	seeded := string(agentbuildertest.SeedDocument(agentbuildertest.SeedConversation{ID: "a2a-x", Rounds: 5, Bytes: 200 << 10}, true))
	var rounds []string
	NewConversation([]byte(seeded)).eachRoundRaw(func(_ int, raw string) bool {
		rounds = append(rounds, raw)
		return true
	})
	var v any
	if err := json.Unmarshal([]byte(rounds[0]), &v); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	rounds = append(rounds,
		string(pretty),
		`{}`,
		` { } `,
		`{"id":"r1","input":{"message":"q \"quoted\" \\ back"},"response":{"message":"a\nb \u00e9"},"status":"completed","started_at":"2026-11-03T10:00:00Z"}`,
		`{"steps":[{"type":"reasoning","reasoning":"}]{[\"\\"}],"response":{"message":""},"input":{"attachments":[{"x":[1,2,{"y":"}"}]}],"message":"last"}}`,
		`{"response":{},"id":7,"status":null,"started_at":true,"input":{"message":123}}`,
		`{"status":"awaiting_prompt","pending_prompts":[{"message":"Delete 3 indices?","title":"Confirm"}],"response":{"message":""}}`,
		`{"status":"awaiting_prompt","pending_prompt":{"title":"Only a title"}}`,
		`{"id":"dup","id":"second","input":{"message":"a"},"input":{"message":"b"}}`,
		`{"n":-1.5e3,"t":true,"f":false,"z":null,"a":[],"o":{},"id":"after scalars"}`,
		`{"rounds_inside":{"status":"no"},"status":"in_progress"}`,
		`{"status":"completed","response":{"message":""},"interruption":{"type":"failed","error":{"code":"internalError","message":"model overloaded"}}}`,
		`{"status":"completed","response":{"message":""},"interruption":{"type":"aborted","aborted_by":{"source":"api"}}}`,
		`{"response":{"message":12},"input":{"message":"a"}}`,
		`[]`, `1`, `"x"`, `null`,
	)
	for _, raw := range rounds {
		if !gjson.Valid(raw) {
			t.Fatalf("test round is not JSON: %.80s", raw)
		}
		got, want := readRound(3, raw), readRoundGjson(3, gjson.Parse(raw))
		if got != want {
			t.Errorf("round %.80q:\n got %+v\nwant %+v", raw, got, want)
		}
	}
}
