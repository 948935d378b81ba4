package index

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/jsonw"
)

// appendTransaction appends what json.Marshal writes for t (custody's
// Transaction and its tags: the same fields, order, omissions and
// escapes), without reflection: the indexer encodes every record it
// writes. FuzzEncodeTransaction holds the two equal. ok is false for a
// time json.Marshal refuses (a year outside 0-9999, an offset with
// seconds), which the caller hands to json.Marshal for its error.
func appendTransaction(dst []byte, t *custody.Transaction) (_ []byte, ok bool) {
	if y := t.Time.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Time.Zone(); off%60 != 0 {
		return dst, false // an offset in seconds, which json.Marshal refuses
	}
	dst = jsonw.StringField(append(dst, '{'), `"id":`, t.ID)
	dst = jsonw.StringField(dst, `,"tenant":`, t.Tenant)
	dst = append(dst, `,"time":"`...)
	dst = append(t.Time.AppendFormat(dst, time.RFC3339Nano), '"')
	dst = jsonw.StringField(dst, `,"endpoint":`, t.Endpoint)
	if t.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	if t.Canary {
		dst = append(dst, `,"canary":true`...)
	}
	dst = strOmit(dst, `,"sender":`, string(t.Sender))
	dst = jsonw.StringField(dst, `,"requested_model":`, t.RequestedModel)
	dst = strOmit(dst, `,"provider":`, t.Provider)
	dst = strOmit(dst, `,"region":`, t.Region)
	dst = strOmit(dst, `,"upstream_model":`, t.UpstreamModel)
	dst = strOmit(dst, `,"response_model":`, t.ResponseModel)
	dst = strOmit(dst, `,"system_fingerprint":`, t.Fingerprint)
	dst = strOmit(dst, `,"response_id":`, t.ResponseID)
	dst = jsonw.IntField(dst, `,"route":`, int64(t.Route))
	if len(t.FallbackChain) > 0 {
		dst = jsonw.AppendStrings(append(dst, `,"fallback_chain":`...), t.FallbackChain)
	}
	if t.PathChange {
		dst = append(dst, `,"path_change":true`...)
	}
	dst = strOmit(dst, `,"policy":`, t.Policy)
	dst = strOmit(dst, `,"use_case":`, t.UseCase)
	dst = strOmit(dst, `,"decision":`, t.Decision)
	if t.Outcomes == nil {
		dst = append(dst, `,"checks":null`...)
	} else {
		dst = append(dst, `,"checks":[`...)
		for i, o := range t.Outcomes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.StringField(append(dst, '{'), `"check":`, o.Check)
			dst = jsonw.StringField(dst, `,"status":`, string(o.Status))
			dst = strOmit(dst, `,"code":`, string(o.Code))
			dst = strOmit(dst, `,"detail":`, o.Detail)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = jsonw.StringField(dst, `,"verdict":`, string(t.Verdict))
	dst = strOmit(dst, `,"code":`, string(t.Code))
	dst = jsonw.IntField(dst, `,"status":`, int64(t.Status))
	dst = jsonw.IntField(dst, `,"prompt_tokens_local":`, int64(t.PromptTokensLocal))
	dst = jsonw.IntField(dst, `,"prompt_tokens_reported":`, int64(t.PromptTokensReported))
	dst = jsonw.IntField(dst, `,"completion_tokens":`, int64(t.CompletionTokens))
	dst = bytesOmit(dst, `,"request_commitment":`, t.RequestCommitment)
	dst = bytesOmit(dst, `,"response_commitment":`, t.ResponseCommitment)
	dst = jsonw.IntField(dst, `,"duration_ns":`, int64(t.Duration))
	if t.ConfigLeaf != nil {
		dst = strconv.AppendUint(append(dst, `,"config_leaf":`...), *t.ConfigLeaf, 10)
	}
	return append(dst, '}'), true
}

func strOmit(dst []byte, name, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonw.StringField(dst, name, s)
}

func bytesOmit(dst []byte, name string, b []byte) []byte {
	if len(b) == 0 {
		return dst
	}
	dst = append(append(dst, name...), '"')
	return append(base64.StdEncoding.AppendEncode(dst, b), '"')
}
