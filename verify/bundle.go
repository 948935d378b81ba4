package verify

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// BundleFormat is the "format" field of an offline receipt bundle.
const BundleFormat = "custody.bundle/v1"

// tlogProofHeader is the first line of a C2SP tlog-proof.
const tlogProofHeader = "c2sp.org/tlog-proof@v1"

// ErrBadBundle is wrapped by every ParseBundle failure.
var ErrBadBundle = errors.New("verify: malformed bundle")

// Bundle is a receipt made self-contained for offline verification: the
// leaf, its salts and the gateway's signature, plus, as one C2SP
// tlog-proof (index, inclusion proof, and the checkpoint verbatim with
// whatever witness cosignatures it carries), the evidence that the leaf
// is in a tree the log signed and the witnesses saw. Checking it needs
// only the pinned keys: no log, no network. docs/ledger.md documents the
// format.
type Bundle struct {
	Format       string `json:"format"`
	RequestID    string `json:"request_id"`
	Origin       string `json:"origin"`
	KeyID        string `json:"key_id"`
	Leaf         []byte `json:"leaf"`
	RequestSalt  []byte `json:"request_salt"`
	ResponseSalt []byte `json:"response_salt"`
	Signature    []byte `json:"signature"`
	// Proof is a c2sp.org/tlog-proof@v1 for the leaf (no extra data).
	Proof string `json:"proof"`
}

// NewBundle makes the bundle of an integrated receipt (one that carries
// its checkpoint and inclusion proof).
func NewBundle(r *Receipt) (*Bundle, error) {
	if r.Checkpoint == "" {
		return nil, fmt.Errorf("%w: the receipt has no checkpoint yet", ErrNotIntegrated)
	}
	var p strings.Builder
	fmt.Fprintf(&p, "%s\nindex %d\n", tlogProofHeader, r.Index)
	for _, h := range r.InclusionProof {
		p.WriteString(base64.StdEncoding.EncodeToString(h))
		p.WriteByte('\n')
	}
	p.WriteByte('\n')
	p.WriteString(r.Checkpoint)
	return &Bundle{
		Format: BundleFormat, RequestID: r.RequestID, Origin: r.Origin, KeyID: r.KeyID,
		Leaf: r.Leaf, RequestSalt: r.RequestSalt, ResponseSalt: r.ResponseSalt, Signature: r.Signature,
		Proof: p.String(),
	}, nil
}

// Marshal is the bundle's JSON.
func (b *Bundle) Marshal() ([]byte, error) { return json.MarshalIndent(b, "", "  ") }

// ParseBundle parses a bundle and returns it as the receipt it stands
// for, with its checkpoint and inclusion proof: VerifyReceipt with no log
// source checks it offline. Shape only; nothing is verified here.
func ParseBundle(b []byte) (*Receipt, error) {
	if len(b) > maxReceiptSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadBundle, len(b))
	}
	var bu Bundle
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&bu); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrBadBundle)
	}
	if bu.Format != BundleFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrBadBundle, bu.Format, BundleFormat)
	}
	index, proof, cp, err := parseTlogProof(bu.Proof)
	if err != nil {
		return nil, fmt.Errorf("%w: proof: %w", ErrBadBundle, err)
	}
	r := &Receipt{
		V: ReceiptVersion, RequestID: bu.RequestID, Origin: bu.Origin, KeyID: bu.KeyID,
		Index: index, Leaf: bu.Leaf, RequestSalt: bu.RequestSalt, ResponseSalt: bu.ResponseSalt,
		Signature: bu.Signature, Checkpoint: cp, InclusionProof: proof,
	}
	// The receipt's own bounds (sizes of leaf, salts, signature, proof).
	again, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	if _, err := ParseReceipt(again); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	return r, nil
}

// parseTlogProof reads a c2sp.org/tlog-proof@v1: header, optional extra
// line (ignored: unauthenticated, and custody writes none), "index N",
// zero or more base64 hashes, an empty line, then the checkpoint verbatim.
func parseTlogProof(s string) (uint64, [][]byte, string, error) {
	rest, ok := strings.CutPrefix(s, tlogProofHeader+"\n")
	if !ok {
		return 0, nil, "", errors.New("not a " + tlogProofHeader)
	}
	line := func() (string, bool) {
		l, r, ok := strings.Cut(rest, "\n")
		rest = r
		return l, ok
	}
	l, ok := line()
	if strings.HasPrefix(l, "extra ") {
		if _, err := base64.StdEncoding.DecodeString(l[len("extra "):]); err != nil {
			return 0, nil, "", errors.New("extra line is not base64")
		}
		l, ok = line()
	}
	is, found := strings.CutPrefix(l, "index ")
	if !ok || !found {
		return 0, nil, "", errors.New("no index line")
	}
	index, err := strconv.ParseUint(is, 10, 64)
	if err != nil || strconv.FormatUint(index, 10) != is {
		return 0, nil, "", fmt.Errorf("index %q", is)
	}
	var proof [][]byte
	for {
		l, ok = line()
		if !ok {
			return 0, nil, "", errors.New("no checkpoint")
		}
		if l == "" {
			break
		}
		if len(proof) == maxProofLen {
			return 0, nil, "", errors.New("inclusion proof too long")
		}
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != 32 {
			return 0, nil, "", fmt.Errorf("inclusion proof line %d is not a base64 SHA-256 hash", len(proof)+1)
		}
		proof = append(proof, h)
	}
	if rest == "" {
		return 0, nil, "", errors.New("no checkpoint")
	}
	return index, proof, rest, nil
}

// Prove returns a copy of r with the log's current checkpoint and the
// leaf's inclusion proof under it, built from the log's tiles, once the
// log holds the leaf (else ErrNotIntegrated). The caller verifies it.
func Prove(ctx context.Context, src LogSource, verifier note.Verifier, r *Receipt) (*Receipt, error) {
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, err := readCheckpoint(ctx, constSource{src, raw}, verifier)
	if err != nil {
		return nil, err
	}
	if r.Index >= cp.Size {
		return nil, fmt.Errorf("%w: the log (size %d) does not contain index %d yet", ErrNotIntegrated, cp.Size, r.Index)
	}
	incl, err := newProofs(src, cp.Size).inclusion(ctx, r.Index)
	if err != nil {
		return nil, err
	}
	c := *r
	c.Checkpoint, c.InclusionProof = string(raw), incl
	return &c, nil
}
