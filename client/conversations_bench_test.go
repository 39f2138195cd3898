package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// benchSizes are the document sizes of docs/performance.md: conversations
// of 50 rounds whose tool results make up the bulk.
var benchSizes = []int{1, 10, 100}

func benchSeed(mb int) agentbuildertest.SeedConversation {
	return agentbuildertest.SeedConversation{ID: fmt.Sprintf("a2a-bench-%dmb", mb), Rounds: 50, Bytes: mb << 20}
}

// BenchmarkShowExtraction measures what show does once the body is in
// memory: find the last round and read its reply with gjson over the
// document, with no copy of it.
func BenchmarkShowExtraction(b *testing.B) {
	for _, mb := range benchSizes {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			doc := agentbuildertest.SeedDocument(benchSeed(mb), true)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				r, n, ok := client.NewConversation(doc).PickRound(-1)
				if !ok || n != 50 || r.Response != "Answer to question 50." {
					b.Fatalf("last round = %+v (of %d)", r, n)
				}
			}
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}

// BenchmarkShowAllRounds measures reading every round's input and reply.
func BenchmarkShowAllRounds(b *testing.B) {
	for _, mb := range benchSizes {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			doc := agentbuildertest.SeedDocument(benchSeed(mb), true)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if n := client.NewConversation(doc).EachRound(func(client.Round) bool { return true }); n != 50 {
					b.Fatalf("%d rounds", n)
				}
			}
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}

// BenchmarkRecoveryExtraction measures what a worker does with each
// conversation it reads while recovering a task: find the round whose input
// hashes to the message's SHA-256 (here the last of 50) and read its
// outcome. Every earlier round's input is hashed on the way.
func BenchmarkRecoveryExtraction(b *testing.B) {
	for _, mb := range benchSizes {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			doc := agentbuildertest.SeedDocument(benchSeed(mb), true)
			sum := client.HashText("Question 50")
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				out, ok := client.NewConversation(doc).Outcome(sum, 0, false)
				if !ok || out.Reply != "Answer to question 50." {
					b.Fatalf("outcome = %+v, %v", out, ok)
				}
			}
			b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
		})
	}
}

// BenchmarkShowFromServer measures show's whole read in process: GET from
// the simulator over loopback (gzip, as Kibana sends it), decode into one
// buffer, validate, extract the last reply. B/op is the memory one show
// needs beyond the runtime: about the document plus its compressed form.
func BenchmarkShowFromServer(b *testing.B) {
	for _, gz := range []bool{true, false} {
		for _, mb := range benchSizes {
			enc := "gzip"
			if !gz {
				enc = "identity"
			}
			b.Run(fmt.Sprintf("%s/%dMB", enc, mb), func(b *testing.B) {
				opts := simOptions(agentbuildertest.V95)
				opts.DisableGzip = !gz
				opts.Seed = []agentbuildertest.SeedConversation{benchSeed(mb)}
				srv := agentbuildertest.NewServer(opts)
				defer srv.Close()
				doc, _ := srv.ConversationJSON("", benchSeed(mb).ID)
				k := newKibana(b, srv.URL)
				show := func() {
					conv, err := k.GetConversation(context.Background(), benchSeed(mb).ID)
					if err != nil {
						b.Fatal(err)
					}
					if r, _, ok := conv.PickRound(-1); !ok || r.Response != "Answer to question 50." {
						b.Fatalf("last round = %+v", r)
					}
				}
				show() // the simulator renders and compresses once
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					show()
				}
				b.ReportMetric(float64(len(doc))/(1<<20), "doc-MiB")
			})
		}
	}
}
