package contamination

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// corpusResult is what one pass over the synthetic corpus measured.
type corpusResult struct {
	responses, alarms int
	leaks, caught     map[int]int // by leaked span length in words
	attributed        map[int]int // caught and named the right source
}

// runCorpus remembers n prompts in turn and scans a clean response to each
// (alarms are false alarms), and, from the 100th on, responses with a span
// of another recent prompt's own text spliced in (detection).
func runCorpus(t testing.TB, cfg Config, seed uint64, tail float64, n int, leakLens []int) corpusResult {
	c := newCorpus(t, seed, tail)
	d := New(cfg)
	res := corpusResult{leaks: map[int]int{}, caught: map[int]int{}, attributed: map[int]int{}}
	bodies := make([]string, 0, n)
	prompts := make([]string, 0, n)
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		prompt, body := c.prompt()
		bodies = append(bodies, body)
		prompts = append(prompts, prompt)
		own := d.Fingerprint(prompt)
		d.Remember(id, fmt.Sprintf("tenant-%d", i%50), own)
		resp := c.response(prompt)
		res.responses++
		if f, ok := d.ScanFor(id, fmt.Sprintf("tenant-%d", i%50), own, prompt, resp); ok {
			res.alarms++
			if res.alarms <= 5 {
				var j int
				fmt.Sscanf(f.SourceRequest, "req-%d", &j)
				t.Logf("false alarm on %s: %+v: %q", id, f, commonRun(resp, prompts[j]))
			}
		}
		if i < 100 {
			continue
		}
		back := min(i, 1000, cfg.MaxPrompts-1)
		if cfg.MaxPrompts == 0 {
			back = min(i, 1000)
		}
		j := i - 1 - c.r.IntN(back)
		for _, l := range leakLens {
			if len(strings.Fields(bodies[j])) < abs(l) {
				continue // a span of l words of the user's data only
			}
			cut := len(resp) / 2
			for cut < len(resp) && resp[cut] != ' ' && resp[cut] != '\n' {
				cut++
			}
			span := c.span(bodies[j], abs(l))
			if l < 0 {
				span = c.simStyle(span)
			}
			leaky := resp[:cut] + " " + span + " " + resp[cut:]
			res.leaks[l]++
			// A probe, not traffic: it must not teach the generic-phrase
			// sketch what the next probe looks for.
			s := d.NewScanner(id, own, prompt)
			s.noLearn = true
			s.WriteString(leaky)
			s.Close()
			if f, ok := s.Finding(); ok {
				res.caught[l]++
				if f.SourceRequest == fmt.Sprintf("req-%d", j) {
					res.attributed[l]++
				}
			}
		}
	}
	return res
}

func (r corpusResult) add(o corpusResult) corpusResult {
	if r.leaks == nil {
		r.leaks, r.caught, r.attributed = map[int]int{}, map[int]int{}, map[int]int{}
	}
	r.responses += o.responses
	r.alarms += o.alarms
	for l := range o.leaks {
		r.leaks[l] += o.leaks[l]
		r.caught[l] += o.caught[l]
		r.attributed[l] += o.attributed[l]
	}
	return r
}

func (r corpusResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "false alarms %d/%d", r.alarms, r.responses)
	for _, l := range []int{5, 6, 8, 12, 16, -16} {
		if r.leaks[l] > 0 {
			style := ""
			if l < 0 {
				style = " sim-style"
			}
			fmt.Fprintf(&b, "; %d words%s caught %.4f (named %.4f)", abs(l), style,
				float64(r.caught[l])/float64(r.leaks[l]), float64(r.attributed[l])/float64(r.leaks[l]))
		}
	}
	return b.String()
}

// TestCorpusDefaults is the measurement the defaults rest on: no false alarm
// over 3 x 12,000 clean responses, and 8 words of another prompt caught.
func TestCorpusDefaults(t *testing.T) {
	n := 12000
	if testing.Short() {
		n = 2000
	}
	var r corpusResult
	for seed := range uint64(3) {
		one := runCorpus(t, Config{}, seed, 0.25, n, []int{5, 8, 12, -16})
		t.Logf("seed %d: %v", seed, one)
		r = r.add(one)
	}
	t.Logf("all: %v", r)
	// Observed: 0 or 1 per 36,000 (the 1 a genuine 7-word coincidence of
	// two synthetic prompts). More than 2 is a regression.
	if r.alarms > 2 {
		t.Errorf("%d false alarms over %d clean responses", r.alarms, r.responses)
	}
	// Observed over 3 x 12,000: 0.84 and 0.98 (0.80 and 0.95 with the old
	// two-row sketch and a warm-up), over 3 x 2,000 (-short) 0.84 and 0.99.
	want8, want12 := 0.80, 0.96
	if testing.Short() {
		want8, want12 = 0.78, 0.95
	}
	if rate := float64(r.caught[8]) / float64(r.leaks[8]); rate < want8 {
		t.Errorf("8-word leaks caught at %.4f, want >= %.2f", rate, want8)
	}
	if rate := float64(r.caught[12]) / float64(r.leaks[12]); rate < want12 {
		t.Errorf("12-word leaks caught at %.4f, want >= %.2f", rate, want12)
	}
}

// TestCorpusGrid logs the trade-off across parameters; it takes minutes, so
// it runs only when asked: CONTAMINATION_GRID=1 go test -run Grid -v.
func TestCorpusGrid(t *testing.T) {
	if os.Getenv("CONTAMINATION_GRID") == "" {
		t.Skip("set CONTAMINATION_GRID=1 to run")
	}
	for _, cfg := range []Config{
		{}, // the defaults: K=4 W=2 R=3 MinWords=7 M=16 T=3
		{MinWords: 1},
		{MaxSharedBy: 4},
		{K: 3},
		{MinRun: 4},
		{CommonAfter: -1, Warmup: -1},
		{Window: 3},
	} {
		for _, tail := range []float64{0, 0.25} {
			var r corpusResult
			for seed := range uint64(3) {
				r = r.add(runCorpus(t, cfg, seed, tail, 12000, []int{5, 8, 12, -16}))
			}
			t.Logf("%+v tail=%.2f: %v", cfg, tail, r)
		}
	}
}

// commonRun is the longest run of words of a that b holds (synthetic text:
// only tests print it).
func commonRun(a, b string) string {
	aw := strings.Fields(strings.ToLower(a))
	bs := " " + strings.Join(strings.Fields(strings.ToLower(b)), " ") + " "
	best := ""
	for i := range aw {
		for j := i + 1; j <= len(aw); j++ {
			s := strings.Join(aw[i:j], " ")
			if !strings.Contains(bs, " "+s+" ") {
				break
			}
			if len(s) > len(best) {
				best = s
			}
		}
	}
	return best
}

// simStyle breaks span as the simulator's toy model quotes the pages it
// reads: runs of the text with a word of its own vocabulary every 4 to 8
// words.
func (c *corpus) simStyle(span string) string {
	own := []string{"quorra", "velmat", "ostrin", "pallude", "cerrow", "mivane", "tolvik", "arbeth"}
	var out []string
	next := 4 + c.r.IntN(5)
	for i, w := range strings.Fields(span) {
		if i == next {
			out = append(out, own[c.r.IntN(len(own))])
			next += 4 + c.r.IntN(5)
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
