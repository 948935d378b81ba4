//go:build unix

package verify_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/verify"
)

// copyDir copies the tree at src to dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// closedLog appends n leaves, closes the ledger (which publishes a
// checkpoint of all of them) and returns the ledger dir, the receipts
// with their request and response bytes.
func closedLog(t testing.TB, n int) (string, *ledger.Log, []*verify.Receipt) {
	t.Helper()
	dir := t.TempDir()
	l := openTest(t, dir)
	rs, _, _ := appendN(t, l, n)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, l, rs
}

// TestTamperedLogRefused flips one byte of each file of the current tree
// (checkpoint, tiles at both levels, entry bundles) in turn: at least one
// receipt must fail to verify, and the audit must fail.
func TestTamperedLogRefused(t *testing.T) {
	ctx := context.Background()
	dir, l, rs := closedLog(t, 300)
	v := l.Verifier()
	files := []string{
		"checkpoint",
		"tile/0/000", "tile/0/001.p/44", "tile/1/000.p/1",
		"tile/entries/000", "tile/entries/001.p/44",
	}
	check := func(t *testing.T, logDir string) (verifyErr, auditErr error) {
		src, err := verify.OpenSource(logDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 128, 255, 256, 299} {
			if err := verify.VerifyReceipt(ctx, src, v, rs[i], nil, nil); err != nil {
				verifyErr = err
			}
		}
		_, auditErr = verify.Audit(ctx, src, v, "")
		return verifyErr, auditErr
	}
	if verr, aerr := check(t, filepath.Join(dir, verify.LogDir)); verr != nil || aerr != nil {
		t.Fatalf("untouched log: verify %v, audit %v", verr, aerr)
	}
	for _, f := range files {
		size := fileSize(t, filepath.Join(dir, verify.LogDir, f))
		for _, pos := range []int64{0, size / 2, size - 1} {
			t.Run(fmt.Sprintf("%s@%d", f, pos), func(t *testing.T) {
				tampered := t.TempDir()
				copyDir(t, filepath.Join(dir, verify.LogDir), tampered)
				p := filepath.Join(tampered, f)
				b, _ := os.ReadFile(p)
				b[pos] ^= 0x01
				os.WriteFile(p, b, 0o644)
				verr, aerr := check(t, tampered)
				if verr == nil {
					t.Error("every receipt still verifies")
				}
				if aerr == nil {
					t.Error("audit is clean")
				}
			})
		}
	}
}

func fileSize(t testing.TB, p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestAuditDetectsRewrittenHistory: an auditor remembers a checkpoint;
// the operator rebuilds the log with the same key and one more leaf (a
// valid, signed, self-consistent log), but different history.
func TestAuditDetectsRewrittenHistory(t *testing.T) {
	ctx := context.Background()
	const n = 20
	dir, l, _ := closedLog(t, n)
	state := filepath.Join(t.TempDir(), "audit.json")
	src, _ := verify.OpenSource(dir)
	rep, err := verify.Audit(ctx, src, l.Verifier(), state)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size != n || rep.PreviousSize != 0 {
		t.Fatalf("report %+v", rep)
	}

	// The honest continuation audits clean against the state.
	l2 := openTest(t, dir)
	appendN(t, l2, 3)
	if err := l2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err = verify.Audit(ctx, src, l.Verifier(), state)
	if err != nil {
		t.Fatalf("honest growth: %v", err)
	}
	if rep.Size != n+3 || rep.PreviousSize != n {
		t.Fatalf("report %+v", rep)
	}

	// A rewritten log: same keys, size+1, leaf 5 differs.
	forged := t.TempDir()
	copyKeys(t, dir, forged)
	fl := openTest(t, forged)
	for i := range n + 4 {
		id := fmt.Sprintf("req-%d", i)
		if i == 5 {
			id = "req-5-rewritten"
		}
		if _, err := fl.Append(ctx, ledgertest.SampleTx(fl, id, nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fl.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fsrc, _ := verify.OpenSource(forged)
	if _, err := verify.Audit(ctx, fsrc, l.Verifier(), ""); err != nil {
		t.Fatalf("the forged log is self-consistent, audit without state: %v", err)
	}
	before, _ := os.ReadFile(state)
	if _, err := verify.Audit(ctx, fsrc, l.Verifier(), state); !errors.Is(err, verify.ErrInvalid) {
		t.Fatalf("audit of rewritten history = %v, want verify.ErrInvalid", err)
	}
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Fatal("a failed audit changed the state")
	}
}

func TestAuditDetectsShrunkLog(t *testing.T) {
	ctx := context.Background()
	dir, l, _ := closedLog(t, 10)
	state := filepath.Join(t.TempDir(), "audit.json")
	src, _ := verify.OpenSource(dir)
	if _, err := verify.Audit(ctx, src, l.Verifier(), state); err != nil {
		t.Fatal(err)
	}
	forged := t.TempDir()
	copyKeys(t, dir, forged)
	fl := openTest(t, forged)
	appendN(t, fl, 9)
	fl.Close(ctx)
	fsrc, _ := verify.OpenSource(forged)
	if _, err := verify.Audit(ctx, fsrc, l.Verifier(), state); !errors.Is(err, verify.ErrInvalid) {
		t.Fatalf("audit of a shrunk log = %v, want verify.ErrInvalid", err)
	}
}

// TestAuditPrefixInsideBundle remembers a size that ends inside a bundle
// and one at a bundle boundary.
func TestAuditPrefixInsideBundle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		first, more int
	}{
		{"inside", 100, 300},
		{"boundary", 256, 10},
		{"same size", 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, l, _ := closedLog(t, tc.first)
			state := filepath.Join(t.TempDir(), "audit.json")
			src, _ := verify.OpenSource(dir)
			if _, err := verify.Audit(ctx, src, l.Verifier(), state); err != nil {
				t.Fatal(err)
			}
			if tc.more > 0 {
				l2 := openTest(t, dir)
				appendN(t, l2, tc.more)
				l2.Close(ctx)
			}
			if rep, err := verify.Audit(ctx, src, l.Verifier(), state); err != nil || rep.PreviousSize != uint64(tc.first) {
				t.Fatalf("audit %+v, %v", rep, err)
			}
		})
	}
}
