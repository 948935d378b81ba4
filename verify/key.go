package verify

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// KeyID is the receipt's name for a note key:
// "<name>+<8 hex digits of the key hash>".
func KeyID(v note.Verifier) string {
	return fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())
}

// splitKeyID parses "<name>+<8 hex>".
func splitKeyID(id string) (string, uint32, bool) {
	i := len(id) - 9
	if i < 1 || id[i] != '+' {
		return "", 0, false
	}
	h, err := strconv.ParseUint(id[i+1:], 16, 32)
	if err != nil {
		return "", 0, false
	}
	return id[:i], uint32(h), true
}

// ParseVerifier reads a pinned verifier key: either the key string itself
// ("origin+hash+base64") or the name of a file holding it.
func ParseVerifier(k string) (note.Verifier, error) {
	k = strings.TrimSpace(k)
	if v, err := note.NewVerifier(k); err == nil {
		return v, nil
	}
	b, err := os.ReadFile(k)
	if err != nil {
		return nil, fmt.Errorf("verifier key %q: neither a key nor a readable file: %w", k, err)
	}
	v, err := note.NewVerifier(string(bytes.TrimSpace(b)))
	if err != nil {
		return nil, fmt.Errorf("verifier key file %q: %w", k, err)
	}
	return v, nil
}
