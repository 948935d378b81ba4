package index

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

func TestPageSize(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		want  int
	}{
		{"zero is default", 0, DefaultLimit},
		{"negative is default", -5, DefaultLimit},
		{"one", 1, 1},
		{"max", MaxLimit, MaxLimit},
		{"over max is clamped", MaxLimit + 1, MaxLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Query{Limit: tt.limit}
			eq := EventQuery{Limit: tt.limit}
			if got := q.PageSize(); got != tt.want {
				t.Errorf("Query.PageSize() = %d, want %d", got, tt.want)
			}
			if got := eq.PageSize(); got != tt.want {
				t.Errorf("EventQuery.PageSize() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCodes(t *testing.T) {
	var tx custody.Transaction
	tx.Pass(custody.CheckModel, "")
	tx.Skip(custody.CheckStream, "not a stream")
	tx.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, "")
	tx.Fail(custody.CheckPromptTokens, custody.CodePromptTokenMismatch, "1 vs 700000")
	tx.Fail(custody.CheckReplay, custody.CodePromptTokenMismatch, "")
	got := Codes(&tx)
	want := []custody.Code{custody.CodeCrossRequestContamination, custody.CodePromptTokenMismatch}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Codes = %v, want %v", got, want)
	}
	if got := Codes(&custody.Transaction{Code: custody.CodeRateLimited}); len(got) != 1 || got[0] != custody.CodeRateLimited {
		t.Errorf("Codes of a bare code = %v", got)
	}
}

func TestErrNotFound(t *testing.T) {
	if !errors.Is(ErrNotFound, custody.ErrNotFound) {
		t.Error("ErrNotFound does not wrap custody.ErrNotFound")
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		name string
		tx   custody.Transaction
		want []string
	}{
		{"nothing", custody.Transaction{}, nil},
		{"same model once", custody.Transaction{RequestedModel: "m", ResponseModel: "m"}, []string{"model:m"}},
		{"substituted model", custody.Transaction{RequestedModel: "m", ResponseModel: "n"}, []string{"model:m", "model:n"}},
		{"rejected before upstream", custody.Transaction{RequestedModel: "m", Code: custody.CodeContextLengthExceeded}, []string{"code:context_length_exceeded", "model:m"}},
		{"odd model is cleaned", custody.Transaction{ResponseModel: "a\x00"}, []string{"model:a\uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terms(&tt.tx); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Terms = %q, want %q", got, tt.want)
			}
		})
	}
}
