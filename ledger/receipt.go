package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/mod/sumdb/note"
)

// ReceiptVersion is the value of the "v" field of receipts.
const ReceiptVersion = 1

// Bounds on what a receipt may hold, so that parsing untrusted receipts
// is cheap whatever they say.
const (
	maxReceiptSize    = 256 << 10
	maxProofLen       = 64
	maxCheckpointSize = 16 << 10
)

// ErrBadReceipt is wrapped by every ParseReceipt failure.
var ErrBadReceipt = errors.New("ledger: malformed receipt")

// Receipt is what a client gets for one transaction: the leaf, the salts
// that open its commitments, the gateway's signature over the leaf (the
// promise), and once the leaf is integrated, the inclusion proof under a
// signed checkpoint (the evidence). Binary fields are standard base64 in
// JSON. docs/ledger.md documents the format.
type Receipt struct {
	V         int    `json:"v"`
	RequestID string `json:"request_id"`
	Origin    string `json:"origin"`
	// KeyID is "<origin>+<8 hex digits of the note key hash>": the key that
	// signed the leaf and the checkpoint.
	KeyID        string `json:"key_id"`
	Index        uint64 `json:"index"`
	Leaf         []byte `json:"leaf"`
	RequestSalt  []byte `json:"request_salt"`
	ResponseSalt []byte `json:"response_salt"`
	// Signature is Ed25519 over "custody/receipt/v1\x00" || Leaf.
	Signature []byte `json:"signature"`
	// Checkpoint is the signed note of a tree that contains Index, and
	// InclusionProof the path from the leaf to its root; both empty until
	// the leaf is integrated and a checkpoint published.
	Checkpoint     string   `json:"checkpoint,omitempty"`
	InclusionProof [][]byte `json:"inclusion_proof,omitempty"`
}

// keyID is the receipt's name for a note key.
func keyID(name string, hash uint32) string {
	return name + "+" + fmt.Sprintf("%08x", hash)
}

// signLeaf makes the receipt signature.
func signLeaf(s note.Signer, leaf []byte) ([]byte, error) {
	msg := make([]byte, 0, len(receiptDomain)+len(leaf))
	msg = append(append(msg, receiptDomain...), leaf...)
	return s.Sign(msg)
}

// verifyLeafSignature checks the receipt signature with v.
func verifyLeafSignature(v note.Verifier, leaf, sig []byte) bool {
	msg := make([]byte, 0, len(receiptDomain)+len(leaf))
	msg = append(append(msg, receiptDomain...), leaf...)
	return v.Verify(msg, sig)
}

// Marshal is the receipt's JSON.
func (r *Receipt) Marshal() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// ParseReceipt parses a receipt and checks its shape (not its signature
// or proof: VerifyReceipt does that).
func ParseReceipt(b []byte) (*Receipt, error) {
	if len(b) > maxReceiptSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadReceipt, len(b))
	}
	var r Receipt
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReceipt, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrBadReceipt)
	}
	switch {
	case r.V != ReceiptVersion:
		return nil, fmt.Errorf("%w: version %d", ErrBadReceipt, r.V)
	case len(r.Leaf) == 0 || len(r.Leaf) > MaxLeafSize:
		return nil, fmt.Errorf("%w: leaf of %d bytes", ErrBadReceipt, len(r.Leaf))
	case len(r.RequestSalt) != 32 || len(r.ResponseSalt) != 32:
		return nil, fmt.Errorf("%w: salts must be 32 bytes", ErrBadReceipt)
	case len(r.Signature) != 64:
		return nil, fmt.Errorf("%w: signature must be 64 bytes", ErrBadReceipt)
	case len(r.InclusionProof) > maxProofLen:
		return nil, fmt.Errorf("%w: inclusion proof of %d hashes", ErrBadReceipt, len(r.InclusionProof))
	case len(r.Checkpoint) > maxCheckpointSize:
		return nil, fmt.Errorf("%w: checkpoint of %d bytes", ErrBadReceipt, len(r.Checkpoint))
	case r.Checkpoint == "" && len(r.InclusionProof) > 0:
		return nil, fmt.Errorf("%w: inclusion proof without checkpoint", ErrBadReceipt)
	}
	for i, h := range r.InclusionProof {
		if len(h) != 32 {
			return nil, fmt.Errorf("%w: inclusion proof hash %d is %d bytes", ErrBadReceipt, i, len(h))
		}
	}
	if _, _, ok := splitKeyID(r.KeyID); !ok {
		return nil, fmt.Errorf("%w: key_id %q", ErrBadReceipt, r.KeyID)
	}
	return &r, nil
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
