package agentbuildertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SeedConversation is a conversation the simulator stores without running
// an agent, built in the shape of a real run: each round has reasoning, two
// tool calls with progression messages and large tool results, and a final
// reply, with the markers in every step that is not the reply. It gives
// tests and benchmarks documents of hundreds of megabytes in a second.
type SeedConversation struct {
	// ID is the conversation id, e.g. "a2a-<contextId>".
	ID string `yaml:"id"`
	// AgentID defaults to "elastic-ai-agent".
	AgentID string `yaml:"agent_id"`
	// Username owns the conversation; default: the first key's owner.
	Username string `yaml:"username"`
	// Space is the Kibana space; "" is the default space.
	Space string `yaml:"space"`
	// Title defaults to "Seeded conversation <id>".
	Title string `yaml:"title"`
	// Rounds is the number of rounds (default 1).
	Rounds int `yaml:"rounds"`
	// Bytes is the approximate size of the whole document; the tool
	// results of each round take what the rest leaves.
	Bytes int `yaml:"bytes"`
	// Input and Reply are each round's message and final reply;
	// "{{round}}" is replaced by the 1-based round number. Defaults:
	// "Question {{round}}" and "Answer to question {{round}}.".
	Input string `yaml:"input"`
	Reply string `yaml:"reply"`
	// UpdatedAt defaults to the simulator's clock.
	UpdatedAt time.Time `yaml:"updated_at"`
}

func (sc *SeedConversation) validate() error {
	if sc.ID == "" {
		return fmt.Errorf("a seeded conversation has no id")
	}
	if sc.Rounds < 0 || sc.Bytes < 0 {
		return fmt.Errorf("seeded conversation %q: rounds and bytes must not be negative", sc.ID)
	}
	return nil
}

func validateSeeds(o *Options) error {
	for i := range o.Seed {
		if err := o.Seed[i].validate(); err != nil {
			return err
		}
		if o.Seed[i].Username == "" && len(o.Keys) == 0 {
			return fmt.Errorf("seeded conversation %q: give a username, or a key whose owner gets it", o.Seed[i].ID)
		}
	}
	return nil
}

