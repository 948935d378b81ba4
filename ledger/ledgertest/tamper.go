package ledgertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
)

// TamperLeaf returns a copy of a transaction leaf with one hex digit of
// its response commitment changed: a leaf of the same length and shape
// that commits to another answer.
func TamperLeaf(leaf []byte) ([]byte, error) {
	const field = `"response_commitment":"`
	i := bytes.Index(leaf, []byte(field))
	if i < 0 {
		return nil, errors.New("not a transaction leaf")
	}
	out := bytes.Clone(leaf)
	j := i + len(field)
	if out[j] == '0' {
		out[j] = '1'
	} else {
		out[j] = '0'
	}
	return out, nil
}

// RewriteLeaf rewrites, as someone with the disk and custody stopped
// could, leaf index in every stored entry bundle of the log in logDir
// (the ledger's log directory) that holds it, with TamperLeaf's change,
// and returns the rewritten leaf. With tile, every level-0 tile of that
// bundle is recomputed from the rewritten entries too, so that the tree
// holds together up to level 0; on a log whose last bundle holds the leaf
// (no tile above level 0 covers it yet), the whole tree then does, and
// only the signed checkpoint (and the journal) still says otherwise.
func RewriteLeaf(logDir string, index uint64, tile bool) ([]byte, error) {
	bi, k := index/layout.EntryBundleWidth, int(index%layout.EntryBundleWidth)
	full := filepath.Join(logDir, layout.EntriesPath(bi, 0))
	partials, err := filepath.Glob(full + ".p/*")
	if err != nil {
		return nil, err
	}
	var rewritten []byte
	for _, p := range append([]string{full}, partials...) {
		raw, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var eb api.EntryBundle
		if err := eb.UnmarshalText(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if len(eb.Entries) <= k {
			continue
		}
		if eb.Entries[k], err = TamperLeaf(eb.Entries[k]); err != nil {
			return nil, err
		}
		rewritten = eb.Entries[k]
		var b []byte
		for _, e := range eb.Entries {
			b = binary.BigEndian.AppendUint16(b, uint16(len(e)))
			b = append(b, e...)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
		if !tile {
			continue
		}
		tp := filepath.Join(logDir, layout.TilePath(0, bi, 0))
		if suffix, ok := strings.CutPrefix(p, full); ok && suffix != "" {
			tp += suffix // ".p/N": the tile of the same width
		}
		var hashes []byte
		for _, e := range eb.Entries {
			hashes = append(hashes, rfc6962.DefaultHasher.HashLeaf(e)...)
		}
		if err := os.WriteFile(tp, hashes, 0o644); err != nil {
			return nil, err
		}
	}
	if rewritten == nil {
		return nil, fmt.Errorf("no stored entry bundle holds leaf %d", index)
	}
	return rewritten, nil
}

// RewriteJournalRecord replaces the leaf of journal record index in the
// ledger in ledgerDir (its Config.Dir) with leaf, of the same length, and
// its CRC to match: an intact record that says another leaf.
func RewriteJournalRecord(ledgerDir string, index uint64, leaf []byte) error {
	segs, err := filepath.Glob(filepath.Join(ledgerDir, "journal", "*.wal"))
	if err != nil {
		return err
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, p := range segs {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for off := 0; off+16 <= len(data); {
			n := int(binary.BigEndian.Uint32(data[off:]))
			if n == 0 || off+16+n > len(data) {
				break
			}
			if binary.BigEndian.Uint64(data[off+8:]) == index {
				if n != len(leaf) {
					return fmt.Errorf("record %d holds %d bytes, not %d", index, n, len(leaf))
				}
				copy(data[off+16:], leaf)
				crc := crc32.Update(crc32.Update(0, table, data[off+8:off+16]), table, leaf)
				binary.BigEndian.PutUint32(data[off+4:], crc)
				return os.WriteFile(p, data, 0o600)
			}
			off += 16 + n
		}
	}
	return fmt.Errorf("no journal record %d", index)
}
