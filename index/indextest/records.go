package indextest

import (
	"reflect"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func testRoundTrip(t *testing.T, x index.Index) {
	want := full("req-full")
	mustPut(t, x, want)
	got := mustGet(t, x, want.ID)
	if !got.Time.Equal(want.Time) || got.Time.Location() != time.UTC {
		t.Errorf("Time = %v, want %v in UTC", got.Time, want.Time)
	}
	got.Time = want.Time
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get round trip:\n got %+v\nwant %+v", got, want)
	}

	// A time in another zone comes back as the same instant, in UTC.
	zoned := full("req-zoned")
	zoned.Time = t0.In(time.FixedZone("x", 5*3600))
	mustPut(t, x, zoned)
	if got := mustGet(t, x, zoned.ID).Time; !got.Equal(t0) || got.Location() != time.UTC {
		t.Errorf("zoned Time = %v, want %v in UTC", got, t0)
	}

	// A minimal record (a rejection before any upstream) round trips too.
	min := index.Record{Transaction: custody.Transaction{ID: "req-min", Time: t0, Route: -1}, LeafIndex: -1}
	min.Fail(custody.CheckCapacity, custody.CodeContextLengthExceeded, "700000>681280")
	mustPut(t, x, min)
	gotMin := mustGet(t, x, min.ID)
	gotMin.Time = min.Time
	if !reflect.DeepEqual(gotMin, min) {
		t.Errorf("minimal round trip:\n got %+v\nwant %+v", gotMin, min)
	}
}

func testNotFound(t *testing.T, x index.Index) {
	if _, err := x.Get(t.Context(), "no-such-request"); !isNotFound(err) {
		t.Errorf("Get of an unknown id: err = %v, want ErrNotFound", err)
	}
	mustPut(t, x, full("req-1"))
	if _, err := x.Search(t.Context(), index.Query{Before: "no-such-request"}); !isNotFound(err) {
		t.Errorf("Search with an unknown cursor: err = %v, want ErrNotFound", err)
	}
}

// testUntrustedStrings: the response model comes from the upstream and
// may hold NUL bytes and invalid UTF-8; the record must still be stored.
func testUntrustedStrings(t *testing.T, x index.Index) {
	r := full("req-odd")
	r.ResponseModel = "m\x00odel\xff"
	r.Outcomes[2].Detail = "got \x00\xfe"
	mustPut(t, x, r)
	got := mustGet(t, x, r.ID)
	// JSON, like the ledger leaf, keeps NUL and replaces invalid UTF-8.
	if want := "m\x00odel\uFFFD"; got.ResponseModel != want {
		t.Errorf("ResponseModel = %q, want %q", got.ResponseModel, want)
	}
	wantIDs(t, "Search by the odd model", mustSearch(t, x, index.Query{Model: r.ResponseModel}), r.ID)
	if err := x.AddEvents(t.Context(), index.Event{Type: index.EventViolation, Model: r.ResponseModel, Detail: "\x00\xff"}); err != nil {
		t.Errorf("AddEvents with odd strings: %v", err)
	}
	if got := mustClaim(t, x, "id\x00\xff", "req-a", time.Minute); got != "req-a" {
		t.Errorf("claim of an odd key = %q", got)
	}
	if got := mustClaim(t, x, "id\x00\xfe", "req-b", time.Minute); got != "req-b" {
		t.Errorf("claim of another odd key = %q, want req-b (keys are exact bytes)", got)
	}
}

func testUpsert(t *testing.T, x index.Index) {
	ctx := t.Context()
	code := index.Query{Code: custody.CodeModelMismatch}

	// Indexed before sequencing: no leaf index, no failing code.
	r := full("req-up")
	r.LeafIndex = -1
	r.Outcomes, r.Verdict, r.Code = nil, custody.Verified, ""
	mustPut(t, x, r)
	mustPut(t, x, r) // idempotent
	wantIDs(t, "Search all after two Puts", mustSearch(t, x, index.Query{}), "req-up")
	wantIDs(t, "Search by code before the flag", mustSearch(t, x, code))

	// The sequenced version wins, with its codes.
	seqd := full("req-up")
	mustPut(t, x, seqd)
	if got := mustGet(t, x, "req-up"); got.LeafIndex != 42 || got.Verdict != custody.Flagged {
		t.Errorf("after sequenced Put: leaf %d verdict %q, want 42 flagged", got.LeafIndex, got.Verdict)
	}
	wantIDs(t, "Search by code after the flag", mustSearch(t, x, code), "req-up")

	// A late duplicate without a leaf index changes nothing, codes included.
	mustPut(t, x, r)
	if got := mustGet(t, x, "req-up"); got.LeafIndex != 42 || got.Verdict != custody.Flagged {
		t.Errorf("after late unsequenced Put: leaf %d verdict %q, want 42 flagged", got.LeafIndex, got.Verdict)
	}
	wantIDs(t, "Search by code after the late Put", mustSearch(t, x, code), "req-up")
	wantIDs(t, "Search by verdict after the late Put", mustSearch(t, x, index.Query{Verdict: custody.Verified}))

	// The same leaf index again replaces the record, and its codes.
	same := seqd
	same.Outcomes, same.Verdict, same.Code, same.Tenant = nil, custody.Verified, "", "other"
	same.ResponseModel = "glm-5.3-0827"
	mustPut(t, x, same)
	if got := mustGet(t, x, "req-up"); got.Tenant != "other" {
		t.Errorf("after Put with an equal leaf index: tenant %q, want other", got.Tenant)
	}
	wantIDs(t, "Search by code after the codes went", mustSearch(t, x, code))
	wantIDs(t, "Search by the old response model", mustSearch(t, x, index.Query{Model: seqd.ResponseModel}))
	wantIDs(t, "Search by the new response model", mustSearch(t, x, index.Query{Model: "glm-5.3-0827"}), "req-up")
	wantIDs(t, "Search by the requested model", mustSearch(t, x, index.Query{Model: "glm-5.3"}), "req-up")
	wantIDs(t, "Search by old tenant", mustSearch(t, x, index.Query{Tenant: "acme"}))
	if err := x.Put(ctx); err != nil {
		t.Errorf("empty Put: %v", err)
	}
}

