package index

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// FuzzEncodeTransaction: the hand-written encoder writes exactly what
// json.Marshal writes for a Transaction (omissions, nil and empty
// slices, escapes, zones), or defers to it.
func FuzzEncodeTransaction(f *testing.F) {
	f.Add("01JABCDEFGHJKMNPQRSTVWXYZ0", "acme", int64(1_800_000_000_123_456_789), 0, "gpt-4o", "<b>&\"x\"</b>", "é\u2028\xff", 3, true, uint64(7), []byte{1, 2, 0xfe})
	f.Add("", "", int64(0), -3600*5-1800, "", "", "", -1, false, uint64(0), []byte(nil))
	f.Add("x", "y", int64(-62_135_596_900_000_000), 75, "m", "", "", 2, false, uint64(1), []byte{})
	f.Fuzz(func(t *testing.T, id, tenant string, ns int64, zone int, model, s1, s2 string, n int, flag bool, cl uint64, commit []byte) {
		tx := &custody.Transaction{
			ID: id, Tenant: tenant, Time: time.Unix(0, ns).In(time.FixedZone("z", zone%(24*3600))), Endpoint: s1, Stream: flag, Canary: n%3 == 0, Sender: custody.Sender(s2),
			RequestedModel: model, Provider: s2, Region: s1, UpstreamModel: s2, ResponseModel: s1,
			Fingerprint: s2, ResponseID: id, Route: n, PathChange: !flag, Policy: s1, UseCase: s2,
			Decision: s1, Verdict: custody.Verdict(s2), Code: custody.Code(s1), Status: n * 7,
			PromptTokensLocal: n, PromptTokensReported: -n, CompletionTokens: n + 1,
			RequestCommitment: commit, Duration: time.Duration(ns),
		}
		switch n % 3 {
		case 0:
			tx.FallbackChain = []string{s1, s2}
			tx.Outcomes = []custody.Outcome{{Check: s1, Status: custody.Status(s2), Code: custody.Code(model), Detail: s2}, {Check: "x"}}
		case 1:
			tx.Outcomes, tx.FallbackChain = []custody.Outcome{}, []string{}
		}
		if flag {
			tx.ConfigLeaf = &cl
			tx.ResponseCommitment = commit
		}
		want, wantErr := json.Marshal(tx)
		got, err := EncodeTransaction(tx)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("EncodeTransaction error %v, json.Marshal's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("EncodeTransaction:\n%s\njson.Marshal:\n%s", got, want)
		}
	})
}
