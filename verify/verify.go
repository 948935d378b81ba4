package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
)

// ErrInvalid is wrapped by every reason VerifyReceipt and Audit refuse
// what they were given (as opposed to failing to read it).
var ErrInvalid = errors.New("invalid")

// ErrNotIntegrated is what VerifyReceipt returns for a receipt whose
// signature (and commitments) are valid but whose leaf the log's
// published checkpoint does not cover yet: the promise without the
// evidence, which comes within about ledger.batch_max_age plus one
// checkpoint interval. It does not wrap ErrInvalid: retry later
// (`custody verify --wait`), the receipt may be fine.
var ErrNotIntegrated = errors.New("not yet integrated")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// receiptLine starts the SSE comment custody writes at the end of a
// stream; the response commitment covers the bytes before it.
var receiptLine = []byte(": custody-receipt ")

// StripReceiptLine returns body up to (not including) the line
// ": custody-receipt <id>", if there is one: the bytes a stream's response
// commitment covers.
func StripReceiptLine(body []byte) []byte {
	if bytes.HasPrefix(body, receiptLine) {
		return body[:0]
	}
	for off := 0; ; {
		i := bytes.Index(body[off:], receiptLine)
		if i < 0 {
			return body
		}
		if body[off+i-1] == '\n' {
			return body[:off+i]
		}
		off += i + 1
	}
}

// VerifyReceipt checks a receipt with the pinned verifier key:
//   - the signature over the leaf, and that the leaf is the request's;
//   - that request and response (each if non-nil) open the leaf's
//     commitments (a stream's response from its receipt line on is
//     ignored);
//   - the receipt's own checkpoint and inclusion proof, if it has them;
//   - if src is not nil, the leaf's inclusion under the log's current
//     signed checkpoint, proven from its tiles, the consistency of the
//     receipt's checkpoint with it, and the leaf's entry bundle against
//     its tile.
//
// Refusals wrap ErrInvalid; failures to read the log do not. A valid
// receipt the log does not hold yet is ErrNotIntegrated.
func VerifyReceipt(ctx context.Context, src LogSource, verifier note.Verifier, r *Receipt, request, response []byte) error {
	_, err := VerifyReceiptWith(ctx, src, verifier, Options{}, r, request, response)
	return err
}

// Options are what VerifyReceiptWith checks beyond VerifyReceipt.
type Options struct {
	// Witnesses, if its Quorum is positive, must have cosigned the
	// receipt's checkpoint and, with a log source, the log's checkpoint.
	Witnesses WitnessPolicy
}

// Result is what a successful VerifyReceiptWith found.
type Result struct {
	// Transaction is the decoded leaf (Tenant is the pseudonym).
	Transaction *custody.Transaction
	// Cosigners are the pinned witnesses that cosigned the checkpoint the
	// leaf was proven under (the log's, with a source; else the receipt's).
	Cosigners []string
}

