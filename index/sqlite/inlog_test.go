package sqlite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
)

// inLogRecords appends n varied transactions to a real log and returns
// their records as the recorder makes them, once the log has integrated
// them (read back from the log's files, not the ledger's memory).
func inLogRecords(t *testing.T, l *ledger.Log, n int) []index.Record {
	t.Helper()
	var recs []index.Record
	for i := range n {
		tx := ledgertest.SampleTx(l, fmt.Sprintf("req-%d", i), []byte("q"), []byte("a"))
		tx.Time = tx.Time.Add(time.Duration(i) * time.Second)
		tx.Tenant = []string{"acme", "beta"}[i%2]
		switch i % 3 {
		case 1: // a fallback served
			tx.Route, tx.FallbackChain, tx.Provider = 1, []string{"primary", "backup"}, "backup"
		case 2: // a canary, flagged
			tx.Canary = true
			tx.Flag(custody.CheckModel, custody.CodeModelMismatch, "served other-model")
		}
		leaf, err := l.AppendIndex(t.Context(), tx)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, index.Record{Transaction: *tx, Shard: l.Origin(), LeafIndex: int64(leaf)})
	}
	for deadline := time.Now().Add(10 * time.Second); l.Size() < uint64(recs[n-1].LeafIndex+1); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log integrated %d leaves, want %d", l.Size(), n)
		}
	}
	return recs
}

