package ledger

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
)

// Receipt rebuilds the receipt of the leaf at index, which must be the
// leaf of requestID (else an error wrapping custody.ErrNotFound). Once a
// published checkpoint covers the leaf, the receipt carries it and the
// inclusion proof.
func (l *Log) Receipt(ctx context.Context, index uint64, requestID string) (*verify.Receipt, error) {
	// Pending first: the resolver marks a leaf integrated before it drops
	// it from pending, so a leaf missing from pending is in the log (or
	// does not exist).
	l.pmu.Lock()
	leaf := l.pending[index]
	l.pmu.Unlock()
	if leaf == nil && index < l.integrated.Load() {
		var err error
		if leaf, err = l.readLeaf(ctx, index); err != nil {
			return nil, err
		}
	}
	if leaf == nil {
		return nil, custody.Errorf(custody.CodeNotFound, "no receipt for this request")
	}
	tx, err := verify.DecodeLeaf(leaf)
	if err != nil || tx.ID != requestID {
		return nil, custody.Errorf(custody.CodeNotFound, "no receipt for this request")
	}
	r, err := l.receipt(index, requestID, leaf)
	if err != nil {
		return nil, err
	}
	cpRaw, err := l.reader.ReadCheckpoint(ctx)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, nil
		}
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, _, _, err := log.ParseCheckpoint(cpRaw, l.origin, l.keys.verifier)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	if cp.Size <= index {
		return r, nil
	}
	pb, err := client.NewProofBuilder(ctx, cp.Size, l.reader.ReadTile)
	if err != nil {
		return nil, fmt.Errorf("building inclusion proof: %w", err)
	}
	proof, err := pb.InclusionProof(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("building inclusion proof: %w", err)
	}
	r.Checkpoint, r.InclusionProof = string(cpRaw), proof
	r.Cosigned = l.wit != nil && l.wit.cosigned(cpRaw, l.keys.verifier)
	// The rules it was decided under, provable under the same checkpoint.
	if c := tx.ConfigLeaf; c != nil && *c < cp.Size {
		rules, err := l.readLeaf(ctx, *c)
		if err != nil {
			return nil, err
		}
		rp, err := pb.InclusionProof(ctx, *c)
		if err != nil {
			return nil, fmt.Errorf("building the rules' inclusion proof: %w", err)
		}
		r.Rules, r.RulesProof = rules, rp
	}
	return r, nil
}

// readLeaf reads one integrated leaf from its entry bundle.
func (l *Log) readLeaf(ctx context.Context, index uint64) ([]byte, error) {
	// The partial bundle on disk has the width of tessera's tree size, which
	// may be ahead of l.integrated (resolved leaf by leaf, mid-batch).
	size, err := l.reader.IntegratedSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading log size: %w", err)
	}
	eb, err := readBundle(ctx, l.reader, index, size)
	if err != nil {
		return nil, err
	}
	return entryAt(eb, index)
}

// readBundle reads and parses the entry bundle holding leaf index, of the
// width a log of size has written it.
func readBundle(ctx context.Context, r tessera.LogReader, index, size uint64) (*api.EntryBundle, error) {
	n := index / layout.EntryBundleWidth
	b, err := r.ReadEntryBundle(ctx, n, layout.PartialTileSize(0, n, size))
	if err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	eb := &api.EntryBundle{}
	if err := eb.UnmarshalText(b); err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	return eb, nil
}

// entryAt is leaf index in eb, its entry bundle.
func entryAt(eb *api.EntryBundle, index uint64) ([]byte, error) {
	i := int(index % layout.EntryBundleWidth)
	if i >= len(eb.Entries) {
		return nil, fmt.Errorf("entry bundle for %d has %d entries", index, len(eb.Entries))
	}
	return eb.Entries[i], nil
}

// Entry is one leaf of the log.
type Entry struct {
	Index uint64
	Leaf  []byte
}

// Entries iterates over the leaves in the log from index from on (as of
// the call), for rebuilding an index after a crash: after Open, that is
// every leaf ever acknowledged. An error ends the iteration.
func (l *Log) Entries(ctx context.Context, from uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		size, err := l.reader.IntegratedSize(ctx)
		if err != nil {
			yield(Entry{}, fmt.Errorf("reading log size: %w", err))
			return
		}
		for ri := range layout.Range(from, size-min(from, size), size) {
			b, err := l.reader.ReadEntryBundle(ctx, ri.Index, ri.Partial)
			if err != nil {
				yield(Entry{}, fmt.Errorf("reading entry bundle %d: %w", ri.Index, err))
				return
			}
			var eb api.EntryBundle
			if err := eb.UnmarshalText(b); err != nil {
				yield(Entry{}, fmt.Errorf("reading entry bundle %d: %w", ri.Index, err))
				return
			}
			if uint(len(eb.Entries)) < ri.First+ri.N {
				yield(Entry{}, fmt.Errorf("entry bundle %d is short", ri.Index))
				return
			}
			for i := ri.First; i < ri.First+ri.N; i++ {
				if !yield(Entry{Index: ri.Index*layout.EntryBundleWidth + uint64(i), Leaf: eb.Entries[i]}, nil) {
					return
				}
			}
		}
	}
}
