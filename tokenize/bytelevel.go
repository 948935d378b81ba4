package tokenize

// byteLevelRunes is GPT-2's bytes_to_unicode: the rune that stands for
// each byte in a byte-level BPE vocabulary (printable Latin-1 stands for
// itself; the rest are shifted to U+0100 and up, so a space is "Ġ").
func byteLevelRunes() (m [256]rune) {
	n := 0
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}

// byteLevelDecode turns a vocabulary entry back into the bytes it stands
// for, or reports false if it has a rune outside the byte-level alphabet
// (such an entry, an added special token say, can never be a BPE result).
func byteLevelDecode(tok string, inverse map[rune]byte, buf []byte) ([]byte, bool) {
	buf = buf[:0]
	for _, r := range tok {
		b, ok := inverse[r]
		if !ok {
			return nil, false
		}
		buf = append(buf, b)
	}
	return buf, true
}
