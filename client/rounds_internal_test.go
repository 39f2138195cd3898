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
