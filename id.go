package custody

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

// crockford is Crockford's base32 alphabet: no I, L, O, U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewID returns a request id: 26 characters of Crockford base32 holding
// 48 bits of Unix milliseconds and 80 random bits (the ULID layout), so
// ids sort by time and page cleanly in the index.
func NewID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	rand.Read(b[6:]) // never fails on supported platforms
	return FormatID(b)
}

// ParseID returns the 16 bytes a request id holds, if s is one exactly as
// NewID writes it (26 characters of the upper-case alphabet, the first
// holding 3 bits), so that FormatID(b) == s whenever ok.
func ParseID(s string) (b [16]byte, ok bool) {
	if len(s) != 26 {
		return b, false
	}
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		v := strings.IndexByte(crockford, s[i])
		if v < 0 || (i == 0 && v > 7) {
			return b, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return b, true
}

// FormatID writes the 16 bytes of a request id as NewID does.
func FormatID(b [16]byte) string {
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
