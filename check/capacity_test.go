package check

import (
	"testing"

	"github.com/custody-gateway/custody"
)

func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		name            string
		local, capacity int
		want            custody.Code
	}{
		{"under", 10, 100, ""},
		{"at", 100, 100, ""},
		{"over by one", 101, 100, custody.CodeContextLengthExceeded},
		{"placeholder-sized capacity", 700000, 681280, custody.CodeContextLengthExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, Capacity(tc.local, tc.capacity), tc.want) })
	}
}

func TestMustCount(t *testing.T) {
	if MustCount(100, 100) || !MustCount(101, 100) {
		t.Fatal("a body no longer than capacity must skip the count; a longer one must not")
	}
}

// TestAdmit: each engine's rule at its boundary. llama.cpp refuses a
// prompt of exactly its context; vLLM refuses prompt + max_tokens over
// max_model_len, and gives a request without max_tokens what is left.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		rule                       Admission
		local, capacity, maxTokens int
		want                       custody.Code
	}{
		{"up to: at", AdmitUpTo, 100, 100, 50, ""},
		{"up to: over", AdmitUpTo, 101, 100, 0, custody.CodeContextLengthExceeded},
		{"llama.cpp: one below", AdmitBelow, 99, 100, 50, ""},
		{"llama.cpp: at", AdmitBelow, 100, 100, 0, custody.CodeContextLengthExceeded},
		{"vLLM: prompt + max_tokens at", AdmitWithOutput, 60, 100, 40, ""},
		{"vLLM: prompt + max_tokens over", AdmitWithOutput, 61, 100, 40, custody.CodeContextLengthExceeded},
		{"vLLM: no max_tokens, at", AdmitWithOutput, 100, 100, 0, ""},
		{"vLLM: no max_tokens, over", AdmitWithOutput, 101, 100, 0, custody.CodeContextLengthExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, Admit(tc.rule, tc.local, tc.capacity, tc.maxTokens), tc.want) })
	}
}
