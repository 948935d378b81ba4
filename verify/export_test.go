package verify

import "context"

// Proofs exposes the tile proof builder to package verify_test, whose
// logs come from the ledger engine.
func Proofs(src LogSource, size uint64) (inclusion func(context.Context, uint64) ([][]byte, error), consistency func(context.Context, uint64) ([][]byte, error)) {
	p := newProofs(src, size)
	return p.inclusion, p.consistency
}