// VerifyReceiptWith is VerifyReceipt with witness cosignatures: a
// checkpoint short of opts.Witnesses' quorum is refused (ErrInvalid); a
// receipt with no checkpoint of its own and no src cannot be checked
// against witnesses and is ErrNotIntegrated.
func VerifyReceiptWith(ctx context.Context, src LogSource, verifier note.Verifier, opts Options, r *Receipt, request, response []byte) (*Result, error) {
	res := &Result{}
	err := verifyReceipt(ctx, src, verifier, opts, r, request, response, res)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func verifyReceipt(ctx context.Context, src LogSource, verifier note.Verifier, opts Options, r *Receipt, request, response []byte, res *Result) error {
	if r.Origin != verifier.Name() {
		return invalid("receipt is for log %q, the key is for %q", r.Origin, verifier.Name())
	}
	if r.KeyID != KeyID(verifier) {
		return invalid("receipt names key %s, the pinned key is %s", r.KeyID, KeyID(verifier))
	}
	if !verifier.Verify(SignedMessage(r.Leaf), r.Signature) {
		return invalid("bad signature on the leaf")
	}
	tx, err := DecodeLeaf(r.Leaf)
	if err != nil {
		return invalid("leaf: %v", err)
	}
	res.Transaction = tx
	if tx.ID != r.RequestID {
		return invalid("leaf is for request %q, receipt for %q", tx.ID, r.RequestID)
	}
	if request != nil {
		if len(tx.RequestCommitment) == 0 {
			return invalid("the leaf commits to no request bytes")
		}
		if !bytes.Equal(Commit([32]byte(r.RequestSalt), request), tx.RequestCommitment) {
			return invalid("the request bytes do not open the request commitment")
		}
	}
	if response != nil {
		if len(tx.ResponseCommitment) == 0 {
			return invalid("the leaf commits to no response bytes")
		}
		if !bytes.Equal(Commit([32]byte(r.ResponseSalt), StripReceiptLine(response)), tx.ResponseCommitment) {
			return invalid("the response bytes do not open the response commitment")
		}
	}
	leafHash := rfc6962.DefaultHasher.HashLeaf(r.Leaf)
	var rcp *log.Checkpoint
	if r.Checkpoint != "" {
		rcp, _, _, err = log.ParseCheckpoint([]byte(r.Checkpoint), verifier.Name(), verifier)
		if err != nil {
			return invalid("receipt checkpoint: %v", err)
		}
		if r.Index >= rcp.Size {
			return invalid("receipt checkpoint (size %d) does not cover index %d", rcp.Size, r.Index)
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, rcp.Size, leafHash, r.InclusionProof, rcp.Hash); err != nil {
			return invalid("receipt inclusion proof: %v", err)
		}
		if res.Cosigners, err = opts.Witnesses.Check([]byte(r.Checkpoint), verifier); err != nil {
			return fmt.Errorf("receipt %w", err)
		}
	}
	if src == nil {
		if rcp == nil && opts.Witnesses.Quorum > 0 {
			return fmt.Errorf("%w: the receipt has no checkpoint for the witnesses to have cosigned", ErrNotIntegrated)
		}
		return nil
	}
	cpRaw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, err := readCheckpoint(ctx, constSource{src, cpRaw}, verifier)
	if err != nil {
		return err
	}
	if res.Cosigners, err = opts.Witnesses.Check(cpRaw, verifier); err != nil {
		return fmt.Errorf("the log's %w", err)
	}
	if r.Index >= cp.Size {
		return fmt.Errorf("%w: the log (size %d) does not contain index %d yet", ErrNotIntegrated, cp.Size, r.Index)
	}
	pb := newProofs(src, cp.Size)
	incl, err := pb.inclusion(ctx, r.Index)
	if err != nil {
		return err
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, cp.Size, leafHash, incl, cp.Hash); err != nil {
		return invalid("the leaf is not in the log: %v", err)
	}
	if rcp != nil {
		if rcp.Size > cp.Size {
			return invalid("the log (size %d) is smaller than the receipt's checkpoint (size %d)", cp.Size, rcp.Size)
		}
		cons, err := pb.consistency(ctx, rcp.Size)
		if err != nil {
			return err
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, rcp.Size, cp.Size, cons, rcp.Hash, cp.Hash); err != nil {
			return invalid("the log is not consistent with the receipt's checkpoint: %v", err)
		}
	}
	return checkBundle(ctx, src, r.Index, cp.Size, r.Leaf)
}

// readCheckpoint fetches and verifies the log's checkpoint.
func readCheckpoint(ctx context.Context, src LogSource, verifier note.Verifier) (*log.Checkpoint, error) {
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, _, _, err := log.ParseCheckpoint(raw, verifier.Name(), verifier)
	if err != nil {
		return nil, invalid("checkpoint: %v", err)
	}
	return cp, nil
}

// checkBundle checks that the entry bundle holding index has leaf there,
// and that every entry of the bundle hashes to its leaf hash in the level
// 0 tile (whose other hashes the inclusion proof has bound to the root).
func checkBundle(ctx context.Context, src LogSource, index, size uint64, leaf []byte) error {
	bi := index / layout.EntryBundleWidth
	p := layout.PartialTileSize(0, bi, size)
	raw, err := src.ReadEntryBundle(ctx, bi, p)
	if err != nil {
		return fmt.Errorf("reading entry bundle: %w", err)
	}
	var eb api.EntryBundle
	if err := eb.UnmarshalText(raw); err != nil {
		return invalid("entry bundle %d: %v", bi, err)
	}
	want := int(p)
	if p == 0 {
		want = layout.EntryBundleWidth
	}
	if len(eb.Entries) < want {
		return invalid("entry bundle %d has %d entries, want %d", bi, len(eb.Entries), want)
	}
	if !bytes.Equal(eb.Entries[index%layout.EntryBundleWidth], leaf) {
		return invalid("entry bundle %d does not hold the leaf at %d", bi, index)
	}
	tile, err := src.ReadTile(ctx, 0, bi, p)
	if err != nil {
		return fmt.Errorf("reading tile: %w", err)
	}
	if len(tile) < want*32 {
		return invalid("tile 0/%d is short", bi)
	}
	for i := range want {
		if !bytes.Equal(rfc6962.DefaultHasher.HashLeaf(eb.Entries[i]), tile[i*32:(i+1)*32]) {
			return invalid("entry %d of bundle %d does not match its tile", i, bi)
		}
	}
	return nil
}
