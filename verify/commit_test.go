package verify

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// TestCommitment: a commitment is SHA-256(salt || bytes), however the
// bytes are split into writes.
func TestCommitment(t *testing.T) {
	var salt [32]byte
	for i := range salt {
		salt[i] = byte(i)
	}
	c := NewCommitter(salt)
	c.Write([]byte("ab"))
	c.Write([]byte("c"))
	h := sha256.Sum256(append(salt[:], "abc"...))
	if !bytes.Equal(c.Sum(), h[:]) || !bytes.Equal(Commit(salt, []byte("abc")), h[:]) {
		t.Fatal("commitment is not SHA-256(salt || bytes)")
	}
}
