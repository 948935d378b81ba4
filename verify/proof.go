package verify

import (
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api/layout"
)

// proofs builds inclusion and consistency proofs for a tree of size
// leaves from the tiles of a log, so that a verifier needs nothing from
// the log but its public files. It trusts no hash it reads: the proofs it
// builds are checked against a signed root by the caller.
//
// A proof node at tree level L is a perfect subtree; tiles store the
// nodes of every eighth level, so the node is the root of the 2^(L%8)
// consecutive hashes of one tile at tile level L/8, recomputed here.
type proofs struct {
	src   LogSource
	size  uint64
	tiles map[[2]uint64][]byte // (tile level, tile index) -> tile, as read
}

func newProofs(src LogSource, size uint64) *proofs {
	return &proofs{src: src, size: size, tiles: map[[2]uint64][]byte{}}
}

// inclusion is the inclusion proof of the leaf at index.
func (p *proofs) inclusion(ctx context.Context, index uint64) ([][]byte, error) {
	nodes, err := proof.Inclusion(index, p.size)
	if err != nil {
		return nil, err
	}
	return p.hashes(ctx, nodes)
}

// consistency is the proof that the tree of size smaller is a prefix of
// this one.
func (p *proofs) consistency(ctx context.Context, smaller uint64) ([][]byte, error) {
	nodes, err := proof.Consistency(smaller, p.size)
	if err != nil {
		return nil, err
	}
	return p.hashes(ctx, nodes)
}

func (p *proofs) hashes(ctx context.Context, nodes proof.Nodes) ([][]byte, error) {
	hs := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		h, err := p.node(ctx, id)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return nodes.Rehash(hs, rfc6962.DefaultHasher.HashChildren)
}

// node is the hash of the perfect subtree id, from its tile. proof.Inclusion
// and proof.Consistency name only nodes inside the tree, so the tile
// exists; a log that serves it short is refused.
func (p *proofs) node(ctx context.Context, id compact.NodeID) ([]byte, error) {
	tileLevel, height := uint64(id.Level/layout.TileHeight), id.Level%layout.TileHeight
	first := id.Index << height // in the tile row's own numbering
	tileIndex, off := first/layout.TileWidth, first%layout.TileWidth
	tile, err := p.tile(ctx, tileLevel, tileIndex)
	if err != nil {
		return nil, err
	}
	n := uint64(1) << height
	if uint64(len(tile)) < (off+n)*32 {
		return nil, invalid("tile %d/%d is short", tileLevel, tileIndex)
	}
	row := make([][]byte, n)
	for i := range row {
		row[i] = tile[(off+uint64(i))*32 : (off+uint64(i)+1)*32]
	}
	for len(row) > 1 {
		for i := range len(row) / 2 {
			row[i] = rfc6962.DefaultHasher.HashChildren(row[2*i], row[2*i+1])
		}
		row = row[:len(row)/2]
	}
	return row[0], nil
}

func (p *proofs) tile(ctx context.Context, level, index uint64) ([]byte, error) {
	key := [2]uint64{level, index}
	if t, ok := p.tiles[key]; ok {
		return t, nil
	}
	t, err := p.src.ReadTile(ctx, level, index, layout.PartialTileSize(level, index, p.size))
	if err != nil {
		return nil, fmt.Errorf("reading tile %d/%d: %w", level, index, err)
	}
	p.tiles[key] = t
	return t, nil
}
