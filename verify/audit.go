package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"io/fs"
	"os"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
)

// AuditReport is what a clean audit found.
type AuditReport struct {
	Origin string
	// Size and Root are the audited checkpoint's tree.
	Size uint64
	Root []byte
	// PreviousSize is the size remembered from the last audit (0 if none)
	// whose root the log's first PreviousSize leaves still hash to.
	PreviousSize uint64
	// ConfigLeaves is how many config leaves the log holds (each naming
	// the one before it), LastConfigLeaf the index of the last (-1: none).
	ConfigLeaves   int
	LastConfigLeaf int64
	// Cosigners are the pinned witnesses that cosigned the checkpoint.
	Cosigners []string
	Duration  time.Duration
}

// auditState is the --state file: the last checkpoint an audit found
// clean.
type auditState struct {
	Origin     string `json:"origin"`
	KeyID      string `json:"key_id"`
	Size       uint64 `json:"size"`
	Root       []byte `json:"root"`
	Checkpoint string `json:"checkpoint"`
}

// leafPrefix is the RFC 6962 leaf hash prefix, as an array so that
// hashing a leaf allocates nothing.
var leafPrefix = [1]byte{rfc6962.RFC6962LeafHashPrefix}

// auditPrefetch is how many entry bundles are read ahead of the hashing.
const auditPrefetch = 8

// Audit checks a whole log from its public files: the checkpoint's
// signature; every leaf hashed into the checkpoint's root; every hash in
// every tile equal to the one recomputed from the leaves; and, if
// statePath names a state from an earlier audit, that the first
// PreviousSize leaves still hash to the root remembered there (history was
// not rewritten). A clean audit then records the checkpoint in statePath.
// Refusals wrap ErrInvalid.
//
// Bundles are read sequentially (a few ahead) and hashed without a
// per-leaf allocation: each full bundle is reduced to its subtree root in
// place and merged into a compact range.
func Audit(ctx context.Context, src LogSource, verifier note.Verifier, statePath string) (*AuditReport, error) {
	return AuditWith(ctx, src, verifier, Options{}, statePath)
}

// AuditWith is Audit that also requires opts.Witnesses' quorum of
// cosignatures on the audited checkpoint.
func AuditWith(ctx context.Context, src LogSource, verifier note.Verifier, opts Options, statePath string) (*AuditReport, error) {
	start := time.Now()
	cpRaw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, err := readCheckpoint(ctx, constSource{src, cpRaw}, verifier)
	if err != nil {
		return nil, err
	}
	cosigners, err := opts.Witnesses.Check(cpRaw, verifier)
	if err != nil {
		return nil, fmt.Errorf("the log's %w", err)
	}
	var prev *auditState
	if statePath != "" {
		if prev, err = readAuditState(statePath); err != nil {
			return nil, err
		}
	}
	if prev != nil {
		if prev.Origin != cp.Origin {
			return nil, fmt.Errorf("state %s is for log %q, not %q", statePath, prev.Origin, cp.Origin)
		}
		if prev.KeyID != KeyID(verifier) {
			return nil, invalid("the log was audited with key %s, now %s", prev.KeyID, KeyID(verifier))
		}
		if prev.Size > cp.Size {
			return nil, invalid("the log shrank from %d leaves (last audit) to %d", prev.Size, cp.Size)
		}
	}
	a := newAuditor(src, cp.Size)
	if prev != nil {
		a.prefix, a.prefixRoot = prev.Size, prev.Root
	}
	if err := a.run(ctx); err != nil {
		return nil, err
	}
	root, err := a.rng.GetRootHash(nil)
	if err != nil {
		return nil, err
	}
	if cp.Size == 0 {
		root = rfc6962.DefaultHasher.EmptyRoot()
	}
	if !bytes.Equal(root, cp.Hash) {
		return nil, invalid("the leaves hash to %x, the checkpoint says %x", root, cp.Hash)
	}
	rep := &AuditReport{Origin: cp.Origin, Size: cp.Size, Root: cp.Hash, ConfigLeaves: a.chain.count, LastConfigLeaf: a.chain.last, Cosigners: cosigners, Duration: time.Since(start)}
	if prev != nil {
		rep.PreviousSize = prev.Size
	}
	if statePath != "" {
		b, err := json.MarshalIndent(auditState{Origin: cp.Origin, KeyID: KeyID(verifier), Size: cp.Size, Root: cp.Hash, Checkpoint: string(cpRaw)}, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := writeState(statePath, append(b, '\n')); err != nil {
			return nil, fmt.Errorf("saving audit state: %w", err)
		}
	}
	return rep, nil
}

// constSource answers ReadCheckpoint with the checkpoint already read, so
// that the one verified is the one audited.
type constSource struct {
	LogSource
	cp []byte
}

func (c constSource) ReadCheckpoint(context.Context) ([]byte, error) { return c.cp, nil }

// writeState replaces path with data durably (internal/durable): a crash
// leaves the old state or the new, never a torn one.
func writeState(path string, data []byte) error { return durable.WriteFile(path, data, 0o600) }

func readAuditState(path string) (*auditState, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading audit state: %w", err)
	}
	var s auditState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("reading audit state %s: %w", path, err)
	}
	if len(s.Root) != 32 {
		return nil, fmt.Errorf("reading audit state %s: root of %d bytes", path, len(s.Root))
	}
	return &s, nil
}