func testUpsertWithinBatch(t *testing.T, x index.Index) {
	a3, a2 := full("req-a"), full("req-a")
	a3.LeafIndex, a2.LeafIndex, a2.Tenant = 3, 2, "loser"
	b1, b2 := full("req-b"), full("req-b")
	b1.LeafIndex, b2.LeafIndex = 4, 4
	b1.Tenant, b2.Tenant = "first", "second"
	b2.Outcomes, b2.Verdict, b2.Code = nil, custody.Verified, ""
	mustPut(t, x, a3, b1, a2, b2)
	if got := mustGet(t, x, "req-a"); got.LeafIndex != 3 || got.Tenant != "acme" {
		t.Errorf("req-a: leaf %d tenant %q, want 3 acme (greater leaf wins)", got.LeafIndex, got.Tenant)
	}
	if got := mustGet(t, x, "req-b"); got.Tenant != "second" {
		t.Errorf("req-b: tenant %q, want second (later wins a tie)", got.Tenant)
	}
	wantIDs(t, "Search by code", mustSearch(t, x, index.Query{Code: custody.CodeModelMismatch}), "req-a")
}

func testPutAllOrNothing(t *testing.T, x index.Index) {
	bad := full("")
	if err := x.Put(t.Context(), full("req-ok"), bad); err == nil {
		t.Fatal("Put of a record without an id succeeded")
	}
	if _, err := x.Get(t.Context(), "req-ok"); !isNotFound(err) {
		t.Errorf("the valid record of a failed batch was stored: err = %v", err)
	}
	neg := full("req-neg")
	neg.LeafIndex = -2
	if err := x.Put(t.Context(), neg); err == nil {
		t.Error("Put with leaf index -2 succeeded")
	}
}

// searchSet is six records across tenants, models, providers, verdicts,
// codes and times; r5 and r6 share a time, so id breaks the tie.
func searchSet() []index.Record {
	mk := func(id, tenant string, sec int, requested, response, provider string) index.Record {
		return index.Record{Transaction: custody.Transaction{
			ID: id, Tenant: tenant, Time: t0.Add(time.Duration(sec) * time.Second),
			RequestedModel: requested, ResponseModel: response, Provider: provider, Verdict: custody.Verified,
		}, Shard: "s", LeafIndex: int64(sec)}
	}
	r1 := mk("r1", "a", 1, "m1", "m1", "p1")
	r2 := mk("r2", "a", 2, "m1", "m2", "p2")
	r2.Fail(custody.CheckModel, custody.CodeModelMismatch, "m2")
	r3 := mk("r3", "b", 3, "m2", "m2", "p1")
	r3.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, "")
	r4 := mk("r4", "b", 4, "m1", "", "")
	r4.Fail(custody.CheckCapacity, custody.CodeContextLengthExceeded, "")
	r5 := mk("r5", "a", 5, "m3", "m3", "p2")
	r5.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, "")
	r5.Fail(custody.CheckPromptTokens, custody.CodePromptTokenMismatch, "")
	r6 := mk("r6", "c", 5, "m1", "m1", "p1")
	return []index.Record{r1, r2, r3, r4, r5, r6}
}

