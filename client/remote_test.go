package client

import (
	"testing"

	"github.com/tidwall/gjson"
)

// TestRemoteAgentUse: a --protocol the card offers takes that version's
// interface (its own URL and tenant); one it does not offer keeps the
// card's endpoint and reports it.
func TestRemoteAgentUse(t *testing.T) {
	both := `{"name":"A","url":"http://a.test/v03","protocolVersion":"0.3.0","preferredTransport":"JSONRPC",
	  "supportedInterfaces":[{"url":"http://a.test/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t1"},
	                         {"url":"http://a.test/v03b","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`
	only03 := `{"name":"B","url":"http://b.test/rpc","protocolVersion":"0.3.0"}`
	only10 := `{"name":"C","supportedInterfaces":[{"url":"http://c.test/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
	for _, tt := range []struct {
		name, card       string
		use              Dialect
		offered          bool
		endpoint, tenant string
		startEndpoint    string
		startDialect     Dialect
	}{
		{"both, ask 0.3", both, V03, true, "http://a.test/v03b", "", "http://a.test/v1", V10},
		{"0.3 only, ask 1.0", only03, V10, false, "http://b.test/rpc", "", "http://b.test/rpc", V03},
		{"1.0 only, ask 0.3", only10, V03, false, "http://c.test/v1", "", "http://c.test/v1", V10},
		{"1.0 only, ask 1.0", only10, V10, true, "http://c.test/v1", "", "http://c.test/v1", V10},
	} {
		ra, err := chooseInterface(Card{Raw: []byte(tt.card)}, "http://"+gjson.Get(tt.card, "name").String()+".test/.well-known/agent-card.json", "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ra.Endpoint != tt.startEndpoint || ra.Dialect != tt.startDialect {
			t.Fatalf("%s: chosen %s %s", tt.name, ra.Endpoint, ra.Dialect)
		}
		if got := ra.Use(tt.use); got != tt.offered || ra.Endpoint != tt.endpoint || ra.Tenant != tt.tenant || ra.Dialect != tt.use {
			t.Errorf("%s: Use(%s) = %v, endpoint %s tenant %q dialect %s", tt.name, tt.use, got, ra.Endpoint, ra.Tenant, ra.Dialect)
		}
	}
}
