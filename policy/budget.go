package policy

import (
	"sync"
	"time"
)

// Budget bounds fallback attempts to a fraction of requests, so that a
// failing primary cannot double the load on its backups (the retry budget
// of Finagle and Linkerd). Over a sliding window of buckets, retries may
// be at most Ratio of requests plus MinPerSecond.
type Budget struct {
	ratio  float64
	min    float64
	bucket time.Duration

	mu      sync.Mutex
	reqs    [10]float64 // per-bucket counts; guarded by mu
	retries [10]float64
	cur     int64 // current bucket number
}

// NewBudget allows ratio retries per request plus minPerSecond.
func NewBudget(ratio, minPerSecond float64) *Budget {
	return &Budget{ratio: ratio, min: minPerSecond, bucket: time.Second}
}

func (b *Budget) advance(now time.Time) {
	n := now.UnixNano() / int64(b.bucket)
	if n-b.cur >= int64(len(b.reqs)) {
		b.reqs, b.retries = [10]float64{}, [10]float64{}
	} else {
		for i := b.cur + 1; i <= n; i++ {
			b.reqs[i%int64(len(b.reqs))], b.retries[i%int64(len(b.reqs))] = 0, 0
		}
	}
	if n > b.cur {
		b.cur = n
	}
}

// Request counts one request.
func (b *Budget) Request(now time.Time) {
	b.mu.Lock()
	b.advance(now)
	b.reqs[b.cur%int64(len(b.reqs))]++
	b.mu.Unlock()
}

// Retry takes one retry from the budget, or reports that none is left.
func (b *Budget) Retry(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	var reqs, retries float64
	for i := range b.reqs {
		reqs += b.reqs[i]
		retries += b.retries[i]
	}
	window := float64(len(b.reqs)) * b.bucket.Seconds()
	if retries+1 > reqs*b.ratio+b.min*window {
		return false
	}
	b.retries[b.cur%int64(len(b.reqs))]++
	return true
}
