//go:build unix

package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-gateway/custody/verify"
)

func TestReceiptVerifies(t *testing.T) {
	ctx := context.Background()
	ldir := t.TempDir()
	l := openTest(t, ldir)
	rs, reqs, resps := appendN(t, l, 5)
	r := integrated(t, l, 4, "req-4")
	if r.Index != rs[4].Index || !bytes.Equal(r.Signature, rs[4].Signature) {
		t.Fatal("verify.Receipt differs from Append's receipt")
	}
	dir, err := verify.OpenSource(ldir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(l.Handler())
	defer srv.Close()
	web, err := verify.OpenSource(srv.URL + "/log")
	if err != nil {
		t.Fatal(err)
	}
	// A stream's body as the client got it, with the receipt line.
	streamed := append(append([]byte{}, resps[4]...), ": custody-receipt req-4\n\n"...)
	for _, tc := range []struct {
		name string
		src  verify.LogSource
		resp []byte
	}{
		{"offline", nil, resps[4]},
		{"dir", dir, resps[4]},
		{"http", web, resps[4]},
		{"stream with receipt line", dir, streamed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := verify.VerifyReceipt(ctx, tc.src, l.Verifier(), r, reqs[4], tc.resp); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Round trip through JSON.
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := verify.ParseReceipt(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.VerifyReceipt(ctx, dir, l.Verifier(), r2, reqs[4], resps[4]); err != nil {
		t.Fatal(err)
	}
	// A receipt fresh from Append (no proof yet) verifies against the log.
	if err := verify.VerifyReceipt(ctx, dir, l.Verifier(), rs[0], reqs[0], resps[0]); err != nil {
		t.Fatal(err)
	}
}

func TestReceiptRefusals(t *testing.T) {
	ctx := context.Background()
	ldir := t.TempDir()
	l := openTest(t, ldir)
	_, reqs, resps := appendN(t, l, 5)
	good := integrated(t, l, 3, "req-3")
	src, err := verify.OpenSource(ldir)
	if err != nil {
		t.Fatal(err)
	}
	other := openTest(t, t.TempDir())
	clone := func(edit func(r *verify.Receipt)) *verify.Receipt {
		b, _ := json.Marshal(good)
		var r verify.Receipt
		json.Unmarshal(b, &r)
		edit(&r)
		return &r
	}
	for _, tc := range []struct {
		name      string
		r         *verify.Receipt
		req, resp []byte
	}{
		{"leaf byte", clone(func(r *verify.Receipt) { r.Leaf[10] ^= 1 }), reqs[3], resps[3]},
		{"leaf of another request", clone(func(r *verify.Receipt) { r.Leaf = bytes.Replace(r.Leaf, []byte("req-3"), []byte("req-2"), 1) }), nil, nil},
		{"signature", clone(func(r *verify.Receipt) { r.Signature[0] ^= 1 }), nil, nil},
		{"request id", clone(func(r *verify.Receipt) { r.RequestID = "req-2" }), nil, nil},
		{"index", clone(func(r *verify.Receipt) { r.Index = 2 }), nil, nil},
		{"request salt", clone(func(r *verify.Receipt) { r.RequestSalt[0] ^= 1 }), reqs[3], nil},
		{"response salt", clone(func(r *verify.Receipt) { r.ResponseSalt[0] ^= 1 }), nil, resps[3]},
		{"proof", clone(func(r *verify.Receipt) { r.InclusionProof[0][0] ^= 1 }), nil, nil},
		{"checkpoint size", clone(func(r *verify.Receipt) {
			cp := []byte(r.Checkpoint)
			cp[bytes.IndexByte(cp, '\n')+1] = '9'
			r.Checkpoint = string(cp)
		}), nil, nil},
		{"origin", clone(func(r *verify.Receipt) { r.Origin = "evil/log" }), nil, nil},
		{"key id", clone(func(r *verify.Receipt) { r.KeyID = "test.custody/log+00000000" }), nil, nil},
		{"wrong request bytes", good, []byte("another prompt"), nil},
		{"wrong response bytes", good, nil, append([]byte("x"), resps[3]...)},
		{"another request's bytes", good, reqs[2], resps[2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := verify.VerifyReceipt(ctx, src, l.Verifier(), tc.r, tc.req, tc.resp); !errors.Is(err, verify.ErrInvalid) {
				t.Fatalf("verify.VerifyReceipt = %v, want verify.ErrInvalid", err)
			}
		})
	}
	// The signature does not cover the index: a receipt claiming an index
	// the log has not reached is not refused but pending (exit 3), and is
	// refused once the log holds another leaf there.
	t.Run("index past the log", func(t *testing.T) {
		r := clone(func(r *verify.Receipt) { r.Index = 99; r.Checkpoint, r.InclusionProof = "", nil })
		if err := verify.VerifyReceipt(ctx, src, l.Verifier(), r, nil, nil); !errors.Is(err, verify.ErrNotIntegrated) || errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify.VerifyReceipt = %v, want verify.ErrNotIntegrated only", err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		if err := verify.VerifyReceipt(ctx, src, other.Verifier(), good, nil, nil); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("verify.VerifyReceipt = %v, want verify.ErrInvalid", err)
		}
	})
}

// TestShortTileRefused: a log that serves a tile shorter than the tree
// needs is refused (not a panic), whichever tile the proof goes through.
func TestShortTileRefused(t *testing.T) {
	ctx := context.Background()
	dir, l, rs := closedLog(t, 300)
	for _, f := range []string{"tile/0/000", "tile/0/001.p/44", "tile/1/000.p/1"} {
		t.Run(f, func(t *testing.T) {
			short := t.TempDir()
			copyDir(t, filepath.Join(dir, verify.LogDir), short)
			p := filepath.Join(short, f)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b[:len(b)-32], 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := verify.OpenSource(short)
			if err != nil {
				t.Fatal(err)
			}
			refused := false
			for _, i := range []int{0, 255, 299} {
				if err := verify.VerifyReceipt(ctx, src, l.Verifier(), rs[i], nil, nil); err != nil {
					if !errors.Is(err, verify.ErrInvalid) {
						t.Fatalf("receipt %d: %v, want ErrInvalid", i, err)
					}
					refused = true
				}
			}
			if !refused {
				t.Fatal("every receipt verifies against a short tile")
			}
		})
	}
}
