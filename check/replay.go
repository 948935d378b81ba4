package check

import (
	"crypto/sha256"
	"encoding/binary"
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

// Claim records that key was delivered to requestID at now, and fails if
// it was already delivered to another request within the window. The
// first claim wins; a request may claim its own key again.
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
			return custody.Errorf(custody.CodeResponseReplayed,
				"this response was already delivered to request %s", e.owner)
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
