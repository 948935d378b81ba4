package verify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custody-gateway/custody"
)

// LeafVersion is the value of the "v" field of the leaves this package
// writes for a client's transactions that name their config leaf;
// LeafVersion1 (no config_leaf field) for those that do not; LeafVersion3
// (an sender field, config_leaf when named) for custody's own traffic, a
// canary probe's or an evaluation suite's. A reader refuses others.
const (
	LeafVersion  = 2
	LeafVersion1 = 1
	LeafVersion3 = 3
)

// MaxLeafSize bounds an encoded leaf; tessera's own limit is larger.
const MaxLeafSize = 64 << 10

// ErrBadLeaf is wrapped by every DecodeLeaf failure.
var ErrBadLeaf = errors.New("verify: malformed leaf")

// leafV1 is the leaf, version 1. The field order here IS the canonical
// order of the encoding (encoding/json writes struct fields in declaration
// order), every field is always present (no omitempty), so one
// transaction has exactly one encoding. Do not reorder, rename or add
// fields without bumping LeafVersion and documenting it in docs/ledger.md.
type leafV1 struct {
	V        int    `json:"v"`
	ID       string `json:"id"`
	Tenant   string `json:"tenant"` // pseudonym, never the tenant id
	Time     string `json:"time"`   // RFC 3339, UTC, nanoseconds, trailing zeros trimmed
	Endpoint string `json:"endpoint"`
	Stream   bool   `json:"stream"`
	Canary   bool   `json:"canary"`
	// Sender is version 3's addition: canary or eval, the synthetic
	// traffic's sender. Absent in versions 1 and 2.
	Sender               string      `json:"sender,omitempty"`
	RequestedModel       string      `json:"requested_model"`
	Provider             string      `json:"provider"`
	Region               string      `json:"region"`
	UpstreamModel        string      `json:"upstream_model"`
	ResponseModel        string      `json:"response_model"`
	Fingerprint          string      `json:"system_fingerprint"`
	ResponseID           string      `json:"response_id"`
	Route                int         `json:"route"`
	FallbackChain        []string    `json:"fallback_chain"`
	PathChange           bool        `json:"path_change"`
	Policy               string      `json:"policy"`
	UseCase              string      `json:"use_case"`
	Decision             string      `json:"decision"`
	Checks               []outcomeV1 `json:"checks"`
	Verdict              string      `json:"verdict"`
	Code                 string      `json:"code"`
	Status               int         `json:"status"`
	PromptTokensLocal    int         `json:"prompt_tokens_local"`
	PromptTokensReported int         `json:"prompt_tokens_reported"`
	CompletionTokens     int         `json:"completion_tokens"`
	RequestCommitment    string      `json:"request_commitment"`  // lowercase hex, "" if none
	ResponseCommitment   string      `json:"response_commitment"` // lowercase hex, "" if none
	// ConfigLeaf is version 2's one addition: the index of the config
	// leaf in force. Absent (nil) exactly in version 1.
	ConfigLeaf *uint64 `json:"config_leaf,omitempty"`
	DurationNS int64   `json:"duration_ns"`
}

type outcomeV1 struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// EncodeLeaf returns the canonical leaf of tx, as is: the caller puts the
// tenant pseudonym in tx.Tenant (Log.Append does). The bytes are those
// encoding/json writes for leafV1 (appendLeaf writes them without
// reflection; FuzzEncodeLeaf holds the two equal).
func EncodeLeaf(tx *custody.Transaction) ([]byte, error) {
	b := appendLeaf(make([]byte, 0, 1536), tx) // a gateway leaf is 1.1–1.3 KB
	if len(b) > MaxLeafSize {
		return nil, fmt.Errorf("encoding leaf: %d bytes, limit %d", len(b), MaxLeafSize)
	}
	return b, nil
}

// DecodeLeaf parses a leaf. It accepts only the canonical encoding of a
// version it knows: decoding and re-encoding must give back b exactly.
// The returned transaction's Tenant is the pseudonym.
func DecodeLeaf(b []byte) (*custody.Transaction, error) {
	if len(b) > MaxLeafSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadLeaf, len(b))
	}
	var l leafV1
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadLeaf, err)
	}
	switch {
	case l.V == LeafVersion1 && l.ConfigLeaf == nil && l.Sender == "",
		l.V == LeafVersion && l.ConfigLeaf != nil && l.Sender == "":
	case l.V == LeafVersion3:
		if o := custody.Sender(l.Sender); !o.Synthetic() || !l.Canary {
			return nil, fmt.Errorf("%w: version 3 sender %q, canary %v (want canary or eval, and canary true)", ErrBadLeaf, l.Sender, l.Canary)
		}
	default:
		return nil, fmt.Errorf("%w: version %d", ErrBadLeaf, l.V)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return nil, fmt.Errorf("%w: time: %w", ErrBadLeaf, err)
	}
	reqC, err := hex.DecodeString(l.RequestCommitment)
	if err != nil {
		return nil, fmt.Errorf("%w: request_commitment: %w", ErrBadLeaf, err)
	}
	respC, err := hex.DecodeString(l.ResponseCommitment)
	if err != nil {
		return nil, fmt.Errorf("%w: response_commitment: %w", ErrBadLeaf, err)
	}
	tx := &custody.Transaction{
		ID:                   l.ID,
		Tenant:               l.Tenant,
		Time:                 t,
		Endpoint:             l.Endpoint,
		Stream:               l.Stream,
		Canary:               l.Canary,
		Sender:               custody.Sender(l.Sender),
		RequestedModel:       l.RequestedModel,
		Provider:             l.Provider,
		Region:               l.Region,
		UpstreamModel:        l.UpstreamModel,
		ResponseModel:        l.ResponseModel,
		Fingerprint:          l.Fingerprint,
		ResponseID:           l.ResponseID,
		Route:                l.Route,
		PathChange:           l.PathChange,
		Policy:               l.Policy,
		UseCase:              l.UseCase,
		Decision:             l.Decision,
		Verdict:              custody.Verdict(l.Verdict),
		Code:                 custody.Code(l.Code),
		Status:               l.Status,
		PromptTokensLocal:    l.PromptTokensLocal,
		PromptTokensReported: l.PromptTokensReported,
		CompletionTokens:     l.CompletionTokens,
		Duration:             time.Duration(l.DurationNS),
		ConfigLeaf:           l.ConfigLeaf,
	}
	if len(l.FallbackChain) > 0 {
		tx.FallbackChain = l.FallbackChain
	}
	if len(reqC) > 0 {
		tx.RequestCommitment = reqC
	}
	if len(respC) > 0 {
		tx.ResponseCommitment = respC
	}
	for _, o := range l.Checks {
		tx.Outcomes = append(tx.Outcomes, custody.Outcome{Check: o.Check, Status: custody.Status(o.Status), Code: custody.Code(o.Code), Detail: o.Detail})
	}
	again, err := EncodeLeaf(tx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadLeaf, err)
	}
	if !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: not in canonical form", ErrBadLeaf)
	}
	return tx, nil
}
