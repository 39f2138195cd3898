package courier

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// identity is the fingerprint under which a target's tasks are worked: one
// worker serves every task of one identity, and a task is only ever worked
// on with the credential it was sent with.
func identity(t store.Target, key client.Secret) string {
	if t.Kind == store.TargetA2A {
		return Fingerprint(Origin(t.Endpoint), key.Reveal())
	}
	return Fingerprint(client.KibanaOrigin(t.URL), key.Reveal())
}

// Fingerprint is a truncated hash of an origin and a credential: it names
// the credential without revealing it.
func Fingerprint(origin, key string) string {
	sum := sha256.Sum256([]byte("a2a-courier identity v1\x00" + origin + "\x00" + client.NormalizeAPIKey(key)))
	return hex.EncodeToString(sum[:8])
}

// Origin is the scheme and host of a URL, in lower case: where a generic
// agent's credential may go.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
