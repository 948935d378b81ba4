package canary

import (
	"crypto/rand"
	"strings"
	"unicode"
)

const alnum = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// nonce returns a random token of n (>= 8) letters and digits, with at
// least two of each so that it reads as an id (the simulator, like a model
// asked to repeat it, echoes such tokens). Ambiguous glyphs are left out.
func nonce(n int) string {
	n = max(n, 8)
	for {
		b := make([]byte, 0, n)
		var buf [64]byte
		for len(b) < n {
			_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails (Go 1.24+)
			for _, c := range buf {
				// Rejection keeps the choice uniform over alnum.
				if int(c) < 256-256%len(alnum) && len(b) < n {
					b = append(b, alnum[int(c)%len(alnum)])
				}
			}
		}
		letters, digits := 0, 0
		for i := range b {
			if b[i] >= '2' && b[i] <= '9' {
				digits++
			} else {
				letters++
			}
		}
		if letters >= 2 && digits >= 2 {
			return string(b)
		}
	}
}

// nonceLike returns the words of text that look like nonces: at least 8
// ASCII letters and digits with both, once surrounding punctuation is
// stripped. It is how probes spot another request's ids in an answer.
func nonceLike(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(w) < 8 {
			continue
		}
		var letter, digit, other bool
		for _, r := range w {
			switch {
			case r >= '0' && r <= '9':
				digit = true
			case r < 128 && unicode.IsLetter(r):
				letter = true
			default:
				other = true
			}
		}
		if letter && digit && !other {
			out = append(out, w)
		}
	}
	return out
}
