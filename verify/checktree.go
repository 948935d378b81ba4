package verify

import (
	"context"

	"github.com/transparency-dev/merkle/rfc6962"
)

// CheckTree recomputes the tree of the first size leaves of src from its
// entry bundles, as Audit does, checking every tile against the hashes
// recomputed from the leaves (and the chain of config leaves), and returns
// the root of that tree and the root of its first at leaves (at <= size).
// No checkpoint is read: the caller compares the roots with the ones it
// trusts. The ledger runs it on start, before it signs anything.
// Refusals wrap ErrInvalid.
func CheckTree(ctx context.Context, src LogSource, size, at uint64) (root, rootAt []byte, err error) {
	if at > size {
		return nil, nil, invalid("the tree holds %d leaves, fewer than %d", size, at)
	}
	a := newAuditor(src, size)
	a.prefix, a.record = at, true
	if err := a.run(ctx); err != nil {
		return nil, nil, err
	}
	if root, err = a.rng.GetRootHash(nil); err != nil {
		return nil, nil, err
	}
	empty := rfc6962.DefaultHasher.EmptyRoot()
	if size == 0 {
		root = empty
	}
	rootAt = a.prefixGot
	if at == 0 {
		rootAt = empty
	}
	return root, rootAt, nil
}
