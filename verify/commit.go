package verify

import (
	"crypto/sha256"
	"hash"
)

// Committer computes a commitment SHA-256(salt || bytes written) over a
// body as it streams past, without keeping it.
type Committer struct {
	h hash.Hash
}

// NewCommitter starts a commitment with salt.
func NewCommitter(salt [32]byte) *Committer {
	h := sha256.New()
	h.Write(salt[:])
	return &Committer{h: h}
}

// Write adds p to the committed bytes; it never fails.
func (c *Committer) Write(p []byte) (int, error) { return c.h.Write(p) }

// Sum is the commitment to the bytes written so far.
func (c *Committer) Sum() []byte { return c.h.Sum(nil) }

// Commit is SHA-256(salt || b).
func Commit(salt [32]byte, b []byte) []byte {
	c := NewCommitter(salt)
	c.Write(b)
	return c.Sum()
}
