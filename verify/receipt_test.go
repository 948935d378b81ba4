package verify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

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

// BenchmarkVerifyReceiptOffline is what `custody verify --offline` costs
// in process (parse, signature, inclusion proof, bytes): about 0.2 ms on
// a 2-core machine. A test on a loaded machine cannot hold a duration, so
// the figure is measured here.
func BenchmarkVerifyReceiptOffline(b *testing.B) {
	receipt, vkey := readTestdata(b, "receipt.json"), string(readTestdata(b, "verifier"))
	req, resp := readTestdata(b, "request.json"), readTestdata(b, "response.sse")
	for b.Loop() {
		r, err := ParseReceipt(receipt)
		if err != nil {
			b.Fatal(err)
		}
		v, err := ParseVerifier(vkey)
		if err != nil {
			b.Fatal(err)
		}
		if err := VerifyReceipt(context.Background(), nil, v, r, req, resp); err != nil {
			b.Fatal(err)
		}
	}
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
