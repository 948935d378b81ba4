package sim

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Fault is the name of one reproducible serving failure (listed in docs/checks.md and docs/canaries.md). The
// comment of each constant says how it shows on the wire and which custody
// check catches it; sim's tests prove the symptom.
type Fault string

const (
	// FaultPlaceholderSubstitution: prefill treats any prompt as over
	// capacity, substitutes a one-token placeholder, and decode is handed a
	// page table sized for the original prompt whose other entries are pages
	// freed by earlier requests. usage.prompt_tokens reports the placeholder:
	// 8 for chat (1 + the framing of one user message), 1 for completions.
	// The answer carries the earlier request's words and nonces. With
	// OwnershipTags the request fails closed (500 kv_ownership_violation)
	// whenever a stale page is read.
	// Caught by: prompt-token band (prompt_token_mismatch) and
	// cross-request contamination (cross_request_contamination).
	FaultPlaceholderSubstitution Fault = "placeholder-substitution"

	// FaultStaleKV: decode reads, after its own pages, the pages most
	// recently freed by earlier requests. usage is honest; the answer carries
	// the earlier request's nonces and words. With OwnershipTags: 500.
	// Caught by: cross-request contamination (cross_request_contamination).
	FaultStaleKV Fault = "stale-kv"

	// FaultResponseSwap: the response body is, verbatim, the previous
	// response of the same kind (endpoint, stream or not); this request's
	// own response is kept for the next caller (the redis-py desync). The
	// first request of a kind, with nothing to swap, is served normally.
	// Caught by: replay (response_replayed).
	FaultResponseSwap Fault = "response-swap"

	// FaultSilentFallback: served by another model, "sim-fallback-1", which
	// reports its own name and fingerprint and answers differently.
	// Caught by: model identity (model_mismatch).
	FaultSilentFallback Fault = "silent-fallback"

	// FaultModelLie: served by a close variant of the model (Variant+1)
	// that reports the requested name and the honest system_fingerprint.
	// The variant also repeats the prompt's nonce-like codes last first.
	// Caught by: the identity canary (statistical test over answers and
	// logprobs; its prompts hold no codes) and by an evaluation suite
	// that asks for codes in order; no check of a single response shows
	// it.
	FaultModelLie Fault = "model-lie"

	// FaultSnapshotDrift: the alias moved: `model` is the requested name
	// with another snapshot suffix ("sim-1-0827" -> "sim-1-0901"; a name
	// without a suffix gets "-0901" appended), a new system_fingerprint, and
	// the new snapshot answers slightly differently (Variant+2) and
	// repeats the prompt's nonce-like codes last first (what an evaluation
	// suite sees).
	// Caught by: model identity (model_mismatch against accept /
	// require_pinned; fingerprint change event).
	FaultSnapshotDrift Fault = "snapshot-drift"

	// FaultTruncate: the prompt is silently cut to the first half of its
	// words (a one-word prompt to nothing) and usage reports the truncated
	// count, below the true count. Caught by: prompt-token band
	// (prompt_token_mismatch).
	FaultTruncate Fault = "truncate"

	// FaultStreamInterleave: in a stream, every third chunk after the first
	// (chunks 1, 4, 7, ...) carries another stream's id and created (the
	// previous stream's, or a fresh one). No effect without stream.
	// Caught by: stream consistency (stream_inconsistent).
	FaultStreamInterleave Fault = "stream-interleave"

	// FaultErrorAs200: HTTP 200 whose body is not a success. The form is
	// chosen from the prompt's digest, or fixed by one of the sub-variants
	// below: an {"error":{...}} body, empty choices, finish_reason "abort",
	// or zero completion tokens with finish_reason "length".
	// Caught by: success shape (upstream_error_as_success).
	FaultErrorAs200 Fault = "error-as-200"
	// Sub-variants of FaultErrorAs200 (custody's additions to the original list).
	FaultErrorAs200Body        Fault = "error-as-200:error-body"
	FaultErrorAs200Empty       Fault = "error-as-200:empty-choices"
	FaultErrorAs200Abort       Fault = "error-as-200:abort"
	FaultErrorAs200EmptyLength Fault = "error-as-200:empty-length"

	// FaultOversize200: a prompt over Capacity is answered 200 (from its
	// first Capacity words) instead of 400 context_length_exceeded; usage
	// is honest. Prompts within capacity are unaffected.
	// Caught by: the oversize canary (and preflight capacity never forwards
	// such a prompt).
	FaultOversize200 Fault = "oversize-200"

	// FaultIDEchoMismatch: the X-Request-Id response header carries another
	// request's id (the previous one seen, or a fresh one).
	// Caught by: request-id echo (request_id_mismatch).
	FaultIDEchoMismatch Fault = "id-echo-mismatch"

	// FaultDuplicateID: the response `id` is the id of the previous response
	// of the same endpoint; the content is fresh. The first response of an
	// endpoint, with nothing to reuse, keeps its own id.
	// Caught by: replay (response_replayed, on the response id).
	FaultDuplicateID Fault = "duplicate-id"

	// FaultStreamCut: a stream ends after its last chunk (the usage chunk,
	// when asked for) without the terminal data: [DONE], as when the
	// connection drops. No effect without stream.
	// Caught by: stream consistency (stream_truncated).
	FaultStreamCut Fault = "stream-cut"

	// FaultAmbiguousModel: every response and chunk names its model twice:
	// "model":"sim-shadow-1" and then, case-variant, "Model" with the
	// honest name. A case-insensitive, last-wins reader (Go's
	// encoding/json) sees the honest model; an exact-case reader (Python's
	// json, most JavaScript) sees the shadow.
	// Caught by: strict members (response_ambiguous).
	FaultAmbiguousModel Fault = "ambiguous-model"

	// FaultSharedCache: the prefix cache (cache.go) ignores the request's
	// cache_salt, for lookups and inserts alike: a second tenant sending a
	// prefix another tenant sent reports it in
	// usage.prompt_tokens_details.cached_tokens and gets the fast time to
	// first token of a cache hit. Set it on the server, or on every request
	// of both tenants: a request without it still keys by its salt.
	// Caught by: the cache canary (cache_shared).
	FaultSharedCache Fault = "shared-cache"

	// FaultSharedCacheTiming: the prefix cache reports cached_tokens as if
	// it honoured cache_salt, but prefill skips whatever any tenant cached:
	// only the time to first token leaks the other tenant's prefix (the
	// side channel of a cache that is shared underneath a per-tenant
	// accounting). Caught by: the cache canary's timing test
	// (cache_shared).
	FaultSharedCacheTiming Fault = "shared-cache-timing"
)

