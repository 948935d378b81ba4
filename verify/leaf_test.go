package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
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
		{"eval, version 3", withSender(full, custody.SenderEval, nil)},
		{"canary, version 3 with a config leaf", withSender(full, custody.SenderCanary, new(uint64))},
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
		{"version 2 with an sender", v3(`"v":2,`, `"canary":true,"sender":"eval",`, `,"config_leaf":4`)},
		{"version 3 without an sender", v3(`"v":3,`, `"canary":true,`, ``)},
		{"version 3 from a client", v3(`"v":3,`, `"canary":true,"sender":"client",`, ``)},
		{"version 3, an unknown sender", v3(`"v":3,`, `"canary":true,"sender":"cron",`, ``)},
		{"version 3 not canary", v3(`"v":3,`, `"canary":false,"sender":"eval",`, ``)},
		{"version 3, sender out of place", v3(`"v":3,`, `"canary":true,`, `,"sender":"eval"`)},
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

func withSender(tx *custody.Transaction, o custody.Sender, configLeaf *uint64) *custody.Transaction {
	c := *tx
	c.Sender, c.ConfigLeaf = o, configLeaf
	return &c
}

// v3 is a leaf of r1 with the given version, canary/sender members and
// members before duration_ns.
func v3(version, canary, tail string) []byte {
	return []byte(`{` + version + `"id":"r1","tenant":"","time":"0001-01-01T00:00:00Z","endpoint":"","stream":false,` + canary +
		`"requested_model":"","provider":"","region":"","upstream_model":"","response_model":"","system_fingerprint":"","response_id":"",` +
		`"route":0,"fallback_chain":[],"path_change":false,"policy":"","use_case":"","decision":"","checks":[],"verdict":"","code":"",` +
		`"status":0,"prompt_tokens_local":0,"prompt_tokens_reported":0,"completion_tokens":0,"request_commitment":"","response_commitment":""` +
		tail + `,"duration_ns":0}`)
}

// TestLeafVersions: the leaves of every version decode, read as they were
// written, and re-encode to the same bytes. The version 1 and 2 leaves
// were written before the sender existed: an eval case's then, recorded
// as canary traffic, reads as canary traffic still; a version 3 leaf
// names its sender.
func TestLeafVersions(t *testing.T) {
	for _, tc := range []struct {
		file    string
		version int
		from    custody.Sender
		canary  bool
	}{
		{"leaf.json", LeafVersion1, custody.SenderClient, false},
		{"leaf-v2-canary.json", LeafVersion, custody.SenderCanary, true},
		{"leaf-v3-eval.json", LeafVersion3, custody.SenderEval, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.TrimSuffix(b, []byte("\n"))
			if !bytes.HasPrefix(b, fmt.Appendf(nil, `{"v":%d,`, tc.version)) {
				t.Fatalf("%s is not a version %d leaf", tc.file, tc.version)
			}
			tx, err := DecodeLeaf(b)
			if err != nil {
				t.Fatal(err)
			}
			if tx.From() != tc.from || tx.Canary != tc.canary {
				t.Errorf("from %q, canary %v; want %q, %v", tx.From(), tx.Canary, tc.from, tc.canary)
			}
			again, err := EncodeLeaf(tx)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Fatalf("re-encoded:\n got %s\nwant %s", again, b)
			}
		})
	}
}
