package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
var ErrBadReceipt = errors.New("verify: malformed receipt")

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
	// Cosigned is the gateway's word that Checkpoint carries its witness
	// quorum's cosignatures (it publishes no other checkpoint when
	// ledger.witnesses is set); absent without witnesses or without a
	// checkpoint yet. A verifier checks the cosignatures itself
	// (--witness-key): this only says whether to expect them.
	Cosigned bool `json:"cosigned,omitempty"`
}

// receiptDomain prefixes the bytes the receipt signature covers, so that a
// receipt signature can never be mistaken for a checkpoint signature made
// with the same key (a note's text cannot contain a NUL byte).
const receiptDomain = "custody/receipt/v1\x00"

// SignedMessage is what a receipt's signature covers:
// "custody/receipt/v1\x00" || leaf. The ledger signs it; VerifyReceipt
// checks it.
func SignedMessage(leaf []byte) []byte {
	msg := make([]byte, 0, len(receiptDomain)+len(leaf))
	return append(append(msg, receiptDomain...), leaf...)
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
