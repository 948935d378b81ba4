package adminapi

import (
	"encoding/json"
	"time"

	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/index"
)

// The answers of the admin API, as the server writes them and a client
// (the console) decodes them: one declaration of each shape, described
// for outside clients by openapi.json.

// Record is a record of GET /v1/custody/records: the transaction's
// ledger fields, its place in the log, and its duration in milliseconds
// (the leaf's duration_ns is the ledger's format, not the API's).
type Record struct {
	index.Record
	DurationMS float64 `json:"duration_ms"`
}

// MarshalJSON writes r without the ledger's duration_ns.
func (r Record) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Record)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "duration_ns")
	m["duration_ms"], _ = json.Marshal(r.DurationMS)
	return json.Marshal(m)
}

// RecordList is GET /v1/custody/records: a page, newest first;
// NextBefore is the cursor of the next page, nil on the last.
type RecordList struct {
	Object     string   `json:"object"` // "list"
	Data       []Record `json:"data"`
	NextBefore *string  `json:"next_before"`
}

// EventList is GET /v1/custody/events: a page of the timeline, newest
// first.
type EventList struct {
	Object     string        `json:"object"` // "list"
	Data       []index.Event `json:"data"`
	NextBefore *int64        `json:"next_before"`
}

// StatsRow is a row of GET /v1/custody/stats, with its bucket's start.
type StatsRow struct {
	index.StatsRow
	Start time.Time `json:"start"`
}

// Stats is GET /v1/custody/stats.
type Stats struct {
	Object   string     `json:"object"` // "stats"
	Since    time.Time  `json:"since"`
	Until    time.Time  `json:"until"`
	Buckets  int        `json:"buckets"`
	BucketMS float64    `json:"bucket_ms"`
	Data     []StatsRow `json:"data"`
}

// Breakdown is GET /v1/custody/breakdown.
type Breakdown struct {
	Object string               `json:"object"` // "breakdown"
	By     string               `json:"by"`
	Since  time.Time            `json:"since"`
	Until  time.Time            `json:"until"`
	Data   []index.BreakdownRow `json:"data"`
}

// LogStatus is GET /v1/custody/log: this replica's log, its size, the
// leaves no published checkpoint covers yet, its latest checkpoint and,
// with ledger.witnesses, the witness quorum's state.
type LogStatus struct {
	Object      string      `json:"object"` // "log"
	Origin      string      `json:"origin"`
	Size        uint64      `json:"size"`
	Unpublished uint64      `json:"unpublished"`
	Checkpoint  *Checkpoint `json:"checkpoint"` // nil before the first
	// Witnesses is nil without ledger.witnesses.
	Witnesses *WitnessQuorum `json:"witnesses"`
}

// Checkpoint is the log's latest checkpoint with the names that signed
// it: the log's own key, then any witnesses' cosignatures.
type Checkpoint struct {
	Origin       string    `json:"origin"`
	Size         uint64    `json:"size"`
	RootHash     string    `json:"root_hash"`
	Signers      []string  `json:"signers"`
	Cosignatures []string  `json:"cosignatures"` // signers other than the log
	SeenAt       time.Time `json:"seen_at"`      // when this replica first served it
	AgeMS        float64   `json:"age_ms"`
}

// WitnessQuorum is the witnesses' part of GET /v1/custody/log.
type WitnessQuorum struct {
	Quorum    int  `json:"quorum"`     // cosignatures a checkpoint needs before it is published
	QuorumMet bool `json:"quorum_met"` // enough witnesses answer for the next checkpoint
	// Reason is why the quorum is not met, as /readyz says it; "" when met.
	Reason string `json:"reason"`
	// Cosigned: the latest published checkpoint carries the quorum's valid
	// cosignatures.
	Cosigned  bool      `json:"cosigned"`
	Witnesses []Witness `json:"witnesses"`
}

// Witness is one witness of the quorum.
type Witness struct {
	Name         string     `json:"name"`
	Up           bool       `json:"up"`            // its last answer was a cosignature or a conflict it resolves
	LastError    string     `json:"last_error"`    // why it is not up; "" while up or before it was asked
	LastAnswer   *time.Time `json:"last_answer"`   // nil: it never answered
	LastCosigned *time.Time `json:"last_cosigned"` // nil: it never cosigned
}

// CanaryList is GET /v1/custody/canaries: every route's canary state.
type CanaryList struct {
	Object string        `json:"object"` // "list"
	Data   []RouteStatus `json:"data"`
}

// RouteStatus is one route in GET /v1/custody/canaries.
type RouteStatus struct {
	Route       string `json:"route"` // "model/provider"
	Model       string `json:"model"`
	Provider    string `json:"provider"`
	Index       int    `json:"index"`
	Quarantined bool   `json:"quarantined"`
	// OutOfService is set while the route is quarantined: since when and
	// why (its failing probes and evidence), as the canary runner knows.
	OutOfService *OutOfService `json:"out_of_service"`
	Last         *CanaryRun    `json:"last"` // nil before the first run
}

