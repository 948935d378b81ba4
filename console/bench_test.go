package console

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/sqlite"
)

// BenchmarkOverview renders the overview over an sqlite index holding n
// records in the window (the index's Stats aggregates them).
func BenchmarkOverview(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			idx, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "index.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer idx.Close()
			now := time.Now()
			recs := make([]index.Record, n)
			models := []string{"glm-5.3", "sim-1", "qwen-3"}
			for i := range recs {
				v := custody.Verified
				if i%17 == 0 {
					v = custody.Rejected
				}
				recs[i] = index.Record{Transaction: custody.Transaction{ID: fmt.Sprintf("01KB%022d", i), Tenant: "acme",
					Time: now.Add(-time.Duration(i) * 24 * time.Hour / time.Duration(n)), RequestedModel: models[i%3],
					ResponseModel: models[i%3] + "-0827", Provider: "p", Route: 0, Verdict: v, Status: 200,
					Outcomes: []custody.Outcome{{Check: "model", Status: custody.StatusOK}, {Check: "prompt_tokens", Status: custody.StatusOK}}},
					Shard: "s", LeafIndex: int64(i)}
			}
			if err := idx.Put(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			c, err := New(Config{IsAdminKey: func(string) bool { return true }, Index: idx})
			if err != nil {
				b.Fatal(err)
			}
			tok, _ := c.sess.issue()
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/ui/", nil)
				req.AddCookie(&http.Cookie{Name: CookieName, Value: tok})
				w := httptest.NewRecorder()
				c.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d", w.Code)
				}
			}
		})
	}
}
