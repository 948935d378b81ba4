package ledger_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
)

// startCheckLeaves is the size of the logs the start check is tried on: a
// full entry bundle and a partial one (leaves 256-299), so that a leaf of
// the last bundle can be rewritten with its level-0 tile and the tree
// still holds together.
const startCheckLeaves = 300

// honestLedger is a closed ledger of startCheckLeaves transactions, made
// once and copied for each case.
func honestLedger(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := ledgertest.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledgertest.Append(ctx, l, startCheckLeaves); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyLedger(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "ledger")
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// storedLeaf reads leaf index from the log's entry bundles.
func storedLeaf(t *testing.T, dir string, index uint64) []byte {
	t.Helper()
	src, err := verify.OpenSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	bi := index / layout.EntryBundleWidth
	raw, err := src.ReadEntryBundle(context.Background(), bi, layout.PartialTileSize(0, bi, startCheckLeaves))
	if err != nil {
		t.Fatal(err)
	}
	var eb api.EntryBundle
	if err := eb.UnmarshalText(raw); err != nil {
		t.Fatal(err)
	}
	return eb.Entries[index%layout.EntryBundleWidth]
}

// writeCheckpoint replaces the log's checkpoint with one for size and
// root signed by skey (the ledger's own key when skey is "").
func writeCheckpoint(t *testing.T, dir string, size uint64, root []byte, skey string) {
	t.Helper()
	if skey == "" {
		b, err := os.ReadFile(filepath.Join(dir, "signing.key"))
		if err != nil {
			t.Fatal(err)
		}
		skey = strings.TrimSpace(string(b))
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	cp := log.Checkpoint{Origin: ledgertest.Origin, Size: size, Hash: root}
	signed, err := note.Sign(&note.Note{Text: string(cp.Marshal())}, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log", layout.CheckpointPath), signed, 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeRoots are the roots of the stored tree's first n leaves and of all
// of them.
func treeRoots(t *testing.T, dir string, n uint64) (all, first []byte) {
	t.Helper()
	src, err := verify.OpenSource(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, first, err = verify.CheckTree(context.Background(), src, startCheckLeaves, n)
	if err != nil {
		t.Fatal(err)
	}
	return all, first
}

// TestOpenRefusesATamperedLog: each way the stored log can differ from
// what the ledger signed makes Open fail with ErrTampered, saying what it
// found, before anything is signed (the checkpoint file is unchanged).
func TestOpenRefusesATamperedLog(t *testing.T) {
	ctx := context.Background()
	honest := honestLedger(t)
	forger, _, err := note.GenerateKey(rand.Reader, ledgertest.Origin)
	if err != nil {
		t.Fatal(err)
	}
	const last = startCheckLeaves - 10 // in the last, partial bundle
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   []string // in the error
		not    []string // not in it: the case is caught by the check it names
	}{
		{"consistent rewrite of a leaf and its level-0 tile", func(t *testing.T, dir string) {
			if _, err := ledgertest.RewriteLeaf(filepath.Join(dir, "log"), last, true); err != nil {
				t.Fatal(err)
			}
			// The rewrite holds together: an audit without --state
			// finds only the signed root different.
			src, _ := verify.OpenSource(dir)
			v, _ := verify.ParseVerifier(strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "log", "verifier")))))
			if _, err := verify.Audit(ctx, src, v, ""); err == nil || !strings.Contains(err.Error(), "the leaves hash to") {
				t.Fatalf("the rewrite is not consistent to level 0: audit says %v", err)
			}
		}, []string{"the first 300 leaves hash to", "the signed checkpoint says", "1 journal record differs from the stored leaf at its index (290)"}, nil},
		{"consistent rewrite of a leaf, its level-0 tile and its journal record", func(t *testing.T, dir string) {
			leaf, err := ledgertest.RewriteLeaf(filepath.Join(dir, "log"), last, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := ledgertest.RewriteJournalRecord(dir, last, leaf); err != nil {
				t.Fatal(err)
			}
		}, []string{"the first 300 leaves hash to", "the signed checkpoint says"}, []string{"journal"}},
		{"rewritten leaf only", func(t *testing.T, dir string) {
			if _, err := ledgertest.RewriteLeaf(filepath.Join(dir, "log"), last, false); err != nil {
				t.Fatal(err)
			}
		}, []string{"does not hold together", "tile 0/1 does not match the hashes of entry bundle 1"}, nil},
		{"leaf and level-0 tile of a full bundle", func(t *testing.T, dir string) {
			if _, err := ledgertest.RewriteLeaf(filepath.Join(dir, "log"), 5, true); err != nil {
				t.Fatal(err)
			}
		}, []string{"does not hold together", "tile 1/0 does not match"}, nil},
		{"forged checkpoint signature", func(t *testing.T, dir string) {
			root, _ := treeRoots(t, dir, 0)
			writeCheckpoint(t, dir, startCheckLeaves, root, forger)
		}, []string{"the checkpoint is not signed by the log's key"}, []string{"hash to"}},
		{"forged checkpoint over a consistent rewrite", func(t *testing.T, dir string) {
			if _, err := ledgertest.RewriteLeaf(filepath.Join(dir, "log"), last, true); err != nil {
				t.Fatal(err)
			}
			if err := ledgertest.RewriteJournalRecord(dir, last, storedLeaf(t, dir, last)); err != nil {
				t.Fatal(err)
			}
			root, _ := treeRoots(t, dir, 0)
			writeCheckpoint(t, dir, startCheckLeaves, root, forger)
		}, []string{"the checkpoint is not signed by the log's key"}, nil},
		{"checkpoint root disagrees with the tree", func(t *testing.T, dir string) {
			writeCheckpoint(t, dir, startCheckLeaves, bytes.Repeat([]byte{7}, 32), "")
		}, []string{"the first 300 leaves hash to", "the signed checkpoint says 0707"}, nil},
		{"checkpoint of a smaller tree with another root", func(t *testing.T, dir string) {
			root, _ := treeRoots(t, dir, 0)
			writeCheckpoint(t, dir, startCheckLeaves-1, root, "")
		}, []string{"the first 299 leaves hash to"}, nil},
		{"checkpoint larger than the tree", func(t *testing.T, dir string) {
			root, _ := treeRoots(t, dir, 0)
			writeCheckpoint(t, dir, startCheckLeaves+1, root, "")
		}, []string{"the tree holds 300 leaves, fewer than the 301 the checkpoint signed"}, nil},
		{"journal record disagrees with the stored leaf", func(t *testing.T, dir string) {
			leaf, err := ledgertest.TamperLeaf(storedLeaf(t, dir, 100))
			if err != nil {
				t.Fatal(err)
			}
			if err := ledgertest.RewriteJournalRecord(dir, 100, leaf); err != nil {
				t.Fatal(err)
			}
		}, []string{"1 journal record differs from the stored leaf at its index (100)"}, []string{"hash to"}},
		{"tree state removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "log", ".state", "treeState")); err != nil {
				t.Fatal(err)
			}
		}, []string{"the checkpoint exists but the tree's state"}, nil},
		{"tree state's root rewritten", func(t *testing.T, dir string) {
			// tessera signs the tree state's root when it next publishes.
			st := fmt.Sprintf(`{"size":%d,"root":%q}`, startCheckLeaves, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
			if err := os.WriteFile(filepath.Join(dir, "log", ".state", "treeState"), []byte(st), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"the 300 leaves hash to", "the tree's state says 0707"}, []string{"checkpoint says"}},
		{"checkpoint removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "log", layout.CheckpointPath)); err != nil {
				t.Fatal(err)
			}
		}, []string{"the tree holds 300 leaves but there is no checkpoint"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyLedger(t, honest)
			c.tamper(t, dir)
			cpPath := filepath.Join(dir, "log", layout.CheckpointPath)
			cp, _ := os.ReadFile(cpPath)
			l, err := ledgertest.Open(ctx, dir)
			if err == nil {
				l.Close(ctx)
				t.Fatal("Open accepted a tampered log")
			}
			var te *ledger.TamperedError
			if !errors.Is(err, ledger.ErrTampered) || !errors.As(err, &te) || te.LogDir != filepath.Join(dir, "log") {
				t.Fatalf("Open failed with %v, want a TamperedError for %s", err, filepath.Join(dir, "log"))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			for _, w := range c.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error says %q:\n%v", w, err)
				}
			}
			if after, _ := os.ReadFile(cpPath); !bytes.Equal(after, cp) {
				t.Errorf("a refused Open changed the checkpoint:\n%s\nwas\n%s", after, cp)
			}
		})
	}
}

