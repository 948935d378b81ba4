package contamination

import (
	"encoding/binary"
	"testing"
)

// TestSipHashVectors checks the first entries of the reference vectors of
// SipHash-2-4 (key 00..0f, message 00..len-1) from the SipHash paper.
func TestSipHashVectors(t *testing.T) {
	want := []uint64{
		0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
		0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
		0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
		0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
		0x3f2acc7f57c29bdb,
	}
	var key [16]byte
	for i := range key {
		key[i] = byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])
	msg := make([]byte, len(want))
	for i := range msg {
		msg[i] = byte(i)
	}
	for n, w := range want {
		if got := sipSum(k0, k1, msg[:n]); got != w {
			t.Errorf("len %d: one call %#x, want %#x", n, got, w)
		}
		var s sip
		s.reset(k0, k1)
		for _, b := range msg[:n] {
			s.writeByte(b)
		}
		if got := s.sum(); got != w {
			t.Errorf("len %d: byte by byte %#x, want %#x", n, got, w)
		}
	}
}