// The contract faults (issue 30): a chat answer that breaks what its
// request asked for, as serving stacks break it (contract.go). Each is
// caught by the contract check, with the code named.
const (
	// FaultToolUndeclared: the answer calls "undeclared_tool", which the
	// request did not declare (a model that hallucinates a tool, a stack
	// that does not constrain names). Caught by: contract_tool_unknown.
	FaultToolUndeclared Fault = "tool-undeclared"
	// FaultToolArgumentsInvalid: the answer calls the first declared tool
	// with arguments that are not JSON (a tool parser that passed a
	// fragment through). Caught by: contract_arguments_invalid (flagged
	// by default: the model's), contract_schema_invalid for a strict tool.
	// On the Messages wire, whose tool_use input is an object, the input
	// is {"broken":true}, missing the properties the schema requires.
	FaultToolArgumentsInvalid Fault = "tool-arguments-invalid"
	// FaultToolChoiceIgnored: a forced tool_choice is answered with text,
	// and tool_choice none with a call. Caught by:
	// contract_tool_choice_ignored.
	FaultToolChoiceIgnored Fault = "tool-choice-ignored"
	// FaultFormatIgnored: response_format json_object or json_schema is
	// answered with the plain text. Caught by: contract_format_invalid.
	FaultFormatIgnored Fault = "format-ignored"
	// FaultMaxTokensExceeded: max_tokens is ignored: the answer runs past
	// it (and usage reports it). Caught by: contract_limit_exceeded.
	FaultMaxTokensExceeded Fault = "max-tokens-exceeded"
	// FaultStopKept: the first stop sequence is not honoured: it is kept
	// in the text, which goes on. Caught by: contract_stop_ignored.
	FaultStopKept Fault = "stop-kept"
	// FaultFinishToolCallsEmpty: finish_reason tool_calls with no call
	// (an engine whose tool parser failed dropped it). Caught by:
	// contract_finish_invalid.
	FaultFinishToolCallsEmpty Fault = "finish-tool-calls-empty"
	// FaultChoiceMisindexed: the one choice of a plain answer has index 1
	// where n was 1 (a stack that numbers choices its own way; a second
	// choice is the success shape's to catch). Caught by:
	// contract_choices_invalid.
	FaultChoiceMisindexed Fault = "choice-misindexed"
	// FaultLogprobsDropped: logprobs asked for are not sent. Caught by:
	// contract_logprobs_missing.
	FaultLogprobsDropped Fault = "logprobs-dropped"
)