// TestOpenAcceptsAnHonestLog: an untouched log opens and grows, and so
// does one whose journal ends in a torn record (a crash mid-write is
// recovery, not tampering).
func TestOpenAcceptsAnHonestLog(t *testing.T) {
	ctx := context.Background()
	honest := honestLedger(t)
	for _, torn := range []bool{false, true} {
		dir := copyLedger(t, honest)
		seg := filepath.Join(dir, "journal", "0000000000000000.wal")
		if torn {
			data := mustRead(t, seg)
			used := len(data)
			for used > 0 && data[used-1] == 0 {
				used--
			}
			// A header promising a 300-byte leaf of which 2 bytes landed.
			copy(data[used:], []byte{0, 0, 1, 44, 7, 7, 7, 7, 0, 0, 0, 0, 0, 0, 1, 44, '{', '"'})
			if err := os.WriteFile(seg, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		l, err := ledgertest.Open(ctx, dir)
		if err != nil {
			t.Fatalf("torn=%v: %v", torn, err)
		}
		if _, err := ledgertest.Append(ctx, l, 3); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		// And it opens again, grown.
		l, err = ledgertest.Open(ctx, dir)
		if err != nil {
			t.Fatalf("torn=%v, reopening: %v", torn, err)
		}
		if l.Size() != startCheckLeaves+3 {
			t.Errorf("torn=%v: size %d, want %d", torn, l.Size(), startCheckLeaves+3)
		}
		l.Close(ctx)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
