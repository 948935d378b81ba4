package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// BenchmarkOverview renders the overview of a real gateway whose sqlite
// index holds n more records in the window (the index's Stats aggregates
// them; the console reads them through the admin API).
func BenchmarkOverview(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := newEnv(b, false)
			now := time.Now()
			recs := make([]index.Record, n)
			models := []string{"sim-1", "liar-1", "fallback-1"}
			for i := range recs {
				v := custody.Verified
				if i%17 == 0 {
					v = custody.Rejected
				}
				recs[i] = index.Record{Transaction: custody.Transaction{ID: fmt.Sprintf("01KB%022d", i), Tenant: "acme",
					Time: now.Add(-time.Duration(i) * 24 * time.Hour / time.Duration(n)), RequestedModel: models[i%3],
					ResponseModel: models[i%3] + "-0827", Provider: "sim", Route: 0, Verdict: v, Status: 200,
					Outcomes: []custody.Outcome{{Check: "model", Status: custody.StatusOK}, {Check: "prompt_tokens", Status: custody.StatusOK}}},
					Shard: "s", LeafIndex: int64(i)}
			}
			if err := e.idx.Put(context.Background(), recs...); err != nil {
				b.Fatal(err)
			}
			tok, _ := e.console.sess.issue()
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/ui/", nil)
				req.AddCookie(&http.Cookie{Name: CookieName, Value: tok})
				w := httptest.NewRecorder()
				e.console.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d", w.Code)
				}
			}
		})
	}
}
