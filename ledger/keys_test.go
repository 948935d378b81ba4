package ledger

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/verify"
	"golang.org/x/mod/sumdb/note"
)

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
	if again, _ := l.Salts("req-1"); again != req { // a pooled, reset hash
		t.Fatal("the request salt changed on a second derivation")
	}
	m.Reset()
	m.Write([]byte("custody/tenant/v1acme"))
	if want := hex.EncodeToString(m.Sum(nil)[:16]); l.Pseudonym("acme") != want {
		t.Fatalf("pseudonym %q, want hex(HMAC(secret, custody/tenant/v1 || acme))[:32] = %q", l.Pseudonym("acme"), want)
	}
	if r2, _ := l.Salts("req-2"); r2 == req {
		t.Fatal("salts do not depend on the request id")
	}
	if p := l.Pseudonym("acme"); p == "acme" || len(p) != 32 || p != l.Pseudonym("acme") || p == l.Pseudonym("other") {
		t.Fatalf("pseudonym %q", p)
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
	if b, _ := os.ReadFile(filepath.Join(dir, logDir, verify.VerifierFile)); strings.TrimSpace(string(b)) != vkey {
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
	if _, err := verify.ParseVerifier(l.VerifierKey()); err != nil {
		t.Fatal(err)
	}
}
