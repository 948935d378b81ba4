// Package custody is the domain of the custody inference-integrity gateway:
// the names every other package shares. A Transaction is one request that
// passed through the gateway (served or rejected); its Outcomes are the
// results of the integrity checks; its Verdict is what the client was told.
//
// Every integrity outcome has exactly one name, its Code. The same word is
// the "code" field of the OpenAI-shaped error body, the value in the
// Custody-Checks header, the label of custody_check_failures_total, the
// field in the ledger leaf and the heading in docs/checks.md.
//
// This package imports only the standard library.
package custody

import (
	"slices"
	"strings"
	"time"
)

// Verdict is what custody concluded about a transaction.
type Verdict string

const (
	// Verified: served, and every check that could run passed.
	Verified Verdict = "verified"
	// Flagged: served, but a non-blocking check raised an alarm (or a
	// check that was needed could not run).
	Flagged Verdict = "flagged"
	// Rejected: not served; the client received an error.
	Rejected Verdict = "rejected"
)

// Check names, as they appear in the Custody-Checks header and the leaf.
const (
	CheckCapacity      = "capacity"
	CheckPromptTokens  = "prompt_tokens"
	CheckModel         = "model"
	CheckRequestID     = "request_id"
	CheckReplay        = "replay"
	CheckStream        = "stream"
	CheckShape         = "shape"
	CheckContamination = "contamination"
	CheckMembers       = "members"  // strict members: checked response members appear once, exactly spelled
	CheckCache         = "cache"    // cached_tokens within what this tenant could have cached
	CheckContract      = "contract" // the answer honours what the request asked for (tools, format, limits)
	// CheckTranslation is no check but the record of a translated
	// request's members that custody carried as something else or
	// proved no-ops: its detail names them (never a value), and is its
	// value in Custody-Checks, e.g.
	// "translation=no-op:include,truncation carried:reasoning.effort".
	CheckTranslation = "translation"

	// The outcomes that are no integrity check's: the request itself,
	// authentication, limits, routing, the ledger, the upstream's
	// transport, the client, and custody's own failure.
	CheckRequest  = "request"
	CheckAuth     = "auth"
	CheckLimit    = "limit"
	CheckRoute    = "route"
	CheckLedger   = "ledger"
	CheckUpstream = "upstream"
	CheckClient   = "client"
	CheckInternal = "internal"
)

// Status is the result of one check.
type Status string

const (
	StatusOK      Status = "ok"      // the check ran and passed
	StatusSkipped Status = "skipped" // the check did not apply or lacked its input
	StatusFailed  Status = "failed"  // the check failed and the transaction was rejected
	StatusFlagged Status = "flagged" // the check failed, policy said serve and flag
)

