package ledger

import (
	"context"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

// Append records tx and returns its receipt once the leaf is durable: a
// crash after Append returns cannot lose it. tx.Tenant is the tenant id;
// the leaf holds its pseudonym. tx is not modified. Any failure wraps
// custody.ErrLedgerUnavailable.
func (l *Log) Append(ctx context.Context, tx *custody.Transaction) (*verify.Receipt, error) {
	idx, leaf, wait, err := l.appendLeaf(tx)
	if err != nil {
		return nil, err
	}
	// Sign while the fsync is under way.
	r, err := l.receipt(idx, tx.ID, leaf)
	if err != nil {
		return nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot sign the receipt")
	}
	if err := wait(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// AppendIndex is Append without the receipt: it returns the leaf's index
// once the leaf is durable. The gateway uses it on the request path and
// builds receipts when they are asked for (Receipt), so that the Ed25519
// signature, the costliest step of an append, is paid only for receipts
// someone reads.
func (l *Log) AppendIndex(ctx context.Context, tx *custody.Transaction) (uint64, error) {
	idx, _, wait, err := l.appendLeaf(tx)
	if err != nil {
		return 0, err
	}
	return idx, wait(ctx)
}

// appendLeaf journals tx's leaf; wait blocks until the leaf is durable.
func (l *Log) appendLeaf(tx *custody.Transaction) (idx uint64, leaf []byte, wait func(context.Context) error, err error) {
	if p := l.failed.Load(); p != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, *p, "the ledger cannot record the transaction")
	}
	t := *tx
	t.Tenant = l.Pseudonym(tx.Tenant)
	if cl := l.configLeaf.Load(); cl >= 0 && t.ConfigLeaf == nil {
		c := uint64(cl)
		t.ConfigLeaf = &c
	}
	leaf, err = verify.EncodeLeaf(&t)
	if err != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot record the transaction")
	}
	idx, c, err := l.j.append(leaf, uint64(l.cfg.MaxBacklog))
	if err != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot record the transaction")
	}
	return idx, leaf, func(ctx context.Context) error {
		select {
		case <-c.done:
		case <-ctx.Done():
			return custody.Wrap(custody.CodeLedgerUnavailable, ctx.Err(), "the ledger did not confirm the transaction in time")
		}
		if c.err != nil {
			return custody.Wrap(custody.CodeLedgerUnavailable, c.err, "the ledger cannot record the transaction")
		}
		return nil
	}, nil
}

// receipt builds the receipt of leaf at idx without any proof.
func (l *Log) receipt(idx uint64, requestID string, leaf []byte) (*verify.Receipt, error) {
	sig, err := l.keys.signer.Sign(verify.SignedMessage(leaf))
	if err != nil {
		return nil, err
	}
	req, resp := l.Salts(requestID)
	return &verify.Receipt{
		V: verify.ReceiptVersion, RequestID: requestID, Origin: l.origin,
		KeyID: verify.KeyID(l.keys.verifier),
		Index: idx, Leaf: leaf, RequestSalt: req[:], ResponseSalt: resp[:], Signature: sig,
	}, nil
}
