package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"golang.org/x/mod/sumdb/note"
)

func TestLeafRoundTrip(t *testing.T) {
	full := &custody.Transaction{
		ID: "r1", Tenant: "tp", Time: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600)),
		Endpoint: "completions", Stream: true, Canary: true, RequestedModel: "m", Provider: "p", Region: "r",
		UpstreamModel: "um", ResponseModel: "rm", Fingerprint: "fp", ResponseID: "rid", Route: -1,
		FallbackChain: []string{"a", "b"}, PathChange: true, Policy: "pol", UseCase: "uc", Decision: "d",
		Outcomes: []custody.Outcome{{Check: "model", Status: custody.StatusFailed, Code: custody.CodeModelMismatch, Detail: "x<y&z"}},
		Verdict:  custody.Rejected, Code: custody.CodeModelMismatch, Status: 502,
		PromptTokensLocal: -1, PromptTokensReported: -1, CompletionTokens: 3,
		RequestCommitment: bytes.Repeat([]byte{1}, 32), ResponseCommitment: bytes.Repeat([]byte{2}, 32), Duration: 5,
	}
	for _, tc := range []struct {
		name string
		tx   *custody.Transaction
	}{
		{"full", full},
		{"empty", &custody.Transaction{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeLeaf(tc.tx)
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := EncodeLeaf(tc.tx)
			if !bytes.Equal(b, b2) {
				t.Fatal("encoding is not deterministic")
			}
			got, err := DecodeLeaf(b)
			if err != nil {
				t.Fatal(err)
			}
			want := *tc.tx
			want.Time = want.Time.UTC()
			if want.Time.IsZero() {
				want.Time = time.Time{}.UTC()
			}
			if !got.Time.Equal(want.Time) {
				t.Fatalf("time %v, want %v", got.Time, want.Time)
			}
			got.Time, want.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, &want)
			}
		})
	}
}

func TestDecodeLeafRefusesNonCanonical(t *testing.T) {
	b, err := EncodeLeaf(&custody.Transaction{ID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		leaf []byte
	}{
		{"space", append([]byte(" "), b...)},
		{"trailing newline", append(append([]byte{}, b...), '\n')},
		{"version 2", bytes.Replace(b, []byte(`"v":1`), []byte(`"v":2`), 1)},
		{"unknown field", bytes.Replace(b, []byte(`{"v":1,`), []byte(`{"v":1,"x":1,`), 1)},
		{"reordered", bytes.Replace(b, []byte(`{"v":1,"id":"r1",`), []byte(`{"id":"r1","v":1,`), 1)},
		{"uppercase hex", bytes.Replace(b, []byte(`"request_commitment":""`), []byte(`"request_commitment":"AB"`), 1)},
		{"missing field", bytes.Replace(b, []byte(`"canary":false,`), nil, 1)},
		{"not json", []byte("prompt")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeLeaf(tc.leaf); !errors.Is(err, ErrBadLeaf) {
				t.Fatalf("DecodeLeaf = %v, want ErrBadLeaf", err)
			}
		})
	}
}

// TestLeafGolden pins the version 1 encoding documented in
// docs/ledger.md: a change in field order or format fails here.
func TestLeafGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/leaf.json")
	if err != nil {
		t.Fatal(err)
	}
	want = bytes.TrimSuffix(want, []byte("\n"))
	tx, err := DecodeLeaf(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeLeaf(tx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %s\nwant %s", got, want)
	}
}

func TestSaltsAndPseudonym(t *testing.T) {
	l := openTest(t, t.TempDir())
	req, resp := l.Salts("req-1")
	m := hmac.New(sha256.New, l.keys.secret)
	m.Write([]byte("custody/salt/v1requestreq-1"))
	if !bytes.Equal(req[:], m.Sum(nil)) {
		t.Fatal("request salt is not HMAC(secret, custody/salt/v1 || request || id)")
	}
	if req == resp {
		t.Fatal("request and response salts are equal")
	}
	if r2, _ := l.Salts("req-2"); r2 == req {
		t.Fatal("salts do not depend on the request id")
	}
	if p := l.Pseudonym("acme"); p == "acme" || len(p) != 32 || p != l.Pseudonym("acme") || p == l.Pseudonym("other") {
		t.Fatalf("pseudonym %q", p)
	}
	c := NewCommitter(req)
	c.Write([]byte("ab"))
	c.Write([]byte("c"))
	h := sha256.Sum256(append(req[:], "abc"...))
	if !bytes.Equal(c.Sum(), h[:]) || !bytes.Equal(Commit(req, []byte("abc")), h[:]) {
		t.Fatal("commitment is not SHA-256(salt || bytes)")
	}
	fi, err := os.Stat(l.cfg.Dir + "/" + secretFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", fi, err)
	}
	fi, err = os.Stat(l.cfg.Dir + "/" + signingFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key file: %v %v", fi, err)
	}
}

func TestStripReceiptLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"none", "data: x\n\n", "data: x\n\n"},
		{"at end", "data: x\n\n: custody-receipt r1\n\ndata: [DONE]\n\n", "data: x\n\n"},
		{"at start", ": custody-receipt r1\n", ""},
		{"not at line start", "data: a: custody-receipt r1\n", "data: a: custody-receipt r1\n"},
		{"second occurrence", "data: a: custody-receipt x\n: custody-receipt r1\n", "data: a: custody-receipt x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(StripReceiptLine([]byte(tc.in))); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := Open(ctx, Config{Dir: dir, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if l.Origin() != DefaultOrigin {
		t.Fatalf("origin %q", l.Origin())
	}
	vkey := l.VerifierKey()
	l.Close(ctx)
	if b, _ := os.ReadFile(filepath.Join(dir, logDir, verifierFile)); strings.TrimSpace(string(b)) != vkey {
		t.Fatalf("published verifier %q, want %q", b, vkey)
	}
	// Reopening keeps the key, with or without the origin configured.
	for _, origin := range []string{"", DefaultOrigin} {
		l, err := Open(ctx, Config{Dir: dir, Origin: origin, JournalSegmentSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if l.VerifierKey() != vkey {
			t.Fatal("the key changed on reopening")
		}
		l.Close(ctx)
	}
	if _, err := Open(ctx, Config{Dir: dir, Origin: "other/log"}); err == nil {
		t.Fatal("opened with an origin the key is not for")
	}
	// A configured key file.
	skey, _, _ := note.GenerateKey(rand.Reader, "configured/log")
	kf := filepath.Join(t.TempDir(), "key")
	os.WriteFile(kf, []byte(skey), 0o600)
	l, err = Open(ctx, Config{Dir: t.TempDir(), KeyFile: kf, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	if l.Origin() != "configured/log" {
		t.Fatalf("origin %q with a configured key", l.Origin())
	}
	if _, err := ParseVerifier(l.VerifierKey()); err != nil {
		t.Fatal(err)
	}
}