// TestRecordsInTheLog: an index opened on the log stores the records whose
// leaf the log has integrated by position only, and answers Get, Search,
// Stats and Breakdown exactly as an index that stores every record whole;
// records it cannot read back (a leaf the log does not have, another
// shard) it stores whole. Without the log, reading one stored by position fails
// and says why, and a record stored by position is replaced by a later
// leaf with its terms.
func TestRecordsInTheLog(t *testing.T) {
	ctx := t.Context()
	l, err := ledgertest.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	recs := inLogRecords(t, l, 7)
	ahead := gatewayRecord(100) // a leaf the log does not have
	ahead.Shard, ahead.LeafIndex = l.Origin(), int64(l.Size()+50)
	other := gatewayRecord(101) // another replica's shard
	other.Shard = "elsewhere/log"
	all := append(append([]index.Record(nil), recs...), ahead, other)

	path := fresh(t)
	inLog, err := OpenWithLog(ctx, path, l)
	if err != nil {
		t.Fatal(err)
	}
	defer inLog.Close()
	whole := openAt(t, fresh(t))
	for _, x := range []*Index{inLog, whole} {
		if err := x.Put(ctx, all...); err != nil {
			t.Fatal(err)
		}
	}
	var byPosition int
	if err := inLog.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE data = ''`).Scan(&byPosition); err != nil || byPosition != len(recs) {
		t.Errorf("%d records stored by position (%v), want the %d in the log", byPosition, err, len(recs))
	}

	for _, r := range all {
		got, err := inLog.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%s) from the log:\n%s\nstored whole:\n%s", r.ID, asJSON(got), asJSON(want))
		}
	}
	since, until := recs[0].Time.Add(-time.Hour), recs[0].Time.Add(24*time.Hour*365*5)
	for _, q := range []index.Query{{}, {Tenant: "beta"}, {Model: "glm-5.3"}, {Code: custody.CodeModelMismatch}, {Verdict: custody.Flagged}, {Limit: 2, Before: "req-5"}} {
		got, err := inLog.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := whole.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("Search(%+v): %d records from the log, %d stored whole (or none):\n%s\n%s", q, len(got), len(want), asJSON(got), asJSON(want))
		}
	}
	sq := index.StatsQuery{Since: since, Until: until, Buckets: 4}
	gotStats, err1 := inLog.Stats(ctx, sq)
	wantStats, err2 := whole.Stats(ctx, sq)
	if err1 != nil || err2 != nil || len(wantStats) < 3 || !reflect.DeepEqual(gotStats, wantStats) {
		t.Errorf("Stats (%v, %v):\n%s\nstored whole:\n%s", err1, err2, asJSON(gotStats), asJSON(wantStats))
	}
	for _, by := range index.Breakdowns {
		bq := index.BreakdownQuery{By: by, Since: since, Until: until}
		got, err1 := inLog.Breakdown(ctx, bq)
		want, err2 := whole.Breakdown(ctx, bq)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Breakdown by %s (%v, %v):\n%s\nstored whole:\n%s", by, err1, err2, asJSON(got), asJSON(want))
		}
	}

	// A later attempt's leaf replaces a record stored by position, terms
	// and all.
	later := ledgertest.SampleTx(l, recs[0].ID, []byte("q"), []byte("a"))
	later.Time, later.ResponseModel = recs[0].Time, "glm-5.3-replaced"
	leaf, err := l.AppendIndex(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); l.Size() <= leaf; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the later leaf was not integrated")
		}
	}
	if err := inLog.Put(ctx, index.Record{Transaction: *later, Shard: l.Origin(), LeafIndex: int64(leaf)}); err != nil {
		t.Fatal(err)
	}
	if got, err := inLog.Get(ctx, later.ID); err != nil || got.ResponseModel != "glm-5.3-replaced" || got.LeafIndex != int64(leaf) || got.Tenant != "acme" {
		t.Errorf("after the replacement: %+v, %v", got, err)
	}
	if found, err := inLog.Search(ctx, index.Query{Model: "glm-5.3-0827"}); err != nil || containsID(found, later.ID) {
		t.Errorf("the replaced record is still found by its old response model (%v)", err)
	}
	if found, err := inLog.Search(ctx, index.Query{Model: "glm-5.3-replaced"}); err != nil || !containsID(found, later.ID) {
		t.Errorf("the replacing record is not found by its response model (%v)", err)
	}
	inLog.Close()

	blind := openAt(t, path)
	if _, err := blind.Get(ctx, recs[1].ID); err == nil || !strings.Contains(err.Error(), "opened without the log") {
		t.Errorf("Get of a record stored by position, without the log: %v", err)
	}
	if _, err := blind.Search(ctx, index.Query{}); err == nil || !strings.Contains(err.Error(), "opened without the log") {
		t.Errorf("Search without the log: %v", err)
	}
	if got, err := blind.Get(ctx, other.ID); err != nil || got.ID != other.ID {
		t.Errorf("a record stored whole, without the log: %+v, %v", got, err)
	}
}

func containsID(recs []index.Record, id string) bool {
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func asJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// TestUpgradeToRecordsInTheLog: a file of schema version 6 opens at
// version 7 with the route, whether a fallback served and canary copied
// into columns from every stored record's JSON, which the overview's
// counts read from now.
func TestUpgradeToRecordsInTheLog(t *testing.T) {
	path := fresh(t)
	db := atVersion(t, path, 6)
	for _, r := range []struct{ id, data string }{
		{"primary", `{"route":0,"fallback_chain":["a"],"status":200}`},
		{"fellback", `{"route":1,"fallback_chain":["a","b"],"status":200}`},
		{"failed-over", `{"route":1,"fallback_chain":["a","b"],"status":502}`},
		{"canary", `{"route":0,"canary":true,"status":200}`},
		{"unrouted", `{"status":400}`},
	} {
		if _, err := db.Exec(`INSERT INTO records (request_id, tenant, time_ns, requested_model, response_model, provider, verdict, code, shard, leaf_index, data) VALUES (?, 't', 1, 'm', 'm', 'p', 'verified', '', 's', -1, ?)`, r.id, r.data); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	x := openAt(t, path)
	wantVersion(t, x, 7)
	want := map[string][3]int{"primary": {0, 0, 0}, "fellback": {1, 1, 0}, "failed-over": {1, 0, 0}, "canary": {0, 0, 1}, "unrouted": {-1, 0, 0}}
	for id, w := range want {
		var got [3]int
		if err := x.r.QueryRowContext(t.Context(), `SELECT route, fallback, canary FROM records WHERE request_id = ?`, id).Scan(&got[0], &got[1], &got[2]); err != nil || got != w {
			t.Errorf("%s: route, fallback, canary = %v (%v), want %v", id, got, err, w)
		}
	}
}

// BenchmarkReadFromLog is what storing by position costs the read side:
// Get and a 50-record Search, on an index opened on a log of 1,000
// leaves, beside the same on an index storing them whole.
func BenchmarkReadFromLog(b *testing.B) {
	ctx := b.Context()
	l, err := ledgertest.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(ctx)
	var recs []index.Record
	for i := range 1000 {
		tx := ledgertest.SampleTx(l, fmt.Sprintf("req-%04d", i), []byte("q"), []byte("a"))
		tx.Time = tx.Time.Add(time.Duration(i) * time.Millisecond)
		leaf, err := l.AppendIndex(ctx, tx)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, index.Record{Transaction: *tx, Shard: l.Origin(), LeafIndex: int64(leaf)})
	}
	for l.Size() < 1000 {
		time.Sleep(10 * time.Millisecond)
	}
	for _, stored := range []string{"whole", "in-log"} {
		var log index.Leaves
		if stored == "in-log" {
			log = l
		}
		x, err := OpenWithLog(ctx, fresh(b), log)
		if err != nil {
			b.Fatal(err)
		}
		defer x.Close()
		if err := x.Put(ctx, recs...); err != nil {
			b.Fatal(err)
		}
		b.Run("stored="+stored+"/get", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := x.Get(ctx, recs[i%len(recs)].ID); err != nil {
					b.Fatal(err)
				}
				i += 37
			}
		})
		b.Run("stored="+stored+"/search50", func(b *testing.B) {
			for b.Loop() {
				if got, err := x.Search(ctx, index.Query{Limit: 50, Tenant: "acme"}); err != nil || len(got) != 50 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}