// Seed stores conversations built from specs, replacing any with the same
// space and id. It does not write the data file.
func (s *Sim) Seed(specs ...SeedConversation) error {
	for i := range specs {
		if err := specs[i].validate(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seedLocked(specs)
	return nil
}

func (s *Sim) seedLocked(specs []SeedConversation) {
	for _, sc := range specs {
		if sc.Username == "" && len(s.opts.Keys) > 0 {
			sc.Username = s.opts.Keys[0].Username
		}
		if sc.UpdatedAt.IsZero() {
			sc.UpdatedAt = s.now()
		}
		c := sc.conversation(s.opts.roundStatus())
		s.conversations[s.conversationKey(c.Space, c.ID)] = c
	}
}

// SeedDocument returns the document the conversation route would serve for
// spec, without a simulator: for benchmarks of reading large conversations.
// roundStatus adds status "completed" to each round, as 9.4 and later do.
func SeedDocument(spec SeedConversation, roundStatus bool) []byte {
	if spec.UpdatedAt.IsZero() {
		spec.UpdatedAt = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	}
	return new(Sim).renderLocked(spec.conversation(roundStatus)).plain
}

func (sc SeedConversation) conversation(roundStatus bool) *conversation {
	if sc.AgentID == "" {
		sc.AgentID = "elastic-ai-agent"
	}
	if sc.Title == "" {
		sc.Title = "Seeded conversation " + sc.ID
	}
	if sc.Rounds == 0 {
		sc.Rounds = 1
	}
	if sc.Input == "" {
		sc.Input = "Question {{round}}"
	}
	if sc.Reply == "" {
		sc.Reply = "Answer to question {{round}}."
	}
	ts := sc.UpdatedAt.UTC().Format(time.RFC3339Nano)
	c := &conversation{
		ID: sc.ID, AgentID: sc.AgentID, Username: sc.Username, Space: sc.Space, Title: sc.Title,
		CreatedAt: ts, UpdatedAt: ts, Rounds: make([]json.RawMessage, sc.Rounds),
	}
	perRound := sc.Bytes / sc.Rounds
	started := sc.UpdatedAt.Add(-time.Duration(sc.Rounds) * time.Minute)
	seq := 0
	for i := range c.Rounds {
		n := strconv.Itoa(i + 1)
		c.Rounds[i] = seedRound(strings.ReplaceAll(sc.Input, "{{round}}", n), strings.ReplaceAll(sc.Reply, "{{round}}", n),
			roundStatus, started.Add(time.Duration(i)*time.Minute), perRound, &seq)
	}
	return c
}

// seedRound writes one round of about size bytes, keys in the order Kibana
// stores them (steps before the response), with tool-result rows that vary
// enough to compress like real log lines rather than to nothing.
func seedRound(input, reply string, roundStatus bool, started time.Time, size int, seq *int) json.RawMessage {
	var b bytes.Buffer
	b.Grow(size + 2048)
	str := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	b.WriteString(`{"id":`)
	str(newUUID())
	if roundStatus {
		b.WriteString(`,"status":"completed"`)
	}
	b.WriteString(`,"input":{"message":`)
	str(input)
	b.WriteString(`},"steps":[{"type":"reasoning","reasoning":`)
	str(ReasoningMarker + ": deciding which tools answer “" + input + "”")
	b.WriteString(`}`)
	tools := []string{"platform.core.search", "platform.core.execute_esql"}
	// What the rest of the round takes, so that the rows fill the remainder.
	const overhead = 1200
	rowsBytes := max(size-overhead-len(input)*2-len(reply), 0) / len(tools)
	var row []byte
	for t, tool := range tools {
		fmt.Fprintf(&b, `,{"type":"tool_call","tool_call_id":"tooluse_%d","tool_id":%q,"params":{"query":`, t+1, tool)
		str(input)
		b.WriteString(`},"progression":[{"message":`)
		str(ProgressMarker + ": selecting the best target for this query")
		fmt.Fprintf(&b, `}],"results":[{"tool_result_id":"r%d","type":"esql_results","data":{"marker":%q,"tool":%q,"rows":[`,
			t+1, ToolResultMarker, tool)
		start := b.Len()
		for first := true; b.Len()-start < rowsBytes; first = false {
			if !first {
				b.WriteByte(',')
			}
			*seq++
			row = seedRow(row[:0], *seq)
			b.Write(row)
		}
		b.WriteString(`]}}]}`)
	}
	b.WriteString(`],"response":{"message":`)
	str(reply)
	fmt.Fprintf(&b, `},"started_at":%q,"time_to_first_token":1200,"time_to_last_token":5400,`+
		`"model_usage":{"connector_id":"sim-connector","llm_calls":3,"input_tokens":9123,"output_tokens":412}}`,
		started.UTC().Format(time.RFC3339Nano))
	return b.Bytes()
}

var seedUsers = []string{"svc-batch", "alice", "bob", "svc-ingest", "carol", "svc-backup", "dave"}
var seedActions = []string{"role_mapping.update", "api_key.create", "index.delete", "user.login", "privilege.grant"}

// seedRow appends one JSON string: a log line with escapes, as tool
// results carry.
func seedRow(dst []byte, n int) []byte {
	dst = append(dst, `"`+ToolResultMarker+` 2026-11-03T`...)
	dst = appendPad(dst, (n/3600)%24, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, (n/60)%60, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, n%60, 2)
	dst = append(dst, `Z seq=`...)
	dst = appendPad(dst, n, 8)
	dst = append(dst, ` user=\"`...)
	dst = append(dst, seedUsers[(n*5+n/11)%len(seedUsers)]...)
	dst = append(dst, `\" action=\"`...)
	dst = append(dst, seedActions[(n*13)%len(seedActions)]...)
	dst = append(dst, `\" src=10.`...)
	h := uint32(n) * 2654435761
	dst = strconv.AppendUint(dst, uint64(h>>24), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64((h>>16)&0xff), 10)
	dst = append(dst, '.')
	dst = strconv.AppendUint(dst, uint64((h>>8)&0xff), 10)
	dst = append(dst, ` bytes=`...)
	dst = strconv.AppendUint(dst, uint64(h%99991), 10)
	dst = append(dst, ` path=C:\\data\\`...)
	dst = strconv.AppendUint(dst, uint64(h%977), 16)
	dst = append(dst, '"')
	return dst
}

func appendPad(dst []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
