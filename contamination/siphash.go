package contamination

import (
	"encoding/binary"
	"math/bits"
)

// sip is an incremental SipHash-2-4 (Aumasson and Bernstein) over a 128-bit
// key. It is fed one byte at a time because words arrive split across
// response chunks; the zero value is not usable, start with reset.
type sip struct {
	v0, v1, v2, v3 uint64
	tail           uint64 // bytes not yet compressed, little-endian
	n              uint64 // bytes written in total
}

const (
	sipC0 = 0x736f6d6570736575
	sipC1 = 0x646f72616e646f6d
	sipC2 = 0x6c7967656e657261
	sipC3 = 0x7465646279746573
)

func (s *sip) reset(k0, k1 uint64) {
	s.v0, s.v1, s.v2, s.v3 = k0^sipC0, k1^sipC1, k0^sipC2, k1^sipC3
	s.tail, s.n = 0, 0
}

func (s *sip) round() {
	s.v0 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 13)
	s.v1 ^= s.v0
	s.v0 = bits.RotateLeft64(s.v0, 32)
	s.v2 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 16)
	s.v3 ^= s.v2
	s.v0 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 21)
	s.v3 ^= s.v0
	s.v2 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 17)
	s.v1 ^= s.v2
	s.v2 = bits.RotateLeft64(s.v2, 32)
}

func (s *sip) compress(m uint64) {
	s.v3 ^= m
	s.round()
	s.round()
	s.v0 ^= m
}

func (s *sip) writeByte(b byte) {
	s.tail |= uint64(b) << (8 * (s.n & 7))
	s.n++
	if s.n&7 == 0 {
		s.compress(s.tail)
		s.tail = 0
	}
}

// sum returns the hash of the bytes written so far without changing s.
func (s *sip) sum() uint64 {
	t := *s
	t.compress(t.tail | t.n<<56)
	t.v2 ^= 0xff
	t.round()
	t.round()
	t.round()
	t.round()
	return t.v0 ^ t.v1 ^ t.v2 ^ t.v3
}

// sipSum hashes b in one call; it exists for tests and key derivation.
func sipSum(k0, k1 uint64, b []byte) uint64 {
	var s sip
	s.reset(k0, k1)
	for len(b) >= 8 {
		s.compress(binary.LittleEndian.Uint64(b))
		s.n += 8
		b = b[8:]
	}
	for _, c := range b {
		s.writeByte(c)
	}
	return s.sum()
}
