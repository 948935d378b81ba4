package check

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"runtime"
	"strings"
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
// A claim is the key's 64-bit hash, the time, and its owner in 16 bytes
// (a transaction id or a request digest as the bytes they spell, so that
// the operator's log still names the first owner) in a ring, and a
// 4-byte slot in an index at most half full (claimTable): 40 bytes, and
// no pointer for the garbage collector to follow. (Entries that held the
// owner's name as a string cost about 110 bytes each and made every GC
// cycle walk the whole table: a full table of a million was 110 MB.) A
// false alarm needs two 64-bit hashes (maphash, seeded per process) of
// different keys to collide: with 500,000 claims, about one claim in
// 10^13. When full, the oldest entries are forgotten first.
type Replay struct {
	window     time.Duration
	maxEntries int
	seed       maphash.Seed // of the keys' hashes, in this process only
	owners     maphash.Seed // of the owners that are neither ids nor digests

	shards [replayShards]replayShard
}

const (
	replayShardBits = 5
	replayShards    = 1 << replayShardBits
)

type replayShard struct {
	mu     sync.Mutex
	claims claimTable // guarded by mu
}

// NewReplay remembers up to maxEntries keys for window.
func NewReplay(window time.Duration, maxEntries int) *Replay {
	r := &Replay{window: window, maxEntries: maxEntries, seed: maphash.MakeSeed(), owners: maphash.MakeSeed()}
	per := max(maxEntries/replayShards, 1)
	frees := make([]func(), replayShards)
	for i := range r.shards {
		r.shards[i].claims = newClaimTable(per)
		frees[i] = r.shards[i].claims.free
	}
	// The tables' memory is the kernel's: it goes back when r is garbage.
	runtime.AddCleanup(r, func(frees []func()) {
		for _, f := range frees {
			f()
		}
	}, frees)
	return r
}

// ReplayedMessage is what the client is told of a replayed response.
const ReplayedMessage = "this response was already delivered to another request"

// Claim records that key was delivered to requestID (an owner: see
// AppendResponseClaims) at now, and fails if it was already delivered to
// another owner within the window. The first claim wins; an owner may
// claim its own key again.
func (r *Replay) Claim(key, requestID string, now time.Time) error {
	// maphash with a seed of this process: the table lives in memory only,
	// and an upstream cannot aim collisions at a seed it does not know.
	// The shard takes the hash's top bits, the table's slot its low ones.
	k := maphash.String(r.seed, key)
	s := &r.shards[k>>(64-replayShardBits)]
	kind, owner := r.owner(requestID)
	t := now.UnixMilli()

	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.claims.find(k); e != nil {
		if (t-int64(e.meta>>2))*int64(time.Millisecond) < int64(r.window) {
			if e.owner != owner || e.meta&3 != kind {
				// The first owner may be another tenant's request: the
				// client is not told which; the operator's log is (Err).
				return &custody.Error{Code: custody.CodeResponseReplayed, Message: ReplayedMessage,
					Err: fmt.Errorf("first delivered to %s", ownerName(e.meta&3, e.owner))}
			}
			return nil
		}
		// Expired: the claim starts again in place.
		e.meta, e.owner = uint64(t)<<2|kind, owner
		return nil
	}
	s.claims.add(claimEntry{key: k, meta: uint64(t)<<2 | kind, owner: owner})
	return nil
}

// The kinds of owner a claim records in 16 bytes.
const (
	ownerHashed  = 0 // any other name: its 64-bit hash
	ownerTx      = 1 // a transaction id (custody.ParseID)
	ownerRequest = 2 // "request:" and 32 hex digits (AppendResponseClaims)
)

// owner is requestID in 16 bytes: exactly, for the two forms
// AppendResponseClaims gives, so that a replay's log line names the first owner.
func (r *Replay) owner(requestID string) (kind uint64, b [16]byte) {
	if id, ok := custody.ParseID(requestID); ok {
		return ownerTx, id
	}
	if h, ok := strings.CutPrefix(requestID, requestOwnerPrefix); ok && len(h) == 32 && strings.ToLower(h) == h {
		if _, err := hex.Decode(b[:], []byte(h)); err == nil {
			return ownerRequest, b
		}
	}
	binary.LittleEndian.PutUint64(b[:], maphash.String(r.owners, requestID))
	return ownerHashed, b
}

func ownerName(kind uint64, b [16]byte) string {
	switch kind {
	case ownerTx:
		return custody.FormatID(b)
	case ownerRequest:
		return requestOwnerPrefix + hex.EncodeToString(b[:])
	}
	return fmt.Sprintf("another owner (hash %016x)", binary.LittleEndian.Uint64(b[:]))
}

// Is reports whether r, which may be nil, remembers up to maxEntries
// keys for window: whether NewReplay(window, maxEntries) would make the
// same.
func (r *Replay) Is(window time.Duration, maxEntries int) bool {
	return r != nil && r.window == window && r.maxEntries == maxEntries
}

// Len is the number of keys remembered (for tests and metrics).
func (r *Replay) Len() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n += s.claims.len()
		s.mu.Unlock()
	}
	return n
}

// hexAfter is prefix and b (a digest, at most 32 bytes) in hex, made in
// one allocation.
func hexAfter(prefix string, b []byte) string {
	var h [64]byte
	n := hex.Encode(h[:], b[:min(len(b), 32)])
	var s strings.Builder
	s.Grow(len(prefix) + n)
	s.WriteString(prefix)
	s.Write(h[:n])
	return s.String()
}

// requestOwnerPrefix begins the owner of a body digest's claim.
const requestOwnerPrefix = "request:"

// ReplayClaim is one key a delivered response claims, and its owner.
type ReplayClaim struct{ Key, Owner string }

// AppendResponseClaims appends what delivering a response claims:
//
//   - its id (when it has one), per provider, owned by the transaction
//     txID: an id is delivered once;
//   - the digest of its body (when given), owned by the request it
//     answered, identified by requestDigest (openai.Request.Digest: what
//     the upstream was asked, not how it was spelled, without user and
//     metadata): the same bytes are a legitimate answer to the same
//     request (embeddings have no id, greedy and cached outputs repeat,
//     two tenants may ask the same thing), but never to a different one.
//
// The claims are appended to cs (room for two on the caller's stack saves
// an allocation a response).
func AppendResponseClaims(cs []ReplayClaim, provider, responseID, txID string, requestDigest [32]byte, response []byte) []ReplayClaim {
	if responseID != "" {
		cs = append(cs, ReplayClaim{"id\x00" + provider + "\x00" + responseID, txID})
	}
	if response != nil {
		d := sha256.Sum256(response)
		cs = append(cs, ReplayClaim{hexAfter("digest\x00", d[:]), hexAfter(requestOwnerPrefix, requestDigest[:16])})
	}
	return cs
}

// StreamClaim is what delivering a stream with no id claims: the digest
// of its content (each event's data, as custody read it), owned, as a
// body digest is, by the request it answered. The same stream is a
// legitimate answer to the same request, never to a different one.
func StreamClaim(requestDigest, stream [32]byte) ReplayClaim {
	return ReplayClaim{hexAfter("stream\x00", stream[:]), hexAfter(requestOwnerPrefix, requestDigest[:16])}
}
