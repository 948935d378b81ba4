package ledger

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

var update = flag.Bool("update", false, "rewrite ../verify/testdata/ from a fresh ledger")

// TestUpdateTestdata rewrites the golden files and fuzz seeds with -update.
func TestUpdateTestdata(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite ../verify/testdata/")
	}
	l := openTest(t, t.TempDir())
	rs, reqs, resps := appendN(t, l, 3)
	r := integrated(t, l, 2, "req-2")
	b, _ := r.Marshal()
	tx, _ := verify.DecodeLeaf(rs[0].Leaf)
	tx.Tenant = "3f1c2a9d0b7e4c6a8d5e2f1a0b9c8d7e"
	leaf, _ := verify.EncodeLeaf(tx)
	for name, data := range map[string][]byte{
		"receipt.json": append(b, '\n'), "request.json": reqs[2], "response.sse": resps[2],
		"checkpoint": []byte(r.Checkpoint), "verifier": []byte(l.VerifierKey() + "\n"), "leaf.json": append(leaf, '\n'),
	} {
		if err := os.WriteFile("../verify/testdata/"+name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReceiptLookup(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, t.TempDir())
	appendN(t, l, 2)
	if _, err := l.Receipt(ctx, 1, "req-0"); !errors.Is(err, custody.ErrNotFound) {
		t.Fatalf("receipt of another request's index: %v", err)
	}
	if _, err := l.Receipt(ctx, 7, "req-7"); !errors.Is(err, custody.ErrNotFound) {
		t.Fatalf("receipt past the log: %v", err)
	}
	if r := integrated(t, l, 1, "req-1"); len(r.InclusionProof) != 1 {
		t.Fatalf("inclusion proof of %d hashes in a tree of 2", len(r.InclusionProof))
	}
}

// TestReceiptWhileIntegrating asks for each receipt right after Append,
// while tessera integrates concurrently: the leaf is found whether it is
// still pending, mid-batch or in the log.
func TestReceiptWhileIntegrating(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, t.TempDir())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				id := fmt.Sprintf("w%d-%d", w, i)
				r, err := l.Append(ctx, sampleTx(l, id, nil, nil))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := l.Receipt(ctx, r.Index, id); err != nil {
					t.Errorf("Receipt(%d): %v", r.Index, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestConfigLeafStamped: after AppendConfig every transaction leaf names
// the config leaf, the next config leaf names the previous one, and a
// reopened ledger knows the config leaf in force from its last leaf.
func TestConfigLeafStamped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := Open(ctx, Config{Dir: dir, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if l.ConfigLeaf() != -1 {
		t.Fatalf("config leaf %d in an empty log", l.ConfigLeaf())
	}
	first, err := l.AppendConfig(ctx, ConfigRecord{Reason: "start", Version: "dev", Digest: "aa", Policies: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Append(ctx, sampleTx(l, "req-a", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := verify.DecodeLeaf(r.Leaf)
	if err != nil || tx.ConfigLeaf == nil || *tx.ConfigLeaf != first {
		t.Fatalf("transaction leaf %s: %v", r.Leaf, err)
	}
	second, err := l.AppendConfig(ctx, ConfigRecord{Reason: "reload", Version: "dev", Digest: "bb", Policies: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := l.ReadConfigLeaf(ctx, second)
	if err != nil || cl.Previous != int64(first) || cl.Reason != "reload" {
		t.Fatalf("second config leaf %+v: %v", cl, err)
	}
	if _, err := l.Append(ctx, sampleTx(l, "req-b", nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	l, err = Open(ctx, Config{Dir: dir, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	if l.ConfigLeaf() != int64(second) {
		t.Fatalf("reopened: config leaf %d, want %d", l.ConfigLeaf(), second)
	}
	src, _ := verify.OpenSource(dir)
	rep, err := verify.Audit(ctx, src, l.Verifier(), "")
	if err != nil || rep.ConfigLeaves != 2 || rep.LastConfigLeaf != int64(second) {
		t.Fatalf("audit %+v: %v", rep, err)
	}
}
