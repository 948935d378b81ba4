package check

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/custody-gateway/custody"
)

// Replay remembers which request each response id and response-body
// digest was delivered to, for a time window, in bounded memory. A
// response whose id or digest was already delivered to a different
// request is a swapped or duplicated response: the redis-style failure
// where the next caller reads the previous caller's answer.
//
// Keys are stored as 16-byte hashes; an entry costs about 64 bytes, so
// the default bound of a million entries holds under 64 MiB. When full,
// the oldest entries are forgotten first.
type Replay struct {
	window time.Duration
	shards [replayShards]replayShard
}

const replayShards = 32

type replayShard struct {
	mu   sync.Mutex
	max  int
	m    map[[16]byte]replayEntry // guarded by mu
	ring [][16]byte               // insertion order, for eviction; guarded by mu
	head int                      // next ring slot to overwrite once full
}

type replayEntry struct {
	owner string
	at    int64 // unix nanoseconds of the first delivery
}

// NewReplay remembers up to maxEntries keys for window.
func NewReplay(window time.Duration, maxEntries int) *Replay {
	r := &Replay{window: window}
	per := max(maxEntries/replayShards, 1)
	for i := range r.shards {
		r.shards[i] = replayShard{max: per, m: make(map[[16]byte]replayEntry)}
	}
	return r
}

// ReplayedMessage is what the client is told of a replayed response.
const ReplayedMessage = "this response was already delivered to another request"

// Claim records that key was delivered to requestID (an owner: see
// ResponseClaims) at now, and fails if it was already delivered to
// another owner within the window. The first claim wins; an owner may
// claim its own key again.
func (r *Replay) Claim(key, requestID string, now time.Time) error {
	h := sha256.Sum256([]byte(key))
	var k [16]byte
	copy(k[:], h[:16])
	s := &r.shards[binary.LittleEndian.Uint32(h[16:])%replayShards]
	t := now.UnixNano()

	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[k]; ok && t-e.at < int64(r.window) {
		if e.owner != requestID {
			// The first owner may be another tenant's request: the client
			// is not told which; the operator's log is (Err).
			return &custody.Error{Code: custody.CodeResponseReplayed, Message: ReplayedMessage,
				Err: fmt.Errorf("first delivered to %s", e.owner)}
		}
		return nil
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, k)
	} else {
		delete(s.m, s.ring[s.head])
		s.ring[s.head] = k
		s.head = (s.head + 1) % s.max
	}
	s.m[k] = replayEntry{owner: requestID, at: t}
	return nil
}

// Len is the number of keys remembered (for tests and metrics).
func (r *Replay) Len() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// ReplayClaim is one key a delivered response claims, and its owner.
type ReplayClaim struct{ Key, Owner string }

// ResponseClaims returns what delivering a response claims:
//
//   - its id (when it has one), per provider, owned by the transaction
//     txID: an id is delivered once;
//   - the digest of its body (when given), owned by the request it
//     answered, identified by requestDigest (openai.Request.Digest: what
//     the upstream was asked, not how it was spelled, without user and
//     metadata): the same bytes are a legitimate answer to the same
//     request (embeddings have no id, greedy and cached outputs repeat,
//     two tenants may ask the same thing), but never to a different one.
func ResponseClaims(provider, responseID, txID string, requestDigest [32]byte, response []byte) []ReplayClaim {
	var cs []ReplayClaim
	if responseID != "" {
		cs = append(cs, ReplayClaim{"id\x00" + provider + "\x00" + responseID, txID})
	}
	if response != nil {
		d := sha256.Sum256(response)
		cs = append(cs, ReplayClaim{"digest\x00" + hex.EncodeToString(d[:]), "request:" + hex.EncodeToString(requestDigest[:16])})
	}
	return cs
}
