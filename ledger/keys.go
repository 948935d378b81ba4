package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Names of the key files under Config.Dir. The secret and the signing key
// are created with mode 0600 and never leave the data directory; the
// verifier key is public and sits beside the checkpoint.
const (
	secretFile  = "secret.key"
	signingFile = "signing.key"
)

// keys is what Open loads or creates: immutable afterwards.
type keys struct {
	secret   []byte // HMAC key for salts and pseudonyms
	macs     *macs  // keyed by secret
	signer   note.Signer
	verifier note.Verifier
	vkey     string // verifier key string, e.g. "origin+1a2b3c4d+AbC..."
}

// loadKeys reads the ledger secret and the signing key from dir, creating
// them on first start. keyFile, if set, names an existing note signer key
// instead. origin, if set, must match the signing key's name.
func loadKeys(dir, keyFile, origin string) (*keys, error) {
	secret, err := readOrCreate(filepath.Join(dir, secretFile), func() ([]byte, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger secret: %w", err)
	}
	if len(secret) < 32 {
		return nil, fmt.Errorf("ledger secret %s: %d bytes, want 32", filepath.Join(dir, secretFile), len(secret))
	}
	var skey []byte
	if keyFile != "" {
		skey, err = os.ReadFile(keyFile)
	} else {
		skey, err = readOrCreate(filepath.Join(dir, signingFile), func() ([]byte, error) {
			name := origin
			if name == "" {
				name = DefaultOrigin
			}
			s, _, err := note.GenerateKey(rand.Reader, name)
			return []byte(s + "\n"), err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	signer, err := note.NewSigner(strings.TrimSpace(string(skey)))
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	if origin != "" && signer.Name() != origin {
		return nil, fmt.Errorf("ledger signing key is for origin %q, configured origin is %q", signer.Name(), origin)
	}
	vkey, err := verifierKey(strings.TrimSpace(string(skey)))
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("ledger verifier key: %w", err)
	}
	return &keys{secret: secret[:32], macs: newMACs(secret[:32]), signer: signer, verifier: verifier, vkey: vkey}, nil
}

// verifierKey derives the public verifier key string from a note signer
// key "PRIVATE+KEY+name+hash+base64(alg||seed)".
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("not a note signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("not an Ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}

// readOrCreate returns the contents of path, creating it first with mode
// 0600 from gen if it does not exist. Creation is exclusive and fsynced, so
// two processes starting at once agree on one key.
func readOrCreate(path string, gen func() ([]byte, error)) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data, err := gen()
	if err != nil {
		return nil, err
	}
	if err := durable.CreateFile(path, data, 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return os.ReadFile(path)
		}
		return nil, err
	}
	return data, nil
}
