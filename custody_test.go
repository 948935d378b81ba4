package custody

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestVerdictMachine: a failure rejects and its code sticks (the first
// failure names the rejection); a flag only lowers a verified verdict;
// passes and skips leave the verdict alone; the header lists every
// outcome in order.
func TestVerdictMachine(t *testing.T) {
	tests := []struct {
		name        string
		steps       func(tx *Transaction)
		verdict     Verdict
		code        Code
		checkHeader string
	}{
		{"all pass", func(tx *Transaction) { tx.Pass(CheckModel, ""); tx.Pass(CheckReplay, "") }, "", "", "model=ok;replay=ok"},
		{"flag", func(tx *Transaction) {
			tx.Pass(CheckModel, "")
			tx.Flag(CheckContamination, CodeCrossRequestContamination, "d")
		}, Flagged, CodeCrossRequestContamination, "model=ok;contamination=cross_request_contamination"},
		{"fail after flag", func(tx *Transaction) {
			tx.Flag(CheckContamination, CodeCrossRequestContamination, "")
			tx.Fail(CheckModel, CodeModelMismatch, "")
		}, Rejected, CodeModelMismatch, "contamination=cross_request_contamination;model=model_mismatch"},
		{"first failure names it", func(tx *Transaction) {
			tx.Fail(CheckModel, CodeModelMismatch, "")
			tx.Fail(CheckReplay, CodeResponseReplayed, "")
			tx.Flag(CheckContamination, CodeCrossRequestContamination, "")
		}, Rejected, CodeModelMismatch, "model=model_mismatch;replay=response_replayed;contamination=cross_request_contamination"},
		{"skip", func(tx *Transaction) { tx.Skip(CheckPromptTokens, "no usage") }, "", "", "prompt_tokens=skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := &Transaction{}
			tt.steps(tx)
			if tx.Verdict != tt.verdict || tx.Code != tt.code {
				t.Errorf("verdict %q code %q, want %q %q", tx.Verdict, tx.Code, tt.verdict, tt.code)
			}
			if h := tx.ChecksHeader(); h != tt.checkHeader {
				t.Errorf("Custody-Checks %q, want %q", h, tt.checkHeader)
			}
		})
	}
}

func TestFallbackHeader(t *testing.T) {
	for chain, want := range map[string]string{"": "none", "a": "none", "a,b": "a>b", "a,b,c": "a>b>c"} {
		tx := &Transaction{}
		if chain != "" {
			tx.FallbackChain = strings.Split(chain, ",")
		}
		if got := tx.FallbackHeader(); got != want {
			t.Errorf("%q: %q, want %q", chain, got, want)
		}
	}
}

// TestErrorIs: a sentinel matches any error of its code, through
// wrapping; a specific error matches no other code; CodeOf finds the
// code in a chain and is internal otherwise; the status override wins.
func TestErrorIs(t *testing.T) {
	err := fmt.Errorf("forwarding: %w", Errorf(CodeModelMismatch, "the upstream answered %q", "x"))
	if !errors.Is(err, ErrModelMismatch) || errors.Is(err, ErrResponseReplayed) {
		t.Errorf("errors.Is: %v", err)
	}
	if errors.Is(ErrModelMismatch, Errorf(CodeModelMismatch, "specific")) {
		t.Error("a specific error matched as a sentinel")
	}
	if CodeOf(err) != CodeModelMismatch || CodeOf(errors.New("plain")) != CodeInternal {
		t.Errorf("CodeOf: %q %q", CodeOf(err), CodeOf(errors.New("plain")))
	}
	cause := errors.New("dial tcp: refused")
	w := Wrap(CodeUpstreamUnavailable, cause, "provider p is unreachable")
	if !errors.Is(w, cause) || w.Status() != CodeUpstreamUnavailable.Status() {
		t.Errorf("Wrap: %v status %d", w, w.Status())
	}
	if (&Error{Code: CodeUpstreamRejected, HTTPStatus: http.StatusNotFound}).Status() != http.StatusNotFound {
		t.Error("HTTPStatus does not override")
	}
	if Code("no_such_code").Status() != http.StatusInternalServerError {
		t.Error("an unknown code is not a 500")
	}
}

