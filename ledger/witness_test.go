package ledger

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/custody-gateway/custody/verify"
)

// fakeWitness cosigns whatever checkpoint it is sent (it checks no
// consistency: the real witness, litewitness, is in cmd/custody's
// TestWitnessCosigning); down makes it answer 503.
type fakeWitness struct {
	*httptest.Server
	name, vkey string
	down       atomic.Bool
}

func newFakeWitness(t *testing.T, name string) *fakeWitness {
	skey, _, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWitness{name: name}
	v := s.Verifier()
	w.vkey = cosigVKey(t, skey, v)
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.down.Load() || r.URL.Path != "/add-checkpoint" {
			http.Error(rw, "down", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		_, cp, ok := strings.Cut(string(b), "\n\n")
		if !ok {
			http.Error(rw, "bad request", http.StatusBadRequest)
			return
		}
		n, err := note.Open([]byte(cp), anyVerifier{})
		if err != nil && n == nil {
			var u *note.UnverifiedNoteError
			if !errors.As(err, &u) {
				http.Error(rw, err.Error(), http.StatusBadRequest)
				return
			}
			n = u.Note
		}
		signed, err := note.Sign(&note.Note{Text: n.Text}, s)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(signed), "\n"), "\n")
		fmt.Fprintln(rw, lines[len(lines)-1])
	}))
	t.Cleanup(w.Close)
	return w
}

// anyVerifier knows no key: note.Open reports every signature unverified.
type anyVerifier struct{}

func (anyVerifier) Verifier(name string, hash uint32) (note.Verifier, error) {
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

// cosigVKey is the cosignature/v1 vkey of the Ed25519 signer key skey.
func cosigVKey(t *testing.T, skey string, v note.Verifier) string {
	vkey, err := verifierKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if cv, err := fnote.NewVerifierForCosignatureV1(c); err != nil || cv.KeyHash() != v.KeyHash() {
		t.Fatalf("cosignature key %s: %v", c, err)
	}
	return c
}

// TestWitnessedPublishing: with a 2-of-3 policy the published checkpoint
// carries two cosignatures and receipts say cosigned; with two witnesses
// down appends still succeed, nothing new is published, WitnessStatus
// and Unpublished say so; when one is back, publishing resumes.
func TestWitnessedPublishing(t *testing.T) {
	ctx := context.Background()
	ws := []*fakeWitness{newFakeWitness(t, "w1.test"), newFakeWitness(t, "w2.test"), newFakeWitness(t, "w3.test")}
	var cfgWs []Witness
	var keys []note.Verifier
	for _, w := range ws {
		cfgWs = append(cfgWs, Witness{Name: w.name, VKey: w.vkey, URL: w.URL + "/"})
		k, err := verify.ParseWitnessKey(w.vkey)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	l, err := Open(ctx, Config{Dir: t.TempDir(), JournalSegmentSize: 1 << 20, Witnesses: cfgWs, WitnessQuorum: 2, WitnessTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	policy := verify.WitnessPolicy{Keys: keys, Quorum: 2}
	receiptOf := func(id string, wait time.Duration) *verify.Receipt {
		t.Helper()
		r, err := l.Append(ctx, sampleTx(l, id, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
			rc, err := l.Receipt(ctx, r.Index, id)
			if err != nil {
				t.Fatal(err)
			}
			if rc.Checkpoint != "" || time.Now().After(deadline) {
				return rc
			}
		}
	}
	r := receiptOf("req-1", 10*time.Second)
	if !r.Cosigned {
		t.Fatalf("receipt not cosigned: %q", r.Checkpoint)
	}
	if _, err := verify.VerifyReceiptWith(ctx, nil, l.Verifier(), verify.Options{Witnesses: policy}, r, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.WitnessStatus(ctx); err != nil {
		t.Fatal(err)
	}

	ws[0].down.Store(true)
	ws[1].down.Store(true)
	r = receiptOf("req-2", 2*time.Second)
	if r.Checkpoint != "" {
		t.Fatalf("published with one witness of two needed: %q", r.Checkpoint)
	}
	err = l.WitnessStatus(ctx)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 witnesses answer, 2 needed") || !strings.Contains(err.Error(), "w1.test: answered 503") {
		t.Fatalf("WitnessStatus = %v", err)
	}
	if n := l.Unpublished(ctx); n != 1 {
		t.Fatalf("%d leaves unpublished, want 1", n)
	}
	if l.Ready() != nil {
		t.Fatalf("the ledger is not ready without its witnesses: %v", l.Ready())
	}

	ws[1].down.Store(false)
	for deadline := time.Now().Add(10 * time.Second); l.Unpublished(ctx) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("publishing did not resume")
		}
	}
}
