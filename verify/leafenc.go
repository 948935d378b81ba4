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
// of strings, every field present, config_leaf only when set). It is on
// every request's path; json.Marshal of leafV1 cost a fifth of the
// ledger's share of a request in allocations and reflection.
func appendLeaf(dst []byte, tx *custody.Transaction) []byte {
	v := LeafVersion1
	if tx.ConfigLeaf != nil {
		v = LeafVersion
	}
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, int64(v), 10)
	dst = appendStringField(dst, `,"id":`, tx.ID)
	dst = appendStringField(dst, `,"tenant":`, tx.Tenant)
	dst = append(dst, `,"time":"`...)
	dst = tx.Time.UTC().AppendFormat(dst, time.RFC3339Nano) // digits, letters, '-', ':', '.': nothing to escape
	dst = append(dst, '"')
	dst = appendStringField(dst, `,"endpoint":`, tx.Endpoint)
	dst = appendBoolField(dst, `,"stream":`, tx.Stream)
	dst = appendBoolField(dst, `,"canary":`, tx.Canary)
	dst = appendStringField(dst, `,"requested_model":`, tx.RequestedModel)
	dst = appendStringField(dst, `,"provider":`, tx.Provider)
	dst = appendStringField(dst, `,"region":`, tx.Region)
	dst = appendStringField(dst, `,"upstream_model":`, tx.UpstreamModel)
	dst = appendStringField(dst, `,"response_model":`, tx.ResponseModel)
	dst = appendStringField(dst, `,"system_fingerprint":`, tx.Fingerprint)
	dst = appendStringField(dst, `,"response_id":`, tx.ResponseID)
	dst = appendIntField(dst, `,"route":`, int64(tx.Route))
	dst = append(dst, `,"fallback_chain":[`...)
	for i, p := range tx.FallbackChain {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.AppendString(dst, p)
	}
	dst = append(dst, ']')
	dst = appendBoolField(dst, `,"path_change":`, tx.PathChange)
	dst = appendStringField(dst, `,"policy":`, tx.Policy)
	dst = appendStringField(dst, `,"use_case":`, tx.UseCase)
	dst = appendStringField(dst, `,"decision":`, tx.Decision)
	dst = append(dst, `,"checks":[`...)
	for i, o := range tx.Outcomes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStringField(dst, `{"check":`, o.Check)
		dst = appendStringField(dst, `,"status":`, string(o.Status))
		dst = appendStringField(dst, `,"code":`, string(o.Code))
		dst = appendStringField(dst, `,"detail":`, o.Detail)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	dst = appendStringField(dst, `,"verdict":`, string(tx.Verdict))
	dst = appendStringField(dst, `,"code":`, string(tx.Code))
	dst = appendIntField(dst, `,"status":`, int64(tx.Status))
	dst = appendIntField(dst, `,"prompt_tokens_local":`, int64(tx.PromptTokensLocal))
	dst = appendIntField(dst, `,"prompt_tokens_reported":`, int64(tx.PromptTokensReported))
	dst = appendIntField(dst, `,"completion_tokens":`, int64(tx.CompletionTokens))
	dst = append(dst, `,"request_commitment":"`...)
	dst = hex.AppendEncode(dst, tx.RequestCommitment)
	dst = append(dst, `","response_commitment":"`...)
	dst = hex.AppendEncode(dst, tx.ResponseCommitment)
	dst = append(dst, '"')
	if tx.ConfigLeaf != nil {
		dst = append(dst, `,"config_leaf":`...)
		dst = strconv.AppendUint(dst, *tx.ConfigLeaf, 10)
	}
	dst = appendIntField(dst, `,"duration_ns":`, int64(tx.Duration))
	return append(dst, '}')
}

func appendStringField(dst []byte, name, s string) []byte {
	return jsonw.AppendString(append(dst, name...), s)
}

func appendIntField(dst []byte, name string, n int64) []byte {
	return strconv.AppendInt(append(dst, name...), n, 10)
}

func appendBoolField(dst []byte, name string, b bool) []byte {
	return strconv.AppendBool(append(dst, name...), b)
}
