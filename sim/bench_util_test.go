package sim

import (
	"sort"
	"time"
)

var benchEpoch = time.Now()

func nanotime() int64 { return int64(time.Since(benchEpoch)) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
