package indextest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/index"
)

// Bench measures Put throughput for batches of 1 and 256 records, and
// claims, serial and from parallel goroutines. open is as for Run.
func Bench(b *testing.B, open func(b *testing.B) index.Index) {
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("Put/batch=%d", batch), func(b *testing.B) {
			x := open(b)
			recs := make([]index.Record, batch)
			n := 0
			b.ResetTimer()
			for b.Loop() {
				for i := range recs {
					recs[i] = full(fmt.Sprintf("req-%09d", n))
					recs[i].LeafIndex = int64(n)
					n++
				}
				if err := x.Put(b.Context(), recs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
	b.Run("Claim", func(b *testing.B) {
		x := open(b)
		n := 0
		for b.Loop() {
			id := fmt.Sprintf("req-%d", n)
			if _, err := x.ClaimResponse(b.Context(), "key-"+id, id, time.Minute); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "claims/s")
	})
	b.Run("Claim/parallel", func(b *testing.B) {
		x := open(b)
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				id := fmt.Sprintf("req-%d", n.Add(1))
				if _, err := x.ClaimResponse(b.Context(), "key-"+id, id, time.Minute); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "claims/s")
	})
}
