package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/custody-gateway/custody"
)

var update = flag.Bool("update", false, "rewrite testdata/ from a fresh ledger")

// TestUpdateTestdata rewrites the golden files and fuzz seeds with -update.
func TestUpdateTestdata(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/")
	}
	l := openTest(t, t.TempDir())
	rs, reqs, resps := appendN(t, l, 3)
	r := integrated(t, l, 2, "req-2")
	b, _ := r.Marshal()
	tx, _ := DecodeLeaf(rs[0].Leaf)
	tx.Tenant = "3f1c2a9d0b7e4c6a8d5e2f1a0b9c8d7e"
	leaf, _ := EncodeLeaf(tx)
	for name, data := range map[string][]byte{
		"receipt.json": append(b, '\n'), "request.json": reqs[2], "response.sse": resps[2],
		"checkpoint": []byte(r.Checkpoint), "verifier": []byte(l.VerifierKey() + "\n"), "leaf.json": append(leaf, '\n'),
	} {
		if err := os.WriteFile("testdata/"+name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readTestdata(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenReceiptVerifiesOffline: a receipt verifies from its own
// checkpoint and proof, without the log.
func TestGoldenReceiptVerifiesOffline(t *testing.T) {
	r, err := ParseReceipt(readTestdata(t, "receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseVerifier(string(readTestdata(t, "verifier")))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyReceipt(context.Background(), nil, v, r, readTestdata(t, "request.json"), readTestdata(t, "response.sse")); err != nil {
		t.Fatal(err)
	}
}

func TestReceiptVerifies(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, t.TempDir())
	rs, reqs, resps := appendN(t, l, 5)
	r := integrated(t, l, 4, "req-4")
	if r.Index != rs[4].Index || !bytes.Equal(r.Signature, rs[4].Signature) {
		t.Fatal("Receipt differs from Append's receipt")
	}
	dir, err := OpenSource(l.cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	web, err := OpenSource(srv.URL + "/log")
	if err != nil {
		t.Fatal(err)
	}
	// A stream's body as the client got it, with the receipt line.
	streamed := append(append([]byte{}, resps[4]...), ": custody-receipt req-4\n\n"...)
	for _, tc := range []struct {
		name string
		src  LogSource
		resp []byte
	}{
		{"offline", nil, resps[4]},
		{"dir", dir, resps[4]},
		{"http", web, resps[4]},
		{"stream with receipt line", dir, streamed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := VerifyReceipt(ctx, tc.src, l.Verifier(), r, reqs[4], tc.resp); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Round trip through JSON.
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := ParseReceipt(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyReceipt(ctx, dir, l.Verifier(), r2, reqs[4], resps[4]); err != nil {
		t.Fatal(err)
	}
	// A receipt fresh from Append (no proof yet) verifies against the log.
	if err := VerifyReceipt(ctx, dir, l.Verifier(), rs[0], reqs[0], resps[0]); err != nil {
		t.Fatal(err)
	}
}

func TestReceiptRefusals(t *testing.T) {
	ctx := context.Background()
	l := openTest(t, t.TempDir())
	_, reqs, resps := appendN(t, l, 5)
	good := integrated(t, l, 3, "req-3")
	src, err := OpenSource(l.cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	other := openTest(t, t.TempDir())
	clone := func(edit func(r *Receipt)) *Receipt {
		b, _ := json.Marshal(good)
		var r Receipt
		json.Unmarshal(b, &r)
		edit(&r)
		return &r
	}
	for _, tc := range []struct {
		name      string
		r         *Receipt
		req, resp []byte
	}{
		{"leaf byte", clone(func(r *Receipt) { r.Leaf[10] ^= 1 }), reqs[3], resps[3]},
		{"leaf of another request", clone(func(r *Receipt) { r.Leaf = bytes.Replace(r.Leaf, []byte("req-3"), []byte("req-2"), 1) }), nil, nil},
		{"signature", clone(func(r *Receipt) { r.Signature[0] ^= 1 }), nil, nil},
		{"request id", clone(func(r *Receipt) { r.RequestID = "req-2" }), nil, nil},
		{"index", clone(func(r *Receipt) { r.Index = 2 }), nil, nil},
		{"index past the log", clone(func(r *Receipt) { r.Index = 99; r.Checkpoint, r.InclusionProof = "", nil }), nil, nil},
		{"request salt", clone(func(r *Receipt) { r.RequestSalt[0] ^= 1 }), reqs[3], nil},
		{"response salt", clone(func(r *Receipt) { r.ResponseSalt[0] ^= 1 }), nil, resps[3]},
		{"proof", clone(func(r *Receipt) { r.InclusionProof[0][0] ^= 1 }), nil, nil},
		{"checkpoint size", clone(func(r *Receipt) {
			cp := []byte(r.Checkpoint)
			cp[bytes.IndexByte(cp, '\n')+1] = '9'
			r.Checkpoint = string(cp)
		}), nil, nil},
		{"origin", clone(func(r *Receipt) { r.Origin = "evil/log" }), nil, nil},
		{"key id", clone(func(r *Receipt) { r.KeyID = "test.custody/log+00000000" }), nil, nil},
		{"wrong request bytes", good, []byte("another prompt"), nil},
		{"wrong response bytes", good, nil, append([]byte("x"), resps[3]...)},
		{"another request's bytes", good, reqs[2], resps[2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := VerifyReceipt(ctx, src, l.Verifier(), tc.r, tc.req, tc.resp); !errors.Is(err, ErrInvalid) {
				t.Fatalf("VerifyReceipt = %v, want ErrInvalid", err)
			}
		})
	}
	t.Run("another key", func(t *testing.T) {
		if err := VerifyReceipt(ctx, src, other.Verifier(), good, nil, nil); !errors.Is(err, ErrInvalid) {
			t.Fatalf("VerifyReceipt = %v, want ErrInvalid", err)
		}
	})
}

func TestParseReceiptRefusals(t *testing.T) {
	good := readTestdata(t, "receipt.json")
	if _, err := ParseReceipt(good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, in string }{
		{"not json", "receipt"},
		{"unknown field", `{"v":1,"x":1}`},
		{"version", string(bytes.Replace(good, []byte(`"v": 1`), []byte(`"v": 2`), 1))},
		{"trailing", string(good) + "{}"},
		{"short salt", string(bytes.Replace(good, []byte(`"request_salt": "`), []byte(`"request_salt": "AAAA`), 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseReceipt([]byte(tc.in)); !errors.Is(err, ErrBadReceipt) {
				t.Fatalf("ParseReceipt = %v, want ErrBadReceipt", err)
			}
		})
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
