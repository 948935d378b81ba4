package contamination

import (
	"math/rand/v2"
	"os"
	"testing"
)

// TestBookGrid compares the warm-up there was with the stock phrases and
// CommonAfter on the book's exchanges (figures in docs/checks.md):
// CONTAMINATION_GRID=1 go test ./contamination -run BookGrid -v.
func TestBookGrid(t *testing.T) {
	if os.Getenv("CONTAMINATION_GRID") == "" {
		t.Skip("set CONTAMINATION_GRID=1 to run")
	}
	chapters := mobyDick(t)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"old: warmup 256, after 3, no stock", Config{Warmup: 256, CommonAfter: 3, NoStockPhrases: true}},
		{"no warmup, after 3, no stock", Config{CommonAfter: 3, NoStockPhrases: true}},
		{"no warmup, after 1, no stock", Config{NoStockPhrases: true}},
		{"no warmup, after 3, stock", Config{CommonAfter: 3}},
		{"new default", Config{}},
	} {
		var fa, n, l8, c8 int
		for seed := range uint64(5) {
			r := rand.New(rand.NewPCG(seed, 99))
			res := runExchanges(t, c.cfg, bookExchanges(chapters, 1<<20, r), []int{8}, r)
			fa += res.alarms
			n += res.exchanges
			l8 += res.leaks[8]
			c8 += res.caught[8]
		}
		t.Logf("%-40s false alarms %d/%d, 8-word caught %.3f", c.name, fa, n, float64(c8)/float64(l8))
	}
}
