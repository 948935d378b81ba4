package console

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

// VerifyFunc checks a receipt (its JSON) and, when not nil, the request
// and response bytes against its commitments. An error means the receipt
// could not be read at all; each check's result is a Step of the Report.
type VerifyFunc func(ctx context.Context, receipt, request, response []byte) (*Report, error)

// Report is what a receipt check found.
type Report struct {
	RequestID string
	Origin    string
	KeyID     string
	Index     uint64
	// Leaf is the transaction the receipt commits to (commitments only:
	// a leaf holds no prompt or response text).
	Leaf  *custody.Transaction
	Steps []Step
}

// Step is one check of a receipt.
type Step struct {
	Name   string
	OK     bool
	Detail string
}

// OK reports whether every step passed.
func (r *Report) OK() bool {
	for _, s := range r.Steps {
		if !s.OK {
			return false
		}
	}
	return len(r.Steps) > 0
}

// LedgerVerifier checks receipts with verify.VerifyReceipt under the
// pinned verifier key, and proves inclusion from src when it is not nil
// (the replica's own log: verify.OpenSource of its ledger directory or
// of its /log/ URL).
func LedgerVerifier(src verify.LogSource, verifier note.Verifier) VerifyFunc {
	return func(ctx context.Context, receipt, request, response []byte) (*Report, error) {
		r, err := verify.ParseReceipt(receipt)
		if err != nil {
			return nil, fmt.Errorf("not a custody receipt: %w", err)
		}
		rep := &Report{RequestID: r.RequestID, Origin: r.Origin, KeyID: r.KeyID, Index: r.Index}
		if tx, err := verify.DecodeLeaf(r.Leaf); err == nil {
			rep.Leaf = tx
		}
		step := func(name, okDetail string, src verify.LogSource, req, resp []byte) {
			err := verify.VerifyReceipt(ctx, src, verifier, r, req, resp)
			s := Step{Name: name, OK: err == nil, Detail: okDetail}
			switch {
			case err == nil:
			case errors.Is(err, verify.ErrInvalid):
				s.Detail = err.Error()
			default:
				s.Detail = "the log could not be read: " + err.Error()
			}
			rep.Steps = append(rep.Steps, s)
		}
		proof := "no inclusion proof in the receipt yet"
		if r.Checkpoint != "" {
			proof = "and its inclusion proof under the receipt's checkpoint"
		}
		step("signature", "the leaf is signed by "+r.KeyID+", "+proof, nil, nil, nil)
		if request != nil {
			step("request bytes", "they open the leaf's request commitment", nil, request, nil)
		}
		if response != nil {
			step("response bytes", "they open the leaf's response commitment", nil, nil, response)
		}
		if src != nil {
			step("in the log", fmt.Sprintf("leaf %d is in the log under its current signed checkpoint", r.Index), src, nil, nil)
		}
		return rep, nil
	}
}
