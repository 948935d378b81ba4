package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Domain-separation prefixes of the keyed hashes derived from the ledger
// secret. They are part of the documented format (docs/ledger.md).
const (
	saltDomain      = "custody/salt/v1"
	pseudonymDomain = "custody/tenant/v1"
)

// deriveSalt is HMAC-SHA256(key, "custody/salt/v1" || kind || requestID),
// kind "request" or "response". Neither kind is a prefix of the other, so
// the concatenation is unambiguous.
func deriveSalt(key []byte, kind, requestID string) [32]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(saltDomain))
	m.Write([]byte(kind))
	m.Write([]byte(requestID))
	var s [32]byte
	m.Sum(s[:0])
	return s
}

// pseudonym is hex(HMAC-SHA256(key, "custody/tenant/v1" || tenant))[:32]:
// stable for a tenant, unlinkable to its id without the secret.
func pseudonym(key []byte, tenant string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(pseudonymDomain))
	m.Write([]byte(tenant))
	var s [32]byte
	return hex.EncodeToString(m.Sum(s[:0])[:16])
}
