package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParseReceipt: any bytes, never a panic; a receipt that parses
// survives a JSON round trip unchanged.
func FuzzParseReceipt(f *testing.F) {
	f.Add(readTestdata(f, "receipt.json"))
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseReceipt(b)
		if err != nil {
			return
		}
		out, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseReceipt(out)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		out2, _ := r2.Marshal()
		if !bytes.Equal(out, out2) {
			t.Fatal("round trip changed the receipt")
		}
		// Verification of an arbitrary receipt refuses or accepts, never panics.
		v, err := ParseVerifier(string(readTestdata(t, "verifier")))
		if err != nil {
			t.Fatal(err)
		}
		VerifyReceipt(context.Background(), nil, v, r, b, b)
	})
}

// FuzzCheckpoint: checkpoint bytes from a log are parsed and verified
// with the pinned key; never a panic, and nothing but the signed
// checkpoint verifies.
func FuzzCheckpoint(f *testing.F) {
	good := readTestdata(f, "checkpoint")
	f.Add(good)
	f.Add([]byte("test.custody/log\n3\n\n"))
	v, err := ParseVerifier(string(readTestdata(f, "verifier")))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cp, err := readCheckpoint(context.Background(), constSource{nil, b}, v)
		if err != nil {
			return
		}
		if cp.Origin != v.Name() {
			t.Fatalf("accepted a checkpoint for origin %q", cp.Origin)
		}
		if !bytes.HasPrefix(b, good[:bytes.Index(good, []byte("\n\n"))]) {
			t.Fatalf("accepted a checkpoint body that was never signed: %q", b)
		}
	})
}

// FuzzDecodeLeaf: a leaf that decodes is canonical: it re-encodes to the
// same bytes.
func FuzzDecodeLeaf(f *testing.F) {
	f.Add(bytes.TrimSpace(readTestdata(f, "leaf.json")))
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, err := DecodeLeaf(b)
		if err != nil {
			return
		}
		again, err := EncodeLeaf(tx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("decoded %q, re-encodes to %q", b, again)
		}
	})
}

// FuzzParseBundle: any bytes, never a panic; a bundle that parses
// re-exports to a bundle that parses to the same receipt; verifying it
// offline against a witness policy refuses or accepts, never panics.
func FuzzParseBundle(f *testing.F) {
	files, _ := filepath.Glob(vectorDir + "/*.json")
	var lk string
	var wkeys []string
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var v Vector
		if err := json.Unmarshal(b, &v); err != nil {
			f.Fatal(err)
		}
		lk, wkeys = v.LogKey, v.WitnessKeys
		f.Add([]byte(v.Input))
		f.Add([]byte(v.Request))
	}
	f.Add([]byte(`{"format":"custody.bundle/v1","proof":"c2sp.org/tlog-proof@v1\nindex 0\n\n"}`))
	v, err := ParseVerifier(lk)
	if err != nil {
		f.Fatal(err)
	}
	var wp WitnessPolicy
	for _, k := range wkeys {
		w, err := ParseWitnessKey(k)
		if err != nil {
			f.Fatal(err)
		}
		wp.Keys = append(wp.Keys, w)
	}
	wp.Quorum = 2
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseBundle(b)
		if err != nil {
			return
		}
		bu, err := NewBundle(r)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := bu.Marshal()
		r2, err := ParseBundle(out)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if r2.Index != r.Index || r2.Checkpoint != r.Checkpoint || len(r2.InclusionProof) != len(r.InclusionProof) {
			t.Fatal("round trip changed the bundle")
		}
		VerifyReceiptWith(context.Background(), nil, v, Options{Witnesses: wp}, r, b, b)
	})
}

// FuzzDecodeConfigLeaf: a config leaf that decodes is canonical, and the
// audit's chain check never panics on any leaf.
func FuzzDecodeConfigLeaf(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"config","time":"2026-12-01T00:00:00Z","reason":"start","custody_version":"dev","config_digest":"ab","policies":{"p":{"fallback":"deny"}},"previous_config_leaf":-1}`))
	f.Add(bytes.TrimSpace(readTestdata(f, "leaf.json")))
	f.Add([]byte(`{"v":2,"config_leaf":3,"duration_ns":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		newConfigChain().leaf(5, b)
		c, err := DecodeConfigLeaf(b)
		if err != nil {
			return
		}
		tm, _ := time.Parse(time.RFC3339Nano, c.Time)
		again, err := EncodeConfigLeaf(*c, tm)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded %q, re-encodes to %q (%v)", b, again, err)
		}
	})
}
