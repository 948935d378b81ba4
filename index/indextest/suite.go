// Package indextest is the contract every index backend meets: one suite,
// run by each backend's tests against its own store.
//
//	func TestContract(t *testing.T) { indextest.Run(t, openFresh) }
//	func TestReopen(t *testing.T)   { indextest.RunReopen(t, newStore) }
//	func BenchmarkIndex(b *testing.B) { indextest.Bench(b, openFresh) }
package indextest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// Run runs the contract against fresh stores. open must return a new,
// empty index each call and close it at the test's cleanup.
func Run(t *testing.T, open func(t *testing.T) index.Index) {
	tests := []struct {
		name string
		fn   func(t *testing.T, x index.Index)
	}{
		{"RoundTrip", testRoundTrip},
		{"NotFound", testNotFound},
		{"UntrustedStrings", testUntrustedStrings},
		{"Upsert", testUpsert},
		{"UpsertWithinBatch", testUpsertWithinBatch},
		{"PutAllOrNothing", testPutAllOrNothing},
		{"SearchFilters", testSearchFilters},
		{"SearchBySender", testSearchBySender},
		{"Paging", testPaging},
		{"LimitClamp", testLimitClamp},
		{"Events", testEvents},
		{"Stats", testStats},
		{"Breakdown", testBreakdown},
		{"EventPaging", testEventPaging},
		{"EventOnce", testEventOnce},
		{"ClaimFirstWins", testClaimFirstWins},
		{"ClaimExpiry", testClaimExpiry},
		{"ClaimConcurrent", testClaimConcurrent},
		{"ClaimInvalid", testClaimInvalid},
		{"PruneClaims", testPruneClaims},
		{"PruneOnWrite", testPruneOnWrite},
		{"MaxLeafIndex", testMaxLeafIndex},
		{"Shards", testShards},
		{"CloseTwice", testCloseTwice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// t0 has nanoseconds so that a store keeping less precision is caught,
// and is in the past, before events stamped now.
var t0 = time.Date(2025, 11, 30, 1, 2, 3, 456789123, time.UTC)

// full is a record with every field set, as a served transaction that
// fell back and was flagged.
func full(id string) index.Record {
	tx := custody.Transaction{
		ID:                   id,
		Tenant:               "acme",
		Time:                 t0,
		Endpoint:             "chat.completions",
		Stream:               true,
		Canary:               true,
		RequestedModel:       "glm-5.3",
		Provider:             "backup",
		Region:               "eu-west-1",
		UpstreamModel:        "glm-5.3-0827",
		ResponseModel:        "glm-5.3-0901",
		Fingerprint:          "fp_abc",
		ResponseID:           "chatcmpl-1",
		Route:                1,
		FallbackChain:        []string{"primary", "backup"},
		PathChange:           true,
		Policy:               "default",
		UseCase:              "code-generation",
		Decision:             "fallback_allowed",
		Status:               200,
		PromptTokensLocal:    700,
		PromptTokensReported: 703,
		CompletionTokens:     -1,
		RequestCommitment:    []byte{1, 2, 3, 4},
		ResponseCommitment:   []byte{5, 6, 7, 8},
		Duration:             1234567 * time.Nanosecond,
	}
	tx.Pass(custody.CheckPromptTokens, "700<=703<=772")
	tx.Skip(custody.CheckRequestID, "no echo configured")
	tx.Flag(custody.CheckModel, custody.CodeModelMismatch, "glm-5.3-0901 not in accept")
	return index.Record{Transaction: tx, Shard: "custody.example/log/eu-1", LeafIndex: 42}
}

// ids lists the request ids of recs, in order.
func ids(recs []index.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func wantIDs(t *testing.T, what string, got []index.Record, want ...string) {
	t.Helper()
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("%s = %v, want %v", what, g, want)
	}
}

func mustPut(t *testing.T, x index.Index, recs ...index.Record) {
	t.Helper()
	if err := x.Put(t.Context(), recs...); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func mustGet(t *testing.T, x index.Index, id string) index.Record {
	t.Helper()
	r, err := x.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return r
}

func mustSearch(t *testing.T, x index.Index, q index.Query) []index.Record {
	t.Helper()
	rs, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return rs
}

func mustClaim(t *testing.T, x index.Index, key, id string, ttl time.Duration) string {
	t.Helper()
	got, err := x.ClaimResponse(t.Context(), key, id, ttl)
	if err != nil {
		t.Fatalf("ClaimResponse(%q, %q): %v", key, id, err)
	}
	return got
}

func isNotFound(err error) bool {
	return errors.Is(err, index.ErrNotFound) && errors.Is(err, custody.ErrNotFound)
}

func testCloseTwice(t *testing.T, x index.Index) {
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// seq returns n ids "<prefix>0000".."<prefix>NNNN", which sort as they count.
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return out
}