// Outcome is the result of one check on one transaction. Detail never holds
// prompt or response text: numbers, ids and model names only.
type Outcome struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Code   Code   `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// HeaderValue is the outcome as written in Custody-Checks: "ok", "skipped",
// or the failing code; a translation's, the members it names.
func (o Outcome) HeaderValue() string {
	if o.Check == CheckTranslation && o.Status == StatusOK && o.Detail != "" {
		return o.Detail
	}
	switch o.Status {
	case StatusFailed, StatusFlagged:
		return string(o.Code)
	default:
		return string(o.Status)
	}
}

// EndpointReenroll is the Endpoint of the record of an admin's identity
// re-enrollment of a route (not a proxied request).
const EndpointReenroll = "custody.canary.reenroll"

// EndpointEval is the Endpoint of the record of an evaluation run: one
// leaf a run of a suite on a route, beside the leaves of its cases.
const EndpointEval = "custody.eval"

// Sender is who sent a transaction's request: a client of the gateway,
// or custody itself (a canary probe, an evaluation suite).
type Sender string

// The senders. A transaction's From is one of them.
const (
	SenderClient Sender = "client" // a client of the gateway
	SenderCanary Sender = "canary" // a canary probe
	SenderEval   Sender = "eval"   // an evaluation suite: a case, or the record of a run
)

// Synthetic reports whether o is custody's own traffic, recorded with
// Canary set.
func (o Sender) Synthetic() bool { return o == SenderCanary || o == SenderEval }

// From is who sent t's request: its Sender when recorded, else canary for
// synthetic traffic (leaves before version 3 did not tell a canary probe
// from an eval case; both were recorded as canary traffic), else client.
func (t *Transaction) From() Sender {
	switch {
	case t.Sender.Synthetic():
		return t.Sender
	case t.Canary:
		return SenderCanary
	}
	return SenderClient
}

// Transaction is everything custody knows about one request and its
// response, except their bytes: those are represented by salted
// commitments. It is what the ledger leaf encodes and the index stores.
type Transaction struct {
	ID       string    `json:"id"`
	Tenant   string    `json:"tenant"`
	Time     time.Time `json:"time"`
	Endpoint string    `json:"endpoint"` // chat.completions | completions | embeddings | messages | responses
	Stream   bool      `json:"stream,omitempty"`
	// Canary marks synthetic traffic: a canary probe's or an evaluation
	// suite's (Sender says which). Every leaf version records it.
	Canary bool `json:"canary,omitempty"`
	// Sender is who sent synthetic traffic, SenderCanary or SenderEval;
	// empty for a client's request, and for the synthetic traffic of a
	// leaf written before version 3, which did not record it (From reads
	// both).
	Sender Sender `json:"sender,omitempty"`

	RequestedModel string   `json:"requested_model"`
	Provider       string   `json:"provider,omitempty"` // config name of the provider that served
	Region         string   `json:"region,omitempty"`
	UpstreamModel  string   `json:"upstream_model,omitempty"` // model name sent upstream
	ResponseModel  string   `json:"response_model,omitempty"` // model field the upstream reported
	Fingerprint    string   `json:"system_fingerprint,omitempty"`
	ResponseID     string   `json:"response_id,omitempty"`
	Route          int      `json:"route"`                    // index of the route that served, or -1
	FallbackChain  []string `json:"fallback_chain,omitempty"` // providers tried, in order
	PathChange     bool     `json:"path_change,omitempty"`    // first time this (provider, model, fingerprint) was seen

	Policy   string `json:"policy,omitempty"`
	UseCase  string `json:"use_case,omitempty"`
	Decision string `json:"decision,omitempty"` // the policy's decision, e.g. "primary", "fallback_allowed"

	Outcomes []Outcome `json:"checks"`
	Verdict  Verdict   `json:"verdict"`
	Code     Code      `json:"code,omitempty"` // the rejecting (or first flagged) code
	Status   int       `json:"status"`         // HTTP status sent to the client

	PromptTokensLocal    int    `json:"prompt_tokens_local"`           // counted by custody; -1 if not counted
	PromptTokensReported int    `json:"prompt_tokens_reported"`        // upstream usage.prompt_tokens; -1 if absent
	CompletionTokens     int    `json:"completion_tokens"`             // upstream usage.completion_tokens; -1 if absent
	RequestCommitment    []byte `json:"request_commitment,omitempty"`  // SHA-256(salt || request bytes)
	ResponseCommitment   []byte `json:"response_commitment,omitempty"` // SHA-256(salt || response bytes)

	Duration time.Duration `json:"duration_ns"`

	// FinishReasons are the upstream's finish reasons, one per choice
	// (chat and completions' finish_reason, Messages' stop_reason), in
	// the order they came, each bounded (Bound). They are not part of
	// the leaf (json:"-"), whose format they would change: kept in memory
	// for the transaction's span (gen_ai.response.finish_reasons).
	FinishReasons []string `json:"-"`

	// ConfigLeaf is the log index of the config leaf (the rules) in force
	// when the transaction was recorded; nil before any. The ledger sets
	// it.
	ConfigLeaf *uint64 `json:"config_leaf,omitempty"`
}

// FallbackHeader is the value of Custody-Fallback: "none", or the providers
// tried joined by ">".
func (t *Transaction) FallbackHeader() string {
	if len(t.FallbackChain) <= 1 {
		return "none"
	}
	s := t.FallbackChain[0]
	for _, p := range t.FallbackChain[1:] {
		s += ">" + p
	}
	return s
}

// Fail records a failed (blocking) outcome: the transaction is rejected
// (with the first failed outcome's code).
func (t *Transaction) Fail(check string, code Code, detail string) {
	t.supersede(Outcome{Check: check, Status: StatusFailed, Code: code, Detail: detail})
	t.Conclude()
}

// Flag records a non-blocking failure; the transaction is served, flagged.
func (t *Transaction) Flag(check string, code Code, detail string) {
	t.supersede(Outcome{Check: check, Status: StatusFlagged, Code: code, Detail: detail})
	t.Conclude()
}

// supersede records a failure in place of the same check's earlier
// passing or skipped outcome, if any: a check has one outcome per
// transaction (a prompt the preflight let through that the upstream then
// refused as too long is capacity=context_length_exceeded, not
// capacity=ok;capacity=context_length_exceeded).
func (t *Transaction) supersede(o Outcome) {
	for i, prev := range t.Outcomes {
		if prev.Check == o.Check && (prev.Status == StatusOK || prev.Status == StatusSkipped) {
			t.Outcomes[i] = o
			return
		}
	}
	t.Outcomes = append(t.Outcomes, o)
}

// Conclude derives the verdict and its code from the outcomes, and is the
// only place either is derived: rejected with the first failed outcome's
// code; else flagged with the first flagged one's; else verified (no
// outcome failed, whatever passed or was skipped).
func (t *Transaction) Conclude() Verdict {
	t.Verdict, t.Code = Verified, ""
	for _, o := range t.Outcomes {
		switch {
		case o.Status == StatusFailed:
			t.Verdict, t.Code = Rejected, o.Code
			return t.Verdict
		case o.Status == StatusFlagged && t.Verdict == Verified:
			t.Verdict, t.Code = Flagged, o.Code
		}
	}
	return t.Verdict
}

// Rejected reports whether an outcome failed.
func (t *Transaction) Rejected() bool { return t.Conclude() == Rejected }

// Failure is the first failed outcome, if any.
func (t *Transaction) Failure() (Outcome, bool) {
	for _, o := range t.Outcomes {
		if o.Status == StatusFailed {
			return o, true
		}
	}
	return Outcome{}, false
}

// Pass records a passing outcome.
func (t *Transaction) Pass(check string, detail string) {
	t.Outcomes = append(t.Outcomes, Outcome{Check: check, Status: StatusOK, Detail: detail})
}

// Skip records a check that could not run; detail says why.
func (t *Transaction) Skip(check string, detail string) {
	t.Outcomes = append(t.Outcomes, Outcome{Check: check, Status: StatusSkipped, Detail: detail})
}

// Codes are the transaction's own code and those of its failed or
// flagged outcomes, each once, sorted: what the index finds it by, the
// trace's custody.check_codes and the codes custody_check_failures_total
// counts.
func (t *Transaction) Codes() []Code {
	var cs []Code
	if t.Code != "" {
		cs = append(cs, t.Code)
	}
	for _, o := range t.Outcomes {
		if (o.Status == StatusFailed || o.Status == StatusFlagged) && o.Code != "" {
			cs = append(cs, o.Code)
		}
	}
	slices.Sort(cs)
	return slices.Compact(cs)
}

// ChecksHeader is the value of Custody-Checks, e.g.
// "prompt_tokens=ok;model=ok;replay=ok".
func (t *Transaction) ChecksHeader() string {
	n := 0
	for _, o := range t.Outcomes {
		n += len(o.Check) + len(o.HeaderValue()) + 2
	}
	var b strings.Builder
	b.Grow(n) // the header's one allocation
	for i, o := range t.Outcomes {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(o.Check)
		b.WriteByte('=')
		b.WriteString(o.HeaderValue())
	}
	return b.String()
}