func testSearchFilters(t *testing.T, x index.Index) {
	mustPut(t, x, searchSet()...)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	tests := []struct {
		name string
		q    index.Query
		want []string
	}{
		{"all", index.Query{}, []string{"r6", "r5", "r4", "r3", "r2", "r1"}},
		{"request id", index.Query{RequestID: "r3"}, []string{"r3"}},
		{"unknown request id", index.Query{RequestID: "r9"}, nil},
		{"tenant", index.Query{Tenant: "a"}, []string{"r5", "r2", "r1"}},
		{"model as response", index.Query{Model: "m2"}, []string{"r3", "r2"}},
		{"model as requested", index.Query{Model: "m1"}, []string{"r6", "r4", "r2", "r1"}},
		{"provider", index.Query{Provider: "p1"}, []string{"r6", "r3", "r1"}},
		{"verdict rejected", index.Query{Verdict: custody.Rejected}, []string{"r5", "r4", "r2"}},
		{"verdict flagged", index.Query{Verdict: custody.Flagged}, []string{"r3"}},
		{"code of a flag", index.Query{Code: custody.CodeCrossRequestContamination}, []string{"r5", "r3"}},
		{"code of a failure", index.Query{Code: custody.CodePromptTokenMismatch}, []string{"r5"}},
		{"code of the transaction", index.Query{Code: custody.CodeModelMismatch}, []string{"r2"}},
		{"code nobody has", index.Query{Code: custody.CodeResponseReplayed}, nil},
		{"since is inclusive", index.Query{Since: at(5)}, []string{"r6", "r5"}},
		{"until is exclusive", index.Query{Until: at(1)}, nil},
		{"until one ns later", index.Query{Until: at(1).Add(time.Nanosecond)}, []string{"r1"}},
		{"range", index.Query{Since: at(2), Until: at(4)}, []string{"r3", "r2"}},
		{"since one ns later", index.Query{Since: at(2).Add(time.Nanosecond), Until: at(4)}, []string{"r3"}},
		{"tenant and verdict", index.Query{Tenant: "a", Verdict: custody.Rejected}, []string{"r5", "r2"}},
		{"tenant, model, verdict, code", index.Query{Tenant: "b", Model: "m1", Verdict: custody.Rejected, Code: custody.CodeContextLengthExceeded}, []string{"r4"}},
		{"code and tenant", index.Query{Code: custody.CodeCrossRequestContamination, Tenant: "b"}, []string{"r3"}},
		{"code and since", index.Query{Code: custody.CodeCrossRequestContamination, Since: at(4)}, []string{"r5"}},
		{"code and until", index.Query{Code: custody.CodeCrossRequestContamination, Until: at(4)}, []string{"r3"}},
		{"model, provider, tenant", index.Query{Model: "m1", Provider: "p1", Tenant: "c"}, []string{"r6"}},
		{"provider and request id", index.Query{Provider: "p2", RequestID: "r2"}, []string{"r2"}},
		{"filters that exclude each other", index.Query{Tenant: "c", Verdict: custody.Rejected}, nil},
		{"limit", index.Query{Limit: 2}, []string{"r6", "r5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantIDs(t, "Search", mustSearch(t, x, tt.q), tt.want...)
		})
	}
}

func testPaging(t *testing.T, x index.Index) {
	// 25 records, three to a timestamp, so pages split ties.
	var recs []index.Record
	for i, id := range seq("p", 25) {
		r := full(id)
		r.Time = t0.Add(time.Duration(i/3) * time.Millisecond)
		if i%2 == 0 {
			r.Outcomes, r.Verdict, r.Code = nil, custody.Verified, ""
		}
		recs = append(recs, r)
	}
	mustPut(t, x, recs...)
	for _, q := range []index.Query{{}, {Code: custody.CodeModelMismatch}, {Tenant: "acme", Since: t0.Add(time.Millisecond)}} {
		all := mustSearch(t, x, index.Query{Code: q.Code, Tenant: q.Tenant, Since: q.Since, Limit: index.MaxLimit})
		var paged []index.Record
		q.Limit = 4
		for range 20 {
			page := mustSearch(t, x, q)
			if len(page) > 4 {
				t.Fatalf("page of %d records, limit 4", len(page))
			}
			paged = append(paged, page...)
			if len(page) < 4 {
				break
			}
			q.Before = page[len(page)-1].ID
		}
		if len(all) == 0 {
			t.Fatalf("%+v matched nothing", q)
		}
		wantIDs(t, "pages joined", paged, ids(all)...)
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			if a.Time.Before(b.Time) || (a.Time.Equal(b.Time) && a.ID < b.ID) {
				t.Errorf("%s before %s: not newest first", a.ID, b.ID)
			}
		}
	}
}

func testLimitClamp(t *testing.T, x index.Index) {
	if testing.Short() {
		t.Skip("stores over a thousand records")
	}
	var recs []index.Record
	for _, id := range seq("l", index.MaxLimit+5) {
		recs = append(recs, full(id))
	}
	mustPut(t, x, recs...)
	for _, tt := range []struct{ limit, want int }{{0, index.DefaultLimit}, {-1, index.DefaultLimit}, {7, 7}, {index.MaxLimit + 1000, index.MaxLimit}} {
		if got := len(mustSearch(t, x, index.Query{Limit: tt.limit})); got != tt.want {
			t.Errorf("Limit %d: %d records, want %d", tt.limit, got, tt.want)
		}
	}
}
