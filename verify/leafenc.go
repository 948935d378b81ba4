package verify

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/jsonw"
)

// appendLeaf appends the canonical leaf of tx to dst: leafV1's fields in
// its declaration order, as encoding/json writes them (the same escaping
// of strings, every field present, sender only in version 3, config_leaf
// only when set). It is on
// every request's path; json.Marshal of leafV1 cost a fifth of the
// ledger's share of a request in allocations and reflection.
func appendLeaf(dst []byte, tx *custody.Transaction) []byte {
	v := LeafVersion1
	switch {
	case tx.Sender.Synthetic():
		v = LeafVersion3
	case tx.ConfigLeaf != nil:
		v = LeafVersion
	}
	dst = jsonw.IntField(dst, `{"v":`, int64(v))
	dst = jsonw.StringField(dst, `,"id":`, tx.ID)
	dst = jsonw.StringField(dst, `,"tenant":`, tx.Tenant)
	dst = append(dst, `,"time":"`...)
	dst = tx.Time.UTC().AppendFormat(dst, time.RFC3339Nano) // digits, letters, '-', ':', '.': nothing to escape
	dst = append(dst, '"')
	dst = jsonw.StringField(dst, `,"endpoint":`, tx.Endpoint)
	dst = jsonw.BoolField(dst, `,"stream":`, tx.Stream)
	dst = jsonw.BoolField(dst, `,"canary":`, tx.Canary)
	if v == LeafVersion3 {
		dst = jsonw.StringField(dst, `,"sender":`, string(tx.Sender))
	}
	dst = jsonw.StringField(dst, `,"requested_model":`, tx.RequestedModel)
	dst = jsonw.StringField(dst, `,"provider":`, tx.Provider)
	dst = jsonw.StringField(dst, `,"region":`, tx.Region)
	dst = jsonw.StringField(dst, `,"upstream_model":`, tx.UpstreamModel)
	dst = jsonw.StringField(dst, `,"response_model":`, tx.ResponseModel)
	dst = jsonw.StringField(dst, `,"system_fingerprint":`, tx.Fingerprint)
	dst = jsonw.StringField(dst, `,"response_id":`, tx.ResponseID)
	dst = jsonw.IntField(dst, `,"route":`, int64(tx.Route))
	dst = jsonw.AppendStrings(append(dst, `,"fallback_chain":`...), tx.FallbackChain)
	dst = jsonw.BoolField(dst, `,"path_change":`, tx.PathChange)
	dst = jsonw.StringField(dst, `,"policy":`, tx.Policy)
	dst = jsonw.StringField(dst, `,"use_case":`, tx.UseCase)
	dst = jsonw.StringField(dst, `,"decision":`, tx.Decision)
	dst = append(dst, `,"checks":[`...)
	for i, o := range tx.Outcomes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.StringField(dst, `{"check":`, o.Check)
		dst = jsonw.StringField(dst, `,"status":`, string(o.Status))
		dst = jsonw.StringField(dst, `,"code":`, string(o.Code))
		dst = jsonw.StringField(dst, `,"detail":`, o.Detail)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = jsonw.StringField(dst, `,"verdict":`, string(tx.Verdict))
	dst = jsonw.StringField(dst, `,"code":`, string(tx.Code))
	dst = jsonw.IntField(dst, `,"status":`, int64(tx.Status))
	dst = jsonw.IntField(dst, `,"prompt_tokens_local":`, int64(tx.PromptTokensLocal))
	dst = jsonw.IntField(dst, `,"prompt_tokens_reported":`, int64(tx.PromptTokensReported))
	dst = jsonw.IntField(dst, `,"completion_tokens":`, int64(tx.CompletionTokens))
	dst = append(dst, `,"request_commitment":"`...)
	dst = hex.AppendEncode(dst, tx.RequestCommitment)
	dst = append(dst, `","response_commitment":"`...)
	dst = hex.AppendEncode(dst, tx.ResponseCommitment)
	dst = append(dst, '"')
	if tx.ConfigLeaf != nil {
		dst = strconv.AppendUint(append(dst, `,"config_leaf":`...), *tx.ConfigLeaf, 10)
	}
	dst = jsonw.IntField(dst, `,"duration_ns":`, int64(tx.Duration))
	return append(dst, '}')
}
