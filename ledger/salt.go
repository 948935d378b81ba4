package ledger

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
)

// Domain-separation prefixes of the keyed hashes derived from the ledger
// secret. They are part of the documented format (docs/ledger.md).
const (
	saltDomain      = "custody/salt/v1"
	pseudonymDomain = "custody/tenant/v1"
)

// macs computes HMAC-SHA256 under the ledger secret. Every request needs
// two salts and a pseudonym: a fresh hmac.New for each hashed the key
// into its inner and outer pads again and allocated both states, so the
// keyed hashes are pooled and Reset (which restores the keyed state).
type macs struct {
	pool sync.Pool
	// names caches pseudonyms: a request's tenant is one of the
	// configured few, and its pseudonym was an HMAC per leaf. Bounded by
	// maxCachedPseudonyms, past which pseudonyms are computed each time.
	names  sync.Map // tenant -> pseudonym
	cached atomic.Int32
}

// maxCachedPseudonyms bounds the pseudonym cache.
const maxCachedPseudonyms = 4096

func newMACs(key []byte) *macs {
	m := &macs{}
	m.pool.New = func() any { return &keyedHash{h: hmac.New(sha256.New, key)} }
	return m
}

// keyedHash is a pooled HMAC and the buffer its sum is written to (a
// slice of a local array would escape through hash.Hash.Sum, an
// allocation per call).
type keyedHash struct {
	h   hash.Hash
	in  []byte // the message, gathered: a []byte(string) per Write escaped too
	out [sha256.Size]byte
}

// sum is HMAC-SHA256(key, domain || a || b).
func (m *macs) sum(domain, a, b string) (s [32]byte) {
	k := m.pool.Get().(*keyedHash)
	k.h.Reset()
	k.in = append(append(append(k.in[:0], domain...), a...), b...)
	k.h.Write(k.in)
	k.h.Sum(k.out[:0])
	s = k.out
	m.pool.Put(k)
	return s
}

// salt is HMAC-SHA256(key, "custody/salt/v1" || kind || requestID), kind
// "request" or "response". Neither kind is a prefix of the other, so the
// concatenation is unambiguous.
func (m *macs) salt(kind, requestID string) [32]byte {
	return m.sum(saltDomain, kind, requestID)
}

// pseudonym is hex(HMAC-SHA256(key, "custody/tenant/v1" || tenant))[:32]:
// stable for a tenant, unlinkable to its id without the secret.
func (m *macs) pseudonym(tenant string) string {
	if p, ok := m.names.Load(tenant); ok {
		return p.(string)
	}
	s := m.sum(pseudonymDomain, tenant, "")
	p := hex.EncodeToString(s[:16])
	if m.cached.Load() < maxCachedPseudonyms {
		if _, loaded := m.names.LoadOrStore(tenant, p); !loaded {
			m.cached.Add(1)
		}
	}
	return p
}
