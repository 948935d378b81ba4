package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/internal/inproc"
)

// The console reads only the admin API (the gateway's AdminAPI, called in
// this process once the operator's session is checked): the answers it
// decodes are the ones the OpenAPI document describes and an outside
// client gets, so the page shows nothing the API cannot.

// apiError is an answer of the admin API other than 200.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("admin API %d %s: %s", e.status, e.code, e.message)
}

// call GETs path?q from the admin API and decodes its JSON into v.
func (c *Console) call(ctx context.Context, path string, q url.Values, v any) error {
	u := path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	status, body, err := inproc.Get(ctx, c.cfg.API, u)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &e)
		return &apiError{status: status, code: e.Error.Code, message: e.Error.Message}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// Paths of the admin API the console reads (gateway.Path*).
const (
	apiRecords   = "/v1/custody/records"
	apiEvents    = "/v1/custody/events"
	apiStats     = "/v1/custody/stats"
	apiBreakdown = "/v1/custody/breakdown"
	apiLog       = "/v1/custody/log"
	apiCanaries  = "/v1/custody/canaries"
	apiEvals     = "/v1/custody/evals"
)

// apiRecord is a record of GET /v1/custody/records.
type apiRecord struct {
	index.Record
	DurationMS float64 `json:"duration_ms"`
}

type recordList struct {
	Data       []apiRecord `json:"data"`
	NextBefore *string     `json:"next_before"`
}

type eventList struct {
	Data       []index.Event `json:"data"`
	NextBefore *int64        `json:"next_before"`
}

type statsRow struct {
	index.StatsRow
	Start time.Time `json:"start"`
}

type statsAnswer struct {
	Since    time.Time  `json:"since"`
	Until    time.Time  `json:"until"`
	Buckets  int        `json:"buckets"`
	BucketMS float64    `json:"bucket_ms"`
	Data     []statsRow `json:"data"`
}

type breakdownAnswer struct {
	Data []index.BreakdownRow `json:"data"`
}

type logAnswer struct {
	Origin      string `json:"origin"`
	Size        uint64 `json:"size"`
	Unpublished uint64 `json:"unpublished"`
	// Witnesses is nil without ledger.witnesses.
	Witnesses *struct {
		Quorum    int    `json:"quorum"`
		QuorumMet bool   `json:"quorum_met"`
		Reason    string `json:"reason"`
		Cosigned  bool   `json:"cosigned"`
		Witnesses []struct {
			Name         string     `json:"name"`
			Up           bool       `json:"up"`
			LastError    string     `json:"last_error"`
			LastAnswer   *time.Time `json:"last_answer"`
			LastCosigned *time.Time `json:"last_cosigned"`
		} `json:"witnesses"`
	} `json:"witnesses"`
	Checkpoint *struct {
		Size         uint64    `json:"size"`
		Signers      []string  `json:"signers"`
		Cosignatures []string  `json:"cosignatures"`
		SeenAt       time.Time `json:"seen_at"`
		AgeMS        float64   `json:"age_ms"`
	} `json:"checkpoint"`
}

type routeAnswer struct {
	Route        string `json:"route"`
	Model        string `json:"model"`
	Provider     string `json:"provider"`
	Index        int    `json:"index"`
	Quarantined  bool   `json:"quarantined"`
	OutOfService *struct {
		Since  *time.Time `json:"since"`
		Reason string     `json:"reason"`
	} `json:"out_of_service"`
	Last *struct {
		Time    time.Time `json:"time"`
		Health  string    `json:"health"`
		OK      bool      `json:"ok"`
		Results []struct {
			Probe      string  `json:"probe"`
			Status     string  `json:"status"`
			Evidence   string  `json:"evidence"`
			Code       string  `json:"code"`
			DurationMS float64 `json:"duration_ms"`
		} `json:"results"`
	} `json:"last"`
}

type canaryList struct {
	Data []routeAnswer `json:"data"`
}

// evalList is GET /v1/custody/evals: every route with the suites
// covering it.
type evalList struct {
	Data []evalRoute `json:"data"`
}

type evalRoute struct {
	Route    string `json:"route"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Index    int    `json:"index"`
	Suites   []struct {
		Suite      string      `json:"suite"`
		Passed     bool        `json:"passed"`
		RequiredBy []string    `json:"required_by"`
		Last       *evalReport `json:"last"`
	} `json:"suites"`
}

type evalReport struct {
	Time  time.Time `json:"time"`
	Path  evalPath  `json:"path"`
	Cases []struct {
		ID     string `json:"id"`
		Pass   bool   `json:"pass"`
		Reason string `json:"reason"`
	} `json:"cases"`
	Trigger          string  `json:"trigger"`
	Passed           int     `json:"passed"`
	Total            int     `json:"total"`
	Threshold        float64 `json:"threshold"`
	OK               bool    `json:"ok"`
	PathMoved        bool    `json:"path_moved"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Baseline         *struct {
		Time     time.Time `json:"time"`
		Path     evalPath  `json:"path"`
		Pinned   bool      `json:"pinned"`
		Recorded bool      `json:"recorded"`
	} `json:"baseline"`
	Regressions []string `json:"regressions"`
	Changed     []string `json:"changed"`
	LedgerID    string   `json:"ledger_id"`
}

type evalPath struct {
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	Fingerprint string `json:"fingerprint"`
}

// String is the path as the events page writes one: provider / model /
// fingerprint.
func (p evalPath) String() string {
	return readablePath(p.Provider + "|" + p.Model + "|" + p.Fingerprint)
}
