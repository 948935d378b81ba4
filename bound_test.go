package custody

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBound(t *testing.T) {
	long := strings.Repeat("x", 70<<10)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, tc := range []struct {
		name, in   string
		wantPrefix string // "" with same: the input unchanged
		same       bool
	}{
		{name: "empty", in: "", same: true},
		{name: "short", in: "chatcmpl-abc", same: true},
		{name: "at the limit", in: strings.Repeat("a", BoundLimit), same: true},
		{name: "invalid UTF-8 within the limit", in: "fp_\xff\xfe", same: true},
		{name: "one over", in: strings.Repeat("a", BoundLimit+1), wantPrefix: strings.Repeat("a", 182)},
		{name: "70 KiB", in: long, wantPrefix: long[:182]},
		// 181 ASCII bytes then a 3-byte rune across the 182-byte cut:
		// the rune is dropped whole, never split.
		{name: "rune across the cut", in: strings.Repeat("a", 181) + strings.Repeat("€", 100), wantPrefix: strings.Repeat("a", 181)},
		{name: "runes up to the cut", in: strings.Repeat("€", 100), wantPrefix: strings.Repeat("€", 60)},
		{name: "4-byte runes", in: strings.Repeat("𝄞", 100), wantPrefix: strings.Repeat("𝄞", 45)},
		// An invalid byte in the prefix is U+FFFD, as the leaf's JSON
		// writes it.
		{name: "invalid byte in the prefix", in: "a\xffb" + long, wantPrefix: "a\uFFFDb" + long[:177]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bound(tc.in)
			if tc.same {
				if got != tc.in {
					t.Fatalf("Bound changed a string within the limit: %q", got)
				}
				if _, _, ok := ParseBound(got); ok {
					t.Errorf("ParseBound took %q for a bounded string", got)
				}
				if !IsBoundOf(got, tc.in) {
					t.Errorf("IsBoundOf(s, s) = false")
				}
				return
			}
			if len(got) > BoundLimit || !utf8.ValidString(got) {
				t.Fatalf("Bound = %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
			if want := tc.wantPrefix + "...sha256:" + sum(tc.in); got != want {
				t.Fatalf("Bound =\n %q\nwant\n %q", got, want)
			}
			if Bound(got) != got {
				t.Errorf("Bound of a bounded string changed it")
			}
			p, h, ok := ParseBound(got)
			if !ok || p != tc.wantPrefix || hex.EncodeToString(h[:]) != sum(tc.in) {
				t.Errorf("ParseBound = %q %x %v", p, h, ok)
			}
			if !IsBoundOf(got, tc.in) || IsBoundOf(got, tc.in+"y") || IsBoundOf(got, tc.wantPrefix) {
				t.Errorf("IsBoundOf does not tell the original from others")
			}
			// The leaf's JSON encoding leaves it as it is.
			var back string
			if err := json.Unmarshal(must(json.Marshal(got)), &back); err != nil || back != got {
				t.Errorf("a JSON round trip changed it: %q", back)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseBoundRefuses(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, s := range []string{
		"",
		"abc",
		"x...sha256:" + h[:63],             // short digest
		"x...sha256:" + strings.ToUpper(h), // not lowercase
		"x...sha256:" + h[:62] + "zz",      // not hex
		"x..sha256:" + h,                   // no mark
		strings.Repeat("a", 183) + "...sha256:" + h, // over the limit
	} {
		if _, _, ok := ParseBound(s); ok {
			t.Errorf("ParseBound(%q) ok", s)
		}
	}
	if p, _, ok := ParseBound("...sha256:" + h); !ok || p != "" {
		t.Errorf("an empty prefix: %q %v", p, ok)
	}
}

// TestTransactionBound: every string an upstream or a client chose is
// bounded, every outcome detail included; configuration names are not
// touched.
func TestTransactionBound(t *testing.T) {
	long := strings.Repeat("u", 70<<10)
	tx := &Transaction{RequestedModel: long, ResponseModel: long, Fingerprint: long, ResponseID: long, UseCase: long,
		Provider: "p", UpstreamModel: "m", Policy: "strict"}
	tx.Pass(CheckShape, long)
	tx.Skip(CheckPromptTokens, long)
	tx.Flag(CheckCache, CodeCacheShared, long)
	tx.Fail(CheckModel, CodeModelMismatch, long)
	tx.Outcomes = append(tx.Outcomes, Outcome{Check: "other", Status: StatusOK, Detail: long})
	tx.Bound()
	want := Bound(long)
	for name, s := range map[string]string{"requested_model": tx.RequestedModel, "response_model": tx.ResponseModel,
		"system_fingerprint": tx.Fingerprint, "response_id": tx.ResponseID, "use_case": tx.UseCase} {
		if s != want {
			t.Errorf("%s not bounded: %d bytes", name, len(s))
		}
	}
	for _, o := range tx.Outcomes {
		if o.Detail != want {
			t.Errorf("%s detail not bounded: %d bytes", o.Check, len(o.Detail))
		}
	}
	if tx.Provider != "p" || tx.UpstreamModel != "m" || tx.Policy != "strict" {
		t.Errorf("configuration names changed: %+v", tx)
	}
}