func TestCodes(t *testing.T) {
	tx := &Transaction{}
	tx.Pass(CheckModel, "")
	tx.Flag(CheckContamination, CodeCrossRequestContamination, "")
	tx.Fail(CheckReplay, CodeResponseReplayed, "")
	tx.Fail(CheckStream, CodeResponseReplayed, "")
	tx.Code = CodeFallbackNotPermitted // a refusal of no check's
	want := []Code{CodeCrossRequestContamination, CodeFallbackNotPermitted, CodeResponseReplayed}
	if got := tx.Codes(); !slices.Equal(got, want) {
		t.Errorf("Codes %v, want %v", got, want)
	}
}

// TestOutcomeTable: every code has one row, a check, a status and a type,
// and docs/checks.md lists each row as `check` | `code` | status | `type`.
func TestOutcomeTable(t *testing.T) {
	doc, err := os.ReadFile("docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Code]bool{}
	for _, r := range Outcomes() {
		if seen[r.Code] {
			t.Errorf("%s has two rows", r.Code)
		}
		seen[r.Code] = true
		if r.Check == "" || r.Status == 0 || r.Type == "" {
			t.Errorf("incomplete row %+v", r)
		}
		if r.Code.Check() != r.Check || r.Code.Status() != r.Status || r.Code.Type() != r.Type {
			t.Errorf("%s: the lookups disagree with its row", r.Code)
		}
		row := fmt.Sprintf("| `%s` | `%s` |", r.Check, r.Code)
		if !strings.Contains(string(doc), row) || !strings.Contains(string(doc), "`"+r.Type+"`") {
			t.Errorf("docs/checks.md has no row %s ... `%s`", row, r.Type)
		}
	}
	for _, c := range []Code{CodeContextLengthExceeded, CodeInvalidRequest, CodeRequestTooLarge, CodeUnauthorized, CodeForbidden,
		CodeNotFound, CodeMethodNotAllowed, CodeRateLimited, CodePromptTokenMismatch, CodeModelMismatch, CodeRequestIDMismatch,
		CodeResponseReplayed, CodeStreamInconsistent, CodeStreamTruncated, CodeResponseAmbiguous, CodeUpstreamErrorAsSuccess,
		CodeCrossRequestContamination, CodeCacheShared, CodeFallbackNotPermitted, CodeRouteQuarantined, CodeLedgerUnavailable,
		CodeIndexUnavailable, CodeUpstreamTimeout, CodeUpstreamUnavailable, CodeUpstreamRejected, CodeResponseTooLarge, CodeOverloaded,
		CodeClientClosed, CodeInternal} {
		if !seen[c] {
			t.Errorf("%s has no row in the outcome table", c)
		}
	}
}

// TestConclude: the verdict follows the outcomes alone, whatever order
// they came in.
func TestConclude(t *testing.T) {
	for _, tc := range []struct {
		name     string
		outcomes []Outcome
		verdict  Verdict
		code     Code
	}{
		{"none", nil, Verified, ""},
		{"passed and skipped", []Outcome{{Check: CheckModel, Status: StatusOK}, {Check: CheckCache, Status: StatusSkipped}}, Verified, ""},
		{"flag then fail", []Outcome{{Status: StatusFlagged, Code: CodeCacheShared}, {Status: StatusFailed, Code: CodeModelMismatch}}, Rejected, CodeModelMismatch},
		{"first failure wins", []Outcome{{Status: StatusFailed, Code: CodeResponseReplayed}, {Status: StatusFailed, Code: CodePromptTokenMismatch}}, Rejected, CodeResponseReplayed},
		{"first flag wins", []Outcome{{Status: StatusFlagged, Code: CodeCacheShared}, {Status: StatusFlagged, Code: CodeIndexUnavailable}}, Flagged, CodeCacheShared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := &Transaction{Outcomes: tc.outcomes, Verdict: Rejected, Code: CodeInternal} // stale: Conclude derives anew
			if v := tx.Conclude(); v != tc.verdict || tx.Verdict != tc.verdict || tx.Code != tc.code {
				t.Errorf("Conclude = %s %q, want %s %q", v, tx.Code, tc.verdict, tc.code)
			}
			if tx.Rejected() != (tc.verdict == Rejected) {
				t.Errorf("Rejected() = %v", tx.Rejected())
			}
		})
	}
}
