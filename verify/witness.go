package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// WitnessPolicy is what a verifier requires of a checkpoint beyond the
// log's own signature: cosignatures (C2SP tlog-cosignature, cosignature/v1)
// by at least Quorum of the pinned witness Keys. A witness cosigns a
// checkpoint only after checking it is consistent with every checkpoint of
// the log it cosigned before, so a quorum of cosignatures means the
// operator cannot show this tree to one client and another to an
// auditor (a split view) without the witnesses noticing. The zero value
// requires nothing.
type WitnessPolicy struct {
	Keys   []note.Verifier
	Quorum int
}

// ParseWitnessKey reads a pinned witness verifier key: the C2SP vkey
// ("name+hash+base64(0x04 || Ed25519 key)", what litewitness prints; a
// plain Ed25519 note key 0x01 is accepted and used for cosignature/v1),
// or the name of a file holding it.
func ParseWitnessKey(k string) (note.Verifier, error) {
	k = strings.TrimSpace(k)
	if v, err := fnote.NewVerifierForCosignatureV1(k); err == nil {
		return v, nil
	}
	b, err := os.ReadFile(k)
	if err != nil {
		return nil, fmt.Errorf("witness key %q: neither a key nor a readable file: %w", k, err)
	}
	v, err := fnote.NewVerifierForCosignatureV1(string(bytes.TrimSpace(b)))
	if err != nil {
		return nil, fmt.Errorf("witness key file %q: %w", k, err)
	}
	return v, nil
}

// Cosigners returns the names of the witnesses of keys whose
// cosignatures on the signed checkpoint cp are valid. A signature line
// that names a pinned witness key but does not verify is a forgery and
// an error wrapping ErrInvalid; lines by keys not pinned are ignored.
func Cosigners(cp []byte, log note.Verifier, keys []note.Verifier) ([]string, error) {
	vs := append([]note.Verifier{log}, keys...)
	n, err := note.Open(cp, note.VerifierList(vs...))
	if err != nil {
		var inv *note.InvalidSignatureError
		if errors.As(err, &inv) {
			return nil, invalid("checkpoint: forged signature by %s+%08x", inv.Name, inv.Hash)
		}
		return nil, invalid("checkpoint: %v", err)
	}
	var names []string
	for _, s := range n.Sigs {
		for _, k := range keys {
			if s.Name == k.Name() && s.Hash == k.KeyHash() {
				names = append(names, s.Name)
				break
			}
		}
	}
	return names, nil
}

// Check verifies that cp carries the policy's quorum of cosignatures and
// returns the cosigners' names.
func (p WitnessPolicy) Check(cp []byte, log note.Verifier) ([]string, error) {
	if p.Quorum <= 0 {
		return nil, nil
	}
	names, err := Cosigners(cp, log, p.Keys)
	if err != nil {
		return nil, err
	}
	if len(names) < p.Quorum {
		return names, invalid("checkpoint cosigned by %d of the pinned witnesses (%s), quorum %d: the witnesses have not seen this tree",
			len(names), strings.Join(names, ", "), p.Quorum)
	}
	return names, nil
}
