package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

// ConfigRecord is what AppendConfig logs about the rules in force (see
// verify.ConfigLeaf): the caller computes the digest of the effective
// config without secrets and the policies' canonical JSON.
type ConfigRecord struct {
	Reason   string // "start", "reload", ...
	Version  string
	Digest   string
	Policies json.RawMessage
}

// AppendConfig appends a config leaf naming the previous one, waits until
// it is durable, and makes it the config leaf that every transaction
// leaf appended from then on names. Config leaves are appended one at a
// time. A transaction appended concurrently may still name the previous
// config leaf; it never names a later one.
func (l *Log) AppendConfig(ctx context.Context, rec ConfigRecord) (uint64, error) {
	l.cfgMu.Lock()
	defer l.cfgMu.Unlock()
	if p := l.failed.Load(); p != nil {
		return 0, custody.Wrap(custody.CodeLedgerUnavailable, *p, "the ledger cannot record the config")
	}
	leaf, err := verify.EncodeConfigLeaf(verify.ConfigLeaf{Reason: rec.Reason, Version: rec.Version, Digest: rec.Digest,
		Policies: rec.Policies, Previous: l.configLeaf.Load()}, time.Now())
	if err != nil {
		return 0, err
	}
	idx, c, err := l.j.append(leaf, uint64(l.cfg.MaxBacklog))
	if err != nil {
		return 0, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot record the config")
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return 0, custody.Wrap(custody.CodeLedgerUnavailable, ctx.Err(), "the ledger did not confirm the config leaf in time")
	}
	if c.err != nil {
		return 0, custody.Wrap(custody.CodeLedgerUnavailable, c.err, "the ledger cannot record the config")
	}
	l.configLeaf.Store(int64(idx))
	return idx, nil
}

// ConfigLeaf is the index of the config leaf in force, -1 if none.
func (l *Log) ConfigLeaf() int64 { return l.configLeaf.Load() }

// ReadConfigLeaf reads and decodes the config leaf at index from the log
// (or the journal, if not integrated yet).
func (l *Log) ReadConfigLeaf(ctx context.Context, index uint64) (*verify.ConfigLeaf, error) {
	leaf, err := l.leafAt(ctx, index)
	if err != nil {
		return nil, err
	}
	return verify.DecodeConfigLeaf(leaf)
}

// leafAt is the leaf at index, pending or integrated.
func (l *Log) leafAt(ctx context.Context, index uint64) ([]byte, error) {
	l.pmu.Lock()
	leaf := l.pending[index]
	l.pmu.Unlock()
	if leaf != nil {
		return leaf, nil
	}
	if index >= l.integrated.Load() {
		return nil, custody.Errorf(custody.CodeNotFound, "no leaf %d", index)
	}
	return l.readLeaf(ctx, index)
}

// lastConfigLeaf finds the config leaf in force in a log of size leaves
// from its last leaf alone: a config leaf is its own, a version 2
// transaction leaf names it. -1 if none.
func (l *Log) lastConfigLeaf(ctx context.Context, size uint64) (int64, error) {
	if size == 0 {
		return -1, nil
	}
	leaf, err := l.readLeaf(ctx, size-1)
	if err != nil {
		return 0, fmt.Errorf("reading the last leaf: %w", err)
	}
	if verify.IsConfigLeaf(leaf) {
		return int64(size - 1), nil
	}
	tx, err := verify.DecodeLeaf(leaf)
	if err != nil || tx.ConfigLeaf == nil {
		return -1, nil
	}
	return int64(*tx.ConfigLeaf), nil
}
