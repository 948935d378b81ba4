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

// sipRound is one SipRound, on values so that it inlines and the state
// stays in registers.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13) ^ v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16) ^ v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21) ^ v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17) ^ v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

func (s *sip) compress(m uint64) {
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3^m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	s.v0, s.v1, s.v2, s.v3 = v0^m, v1, v2, v3
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
	m := s.tail | s.n<<56
	v0, v1, v2, v3 := s.v0, s.v1, s.v2, s.v3^m
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= m
	v2 ^= 0xff
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
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
