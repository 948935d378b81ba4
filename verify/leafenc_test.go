package verify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// leafOf is tx as the leaf's fields: json.Marshal of it is the reference
// encoding appendLeaf must reproduce byte for byte.
func leafOf(tx *custody.Transaction) *leafV1 {
	v, sender := LeafVersion1, ""
	switch {
	case tx.Sender.Synthetic():
		v, sender = LeafVersion3, string(tx.Sender)
	case tx.ConfigLeaf != nil:
		v = LeafVersion
	}
	l := leafV1{
		V:                    v,
		Sender:               sender,
		ConfigLeaf:           tx.ConfigLeaf,
		ID:                   tx.ID,
		Tenant:               tx.Tenant,
		Time:                 tx.Time.UTC().Format(time.RFC3339Nano),
		Endpoint:             tx.Endpoint,
		Stream:               tx.Stream,
		Canary:               tx.Canary,
		RequestedModel:       tx.RequestedModel,
		Provider:             tx.Provider,
		Region:               tx.Region,
		UpstreamModel:        tx.UpstreamModel,
		ResponseModel:        tx.ResponseModel,
		Fingerprint:          tx.Fingerprint,
		ResponseID:           tx.ResponseID,
		Route:                tx.Route,
		FallbackChain:        tx.FallbackChain,
		PathChange:           tx.PathChange,
		Policy:               tx.Policy,
		UseCase:              tx.UseCase,
		Decision:             tx.Decision,
		Checks:               make([]outcomeV1, len(tx.Outcomes)),
		Verdict:              string(tx.Verdict),
		Code:                 string(tx.Code),
		Status:               tx.Status,
		PromptTokensLocal:    tx.PromptTokensLocal,
		PromptTokensReported: tx.PromptTokensReported,
		CompletionTokens:     tx.CompletionTokens,
		RequestCommitment:    hex.EncodeToString(tx.RequestCommitment),
		ResponseCommitment:   hex.EncodeToString(tx.ResponseCommitment),
		DurationNS:           int64(tx.Duration),
	}
	if l.FallbackChain == nil {
		l.FallbackChain = []string{}
	}
	for i, o := range tx.Outcomes {
		l.Checks[i] = outcomeV1{Check: o.Check, Status: string(o.Status), Code: string(o.Code), Detail: o.Detail}
	}
	return &l
}

// FuzzEncodeLeaf: the hand-written encoder writes exactly what
// encoding/json writes for leafV1, for any strings (escapes, non-ASCII,
// invalid UTF-8), numbers and flags.
func FuzzEncodeLeaf(f *testing.F) {
	f.Add("01JABCDEFGHJKMNPQRSTVWXYZ0", "t-pseudo", int64(1_800_000_000_123_456_789), "gpt-4o", "openai", "<b>&\"x\"</b>", "\u2028\x00\xff", 3, true, uint64(7), []byte{1, 2, 0xfe})
	f.Add("", "", int64(0), "", "", "", "", -1, false, uint64(0), []byte(nil))
	f.Fuzz(func(t *testing.T, id, tenant string, ns int64, model, provider, s1, s2 string, n int, flag bool, cl uint64, commit []byte) {
		tx := &custody.Transaction{
			ID: id, Tenant: tenant, Time: time.Unix(0, ns), Endpoint: s1, Stream: flag, Canary: !flag,
			RequestedModel: model, Provider: provider, Region: s2, UpstreamModel: s1, ResponseModel: s2,
			Fingerprint: s1 + s2, ResponseID: id + s1, Route: n, PathChange: flag, Policy: s2, UseCase: s1,
			Decision: s2, Verdict: custody.Verdict(s1), Code: custody.Code(s2), Status: n * 7,
			PromptTokensLocal: n, PromptTokensReported: -n, CompletionTokens: n + 1,
			RequestCommitment: commit, Duration: time.Duration(ns),
		}
		if n%2 == 0 {
			tx.FallbackChain = []string{provider, s1}
			tx.Outcomes = []custody.Outcome{{Check: s1, Status: custody.Status(s2), Code: custody.Code(model), Detail: s2 + s1}, {Check: "x"}}
		}
		if flag {
			tx.ConfigLeaf = &cl
			tx.ResponseCommitment = commit
		}
		tx.Sender = []custody.Sender{"", custody.SenderClient, custody.SenderCanary, custody.SenderEval}[cl%4]
		want, err := json.Marshal(leafOf(tx))
		if err != nil {
			t.Skip(err) // a time json cannot write
		}
		if got := appendLeaf(nil, tx); !bytes.Equal(got, want) {
			t.Fatalf("appendLeaf:\n%s\njson.Marshal:\n%s", got, want)
		}
	})
}