// auditor holds one audit's working state; one goroutine uses it.
type auditor struct {
	src  LogSource
	size uint64
	rf   *compact.RangeFactory
	rng  *compact.Range
	h    interface {
		Reset()
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	prefix     uint64 // check the root at this size against prefixRoot
	prefixRoot []byte
	// record: only record the root at prefix in prefixGot (CheckTree).
	record    bool
	prefixGot []byte
	hashes    [layout.EntryBundleWidth * 32]byte // leaf hashes of the current bundle
	// levels[L] collects the hashes at tree level 8L of tile row L, to be
	// compared with the stored tile when it fills (L >= 1).
	levels   [][]byte
	levelIdx []uint64
	err      error
	chain    *configChain
}

func newAuditor(src LogSource, size uint64) *auditor {
	a := &auditor{src: src, size: size, h: sha256.New(), chain: newConfigChain()}
	a.rf = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	a.rng = a.rf.NewEmptyRange(0)
	return a
}

type fetched struct {
	bundle, tile []byte
	err          error
}

func (a *auditor) run(ctx context.Context) error {
	n := (a.size + layout.EntryBundleWidth - 1) / layout.EntryBundleWidth
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make(chan chan fetched, auditPrefetch)
	go func() {
		defer close(order)
		for i := range n {
			ch := make(chan fetched, 1)
			select {
			case order <- ch:
			case <-ctx.Done():
				return
			}
			go func() {
				p := layout.PartialTileSize(0, i, a.size)
				var f fetched
				if f.bundle, f.err = a.src.ReadEntryBundle(ctx, i, p); f.err == nil {
					f.tile, f.err = a.src.ReadTile(ctx, 0, i, p)
				}
				ch <- f
			}()
		}
	}()
	var i uint64
	for ch := range order {
		f := <-ch
		if f.err != nil {
			return fmt.Errorf("reading bundle %d: %w", i, f.err)
		}
		if err := a.bundle(i, f.bundle, f.tile); err != nil {
			return err
		}
		if a.err != nil {
			return a.err
		}
		i++
	}
	if i != n {
		return ctx.Err()
	}
	if a.prefix == a.size {
		if err := a.checkPrefix(); err != nil {
			return err
		}
	}
	return a.flushLevels(ctx)
}

// bundle hashes the entries of bundle bi into the range.
func (a *auditor) bundle(bi uint64, raw, tile []byte) error {
	first := bi * layout.EntryBundleWidth
	want := int(min(a.size-first, layout.EntryBundleWidth))
	count := 0
	for off := 0; off < len(raw) && count < want; count++ {
		if off+2 > len(raw) {
			return invalid("entry bundle %d: truncated", bi)
		}
		l := int(binary.BigEndian.Uint16(raw[off:]))
		off += 2
		if off+l > len(raw) {
			return invalid("entry bundle %d: truncated", bi)
		}
		if err := a.chain.leaf(first+uint64(count), raw[off:off+l]); err != nil {
			return err
		}
		a.h.Reset()
		a.h.Write(leafPrefix[:])
		a.h.Write(raw[off : off+l])
		a.h.Sum(a.hashes[count*32 : count*32])
		off += l
	}
	if count < want {
		return invalid("entry bundle %d has %d entries, want %d", bi, count, want)
	}
	if len(tile) < want*32 || !bytes.Equal(tile[:want*32], a.hashes[:want*32]) {
		return invalid("tile 0/%d does not match the hashes of entry bundle %d", bi, bi)
	}
	end := first + uint64(want)
	if want == layout.EntryBundleWidth && (a.prefix <= first || a.prefix >= end) {
		if a.prefix == first {
			if err := a.checkPrefix(); err != nil {
				return err
			}
		}
		root := a.subtreeRoot()
		a.visit(compact.NewNodeID(8, bi), root)
		r, err := a.rf.NewRange(first, end, [][]byte{root})
		if err != nil {
			return err
		}
		return a.rng.AppendRange(r, a.visit)
	}
	for k := range want {
		if a.rng.End() == a.prefix {
			if err := a.checkPrefix(); err != nil {
				return err
			}
		}
		h := make([]byte, 32) // partial or boundary bundles only
		copy(h, a.hashes[k*32:])
		if err := a.rng.Append(h, a.visit); err != nil {
			return err
		}
	}
	return nil
}

// checkPrefix compares the root of the range so far with the remembered
// root of the last audit.
func (a *auditor) checkPrefix() error {
	root, err := a.rng.GetRootHash(nil)
	if err != nil {
		return err
	}
	if a.record {
		a.prefixGot = root
		return nil
	}
	if a.prefix == 0 {
		return nil
	}
	if !bytes.Equal(root, a.prefixRoot) {
		return invalid("history rewritten: the first %d leaves hash to %x, the last audit saw %x", a.prefix, root, a.prefixRoot)
	}
	return nil
}

// subtreeRoot reduces the 256 leaf hashes in a.hashes to their root, in
// place, with the RFC 6962 interior hash.
func (a *auditor) subtreeRoot() []byte {
	buf := a.hashes[:]
	var in [65]byte
	in[0] = rfc6962.RFC6962NodeHashPrefix
	for w := layout.EntryBundleWidth; w > 1; w /= 2 {
		for k := 0; k < w/2; k++ {
			copy(in[1:], buf[2*k*32:(2*k+2)*32])
			a.h.Reset()
			a.h.Write(in[:])
			a.h.Sum(buf[k*32 : k*32])
		}
	}
	root := make([]byte, 32)
	copy(root, buf[:32])
	return root
}

// visit collects the nodes that tiles above level 0 store.
func (a *auditor) visit(id compact.NodeID, hash []byte) {
	if id.Level == 0 || id.Level%layout.TileHeight != 0 {
		return
	}
	L := int(id.Level / layout.TileHeight)
	for len(a.levels) <= L {
		a.levels = append(a.levels, nil)
		a.levelIdx = append(a.levelIdx, 0)
	}
	tileIdx := id.Index / layout.TileWidth
	if len(a.levels[L]) == 0 {
		a.levelIdx[L] = tileIdx
	}
	if a.levelIdx[L] != tileIdx || uint64(len(a.levels[L])/32) != id.Index%layout.TileWidth {
		a.err = fmt.Errorf("audit: node %d/%d out of order", id.Level, id.Index)
		return
	}
	a.levels[L] = append(a.levels[L], hash...)
	if len(a.levels[L]) == layout.TileWidth*32 {
		a.err = a.checkTile(context.Background(), uint64(L), tileIdx, 0, a.levels[L])
		a.levels[L] = a.levels[L][:0]
	}
}

// flushLevels checks the partial tiles left at the end.
func (a *auditor) flushLevels(ctx context.Context) error {
	for L := 1; L < len(a.levels); L++ {
		if len(a.levels[L]) == 0 {
			continue
		}
		p := layout.PartialTileSize(uint64(L), a.levelIdx[L], a.size)
		if int(p)*32 != len(a.levels[L]) {
			return fmt.Errorf("audit: %d nodes at tile level %d, want %d", len(a.levels[L])/32, L, p)
		}
		if err := a.checkTile(ctx, uint64(L), a.levelIdx[L], p, a.levels[L]); err != nil {
			return err
		}
	}
	return nil
}

func (a *auditor) checkTile(ctx context.Context, level, index uint64, p uint8, want []byte) error {
	t, err := a.src.ReadTile(ctx, level, index, p)
	if err != nil {
		return fmt.Errorf("reading tile %d/%d: %w", level, index, err)
	}
	if len(t) < len(want) || !bytes.Equal(t[:len(want)], want) {
		return invalid("tile %d/%d does not match the hashes recomputed from the entries", level, index)
	}
	return nil
}