// ContractFaults are the contract faults, each with the code that
// catches it.
func ContractFaults() []Fault {
	return []Fault{FaultToolUndeclared, FaultToolArgumentsInvalid, FaultToolChoiceIgnored, FaultFormatIgnored,
		FaultMaxTokensExceeded, FaultStopKept, FaultFinishToolCallsEmpty, FaultChoiceMisindexed, FaultLogprobsDropped}
}

// shadowModel is the model an exact-case reader sees under
// ambiguous-model.
const shadowModel = "sim-shadow-1"

// ambiguousWriter rewrites every "model":"X" written through it to
// "model":"sim-shadow-1","Model":"X" (FaultAmbiguousModel). Each Write
// must hold whole members, as the simulator's writes do.
type ambiguousWriter struct {
	http.ResponseWriter
}

var modelMember = regexp.MustCompile(`"model":("(?:[^"\\]|\\.)*")`)

func (w ambiguousWriter) WriteHeader(status int) {
	w.Header().Del("Content-Length") // the body grows
	w.ResponseWriter.WriteHeader(status)
}

func (w ambiguousWriter) Write(b []byte) (int, error) {
	out := modelMember.ReplaceAll(b, []byte(`"model":"`+shadowModel+`","Model":$1`))
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w ambiguousWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Faults lists every fault name ParseFault accepts, the original list's first.
func Faults() []Fault {
	return []Fault{
		FaultPlaceholderSubstitution, FaultStaleKV, FaultResponseSwap,
		FaultSilentFallback, FaultModelLie, FaultSnapshotDrift, FaultTruncate,
		FaultStreamInterleave, FaultErrorAs200, FaultOversize200,
		FaultIDEchoMismatch, FaultDuplicateID, FaultStreamCut, FaultAmbiguousModel,
		FaultSharedCache, FaultSharedCacheTiming, FaultErrorAs200Body, FaultErrorAs200Empty, FaultErrorAs200Abort,
		FaultErrorAs200EmptyLength, FaultToolUndeclared, FaultToolArgumentsInvalid, FaultToolChoiceIgnored,
		FaultFormatIgnored, FaultMaxTokensExceeded, FaultStopKept, FaultFinishToolCallsEmpty,
		FaultChoiceMisindexed, FaultLogprobsDropped,
	}
}

// ParseFault returns the fault named s (surrounding space ignored).
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	for _, f := range Faults() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown fault %q", s)
}

// faultSet is the faults in force for one request.
type faultSet map[Fault]bool

// parseFaultList parses a comma-separated X-Sim-Fault header value.
func parseFaultList(v string, into faultSet) error {
	for _, name := range strings.Split(v, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		f, err := ParseFault(name)
		if err != nil {
			return fmt.Errorf("%w: X-Sim-Fault: %w", errBadRequest, err)
		}
		into[f] = true
	}
	return nil
}

// errorAs200Form is the form FaultErrorAs200 takes for a request whose
// prompt digest is h, or "" when no error-as-200 fault is on.
func (fs faultSet) errorAs200Form(h uint64) Fault {
	for _, f := range []Fault{FaultErrorAs200Body, FaultErrorAs200Empty, FaultErrorAs200Abort, FaultErrorAs200EmptyLength} {
		if fs[f] {
			return f
		}
	}
	if fs[FaultErrorAs200] {
		return []Fault{FaultErrorAs200Body, FaultErrorAs200Empty, FaultErrorAs200Abort, FaultErrorAs200EmptyLength}[mix(h)%4]
	}
	return ""
}