// OutOfService says since when and why a route is quarantined.
type OutOfService struct {
	Since  *time.Time `json:"since"` // nil when the runner does not know (a quarantine adopted from no run)
	Reason string     `json:"reason"`
}

// CanaryRun is a route's last canary run.
type CanaryRun struct {
	Time    time.Time     `json:"time"`
	Health  string        `json:"health"` // green | amber | red
	OK      bool          `json:"ok"`
	Results []ProbeResult `json:"results"`
}

// ProbeResult is one probe of a run.
type ProbeResult struct {
	Probe      string  `json:"probe"`
	Status     string  `json:"status"` // ok | failed | skipped | inconclusive
	Evidence   string  `json:"evidence"`
	Code       string  `json:"code"`
	DurationMS float64 `json:"duration_ms"`
}

// Reenrolled is POST /v1/custody/canaries/reenroll: the event of the
// re-enrollment and the request id of its ledger leaf.
type Reenrolled struct {
	Route     string      `json:"route"`
	Event     CanaryEvent `json:"event"`
	RequestID string      `json:"request_id"`
}

// CanaryEvent is a canary event as the admin API shows it.
type CanaryEvent struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"`
	Model      string    `json:"model"`
	Route      string    `json:"route"`
	RouteIndex int       `json:"route_index"`
	Probe      string    `json:"probe"`
	Detail     string    `json:"detail"`
}

// EvalStatusList is GET /v1/custody/evals: every route with the suites
// covering it.
type EvalStatusList struct {
	Object string      `json:"object"` // "list"
	Data   []EvalRoute `json:"data"`
}

// EvalRoute is one route of GET /v1/custody/evals.
type EvalRoute struct {
	Route    string        `json:"route"`
	Model    string        `json:"model"`
	Provider string        `json:"provider"`
	Index    int           `json:"index"`
	Suites   []SuiteStatus `json:"suites"`
}

// SuiteStatus is one suite covering a route.
type SuiteStatus struct {
	Suite      string      `json:"suite"`
	Passed     bool        `json:"passed"`      // the route's current path passed it
	RequiredBy []string    `json:"required_by"` // policies
	Last       *EvalReport `json:"last"`        // nil before the first run
}

// EvalReportList is POST /v1/custody/evals/run: the runs' reports.
type EvalReportList struct {
	Object string        `json:"object"` // "list"
	Data   []*EvalReport `json:"data"`
}

// EvalReport is a run as the admin API shows it: eval.Report in the
// API's style, durations in milliseconds, lists never null.
type EvalReport struct {
	Suite            string            `json:"suite"`
	SuiteDigest      string            `json:"suite_digest"`
	Route            string            `json:"route"`
	Model            string            `json:"model"`
	Index            int               `json:"index"`
	Path             eval.Path         `json:"path"`
	Trigger          eval.Trigger      `json:"trigger"`
	Time             time.Time         `json:"time"`
	DurationMS       float64           `json:"duration_ms"`
	Cases            []EvalCase        `json:"cases"`
	Passed           int               `json:"passed"`
	Total            int               `json:"total"`
	Ratio            float64           `json:"ratio"`
	Threshold        float64           `json:"threshold"`
	OK               bool              `json:"ok"`
	PathMoved        bool              `json:"path_moved"`
	PromptTokens     int               `json:"prompt_tokens"`
	CompletionTokens int               `json:"completion_tokens"`
	Baseline         *eval.BaselineRef `json:"baseline"`
	Regressions      []string          `json:"regressions"`
	Changed          []string          `json:"changed"`
	Failing          []string          `json:"failing"`
	LedgerID         string            `json:"ledger_id"` // "" when the leaf could not be recorded
	Contract         EvalContract      `json:"contract"`
}

// EvalContract is a run's answers held to their requests' contract, and
// the pass rate the suite requires of them (contract_pass_rate).
type EvalContract struct {
	Required float64        `json:"required"` // 0: none
	Checked  int            `json:"checked"`  // answers the contract check judged
	Passed   int            `json:"passed"`
	PassRate float64        `json:"pass_rate"` // passed / checked; 1 when none was judged
	Broken   map[string]int `json:"broken"`    // by code, one code per clause
	Reason   string         `json:"reason"`    // why the run falls short of required, naming the codes; "" when it does not
}

// EvalCase is one case of a run.
type EvalCase struct {
	ID        string  `json:"id"`
	Pass      bool    `json:"pass"`
	Reason    string  `json:"reason"` // the failed assertion, never answer text; "" when it passed
	Status    int     `json:"status"`
	Code      string  `json:"code"`     // custody's code if it rejected the answer, else ""
	Contract  string  `json:"contract"` // the contract check's finding: ok, the broken clause's code, "" when not judged
	LatencyMS float64 `json:"latency_ms"`
	Digest    string  `json:"digest"`
}
