package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// proxyParams size the proxy benchmark.
type proxyParams struct {
	Rounds int
	Conc   int           // closed-loop workers
	SatDur time.Duration // closed-loop time per mode per round (when SatN is 0)
	SatN   int64         // closed-loop requests per mode per round, if > 0
	Rate   float64       // open-loop rate wanted (lowered if saturation is too low)
	OpenN  int           // open-loop requests per mode per round
	StrN   int           // open-loop streaming requests per mode per round
	// openDur and strDur, when OpenN and StrN are negative, set them
	// from the rate chosen after calibration.
	openDur, strDur time.Duration
	// Profile, if set, is where a CPU profile of mode E at saturation is
	// written, taken over ProfileDur after the rounds.
	Profile     string
	ProfileDur  time.Duration
	ProfileMode string    // the key of the mode profiled; "": F, else E
	Log         io.Writer // progress
	KeepLogs    bool      // keep the children's logs and data directories
	// Modes are the keys of the modes to measure (A and B always are:
	// every figure is a ratio to them).
	Modes map[string]bool
	// Custody is the `custody serve` binary of mode F (built by run).
	Custody string
	// Baseline, if set, is a `custody serve` built at BaselineRef (run
	// -baseline), measured as mode G beside F: before and after under the
	// same noise.
	Baseline, BaselineRef string
	// ServeYAML is added to mode F's config (-serve-yaml): the same build
	// under another setting, measured beside G's defaults.
	ServeYAML string
}

// layout is where the processes run.
type layout struct {
	Name string
	// TargetCPUs pins each proxy under test (taskset), with GOMAXPROCS
	// set to their count; LoadCPUs pins the load generator (this process)
	// and the simulator. Empty: unpinned, the scheduler's choice.
	TargetCPUs, LoadCPUs string
	GOMAXPROCS           int // of the proxies under test; 0: Go's default
}

// layouts are the two of docs/BENCHMARKS.md (Method): the target alone on one core with
// GOMAXPROCS=1 (any 1-CPU container), and everything unpinned on the
// machine's cores with Go's default GOMAXPROCS.
func layouts(ncpu int) map[string]layout {
	last := fmt.Sprint(ncpu - 1)
	rest := "0"
	if ncpu > 2 {
		rest = fmt.Sprintf("0-%d", ncpu-2)
	}
	return map[string]layout{
		"one-core": {Name: "one-core", TargetCPUs: last, LoadCPUs: rest, GOMAXPROCS: 1},
		"two-core": {Name: "two-core"},
	}
}

// describe says what the layout is, for the report.
func (l layout) describe() string {
	if l.TargetCPUs == "" {
		return "every process unpinned on the machine's cores, Go's default GOMAXPROCS"
	}
	return fmt.Sprintf("each proxy pinned to CPU %s (`taskset -c %s`) with GOMAXPROCS=%d; the load generator and the simulator on CPU %s",
		l.TargetCPUs, l.TargetCPUs, l.GOMAXPROCS, l.LoadCPUs)
}

// mode is one way of reaching the simulator.
type mode struct {
	Key, Name string
	proc      *child // the proxy process; nil for direct
	load      *loader

	// Accumulated over the rounds.
	SatN, SatErr int64
	SatTime      time.Duration
	SatRPS       []float64 // per round
	CPU          time.Duration
	Wait         time.Duration // runnable but not running, at saturation
	SatRSSkB     int64         // the largest resident set sampled at saturation
	SimCPU       time.Duration
	SimCPUN      int64
	Lat, TTFB    []time.Duration
	FirstLat     []time.Duration // Lat of the first round after start
	OpenErr      int64
	// The journal's group commits (durable modes), at saturation and in
	// the non-streaming open loop, and the time each was counted over.
	SatSyncs, OpenSyncs int64
	OpenTime            time.Duration
	// The open loops' group commits by time: OpenCommits[i] is how many
	// took at most CommitBounds[i] seconds (cumulative), the last entry
	// all of them.
	CommitBounds []float64
	OpenCommits  []int64
	// The open loops' waits of runnable goroutines for a processor
	// (go_sched_latencies_seconds): all of them, and those over
	// SchedSlowBound seconds.
	OpenSched, OpenSchedSlow int64
	SchedSlowBound           float64
	// olderMetrics: the /metrics of a custody built at another ref (G),
	// which may lack the lines read here.
	olderMetrics bool
	OpenN        int64
	HWMkB        int64
	FirstErr     error
	MaxLate      time.Duration
}

// proxyReport is the outcome of the proxy benchmark.
type proxyReport struct {
	Layout      layout
	Modes       []*mode
	Rate        float64 // the open-loop rate used
	RateLowered bool
	CalibRPS    float64 // the lowest saturation seen in calibration
	// Disk is each request's time in the disk probe run after each round
	// (ledger.ProbeCommits: the open loop's requests at its rate, group
	// committed as they arrive, each timed from its arrival to its
	// commit), in DiskCommits commits.
	Disk        []time.Duration
	FirstDisk   []time.Duration // Disk of the first round
	DiskCommits int
	Params      proxyParams
}

func (m *mode) rps() float64 {
	if m.SatTime == 0 {
		return 0
	}
	return float64(m.SatN) / m.SatTime.Seconds()
}

// cpuPerReq is the proxy's CPU time per request at saturation.
func (m *mode) cpuPerReq() time.Duration {
	if m.proc == nil || m.SatN == 0 {
		return 0
	}
	return m.CPU / time.Duration(m.SatN)
}

func (m *mode) simCPUPerReq() time.Duration {
	if m.SimCPUN == 0 {
		return 0
	}
	return m.SimCPU / time.Duration(m.SimCPUN)
}

// allModes are the modes in the order of a round.
var allModes = []struct{ Key, Name string }{{"A", "direct"}, {"B", "bare"}, {"C", "nochecks"},
	{"D", "checks"}, {"E", "durable"}, {"F", "serve"}}

// roundOrder is the order of the modes in round r (from 0): as given in
// even rounds, reversed in odd ones, so that over an even number of
// rounds each mode runs as often before as after each other. With one
// order for every round, two builds of the same commit (F and G, -baseline
// HEAD) differed by 10 % in two-core CPU per request and 7.5 % in
// throughput, the later one ahead (docs/BENCHMARKS.md, "An A/A run").
func roundOrder[T any](modes []T, r int) []T {
	if r%2 == 0 {
		return modes
	}
	rev := slices.Clone(modes)
	slices.Reverse(rev)
	return rev
}

// runProxies starts the simulator and the proxies in lay and measures
// the modes in interleaved rounds.
func runProxies(ctx context.Context, p proxyParams, lay layout) (*proxyReport, error) {
	logDir, err := os.MkdirTemp("", "custody-bench-"+lay.Name+"-")
	if err != nil {
		return nil, err
	}
	if p.KeepLogs {
		fmt.Fprintf(p.Log, "children's logs and data in %s\n", logDir)
	} else {
		defer os.RemoveAll(logDir)
	}
	if lay.LoadCPUs != "" {
		if err := pinSelf(lay.LoadCPUs); err != nil {
			return nil, err
		}
		defer unpinSelf()
	}
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	simc, err := startChild(childSpec{name: "sim", role: "sim", logDir: logDir, cpus: lay.LoadCPUs})
	if err != nil {
		return nil, err
	}
	children = append(children, simc)
	// The disk probe, on the targets' CPUs like them, idle until a round
	// ends.
	if err := os.Mkdir(diskDir(logDir), 0o700); err != nil {
		return nil, err
	}
	diskc, err := startChild(childSpec{name: "disk", role: "disk", logDir: logDir, cpus: lay.TargetCPUs,
		env: []string{dirEnv + "=" + diskDir(logDir)}})
	if err != nil {
		return nil, err
	}
	children = append(children, diskc)
	simURL := simc.URL + "/v1"
	up := upstreamEnv + "=" + simURL
	var target []string
	if lay.GOMAXPROCS > 0 {
		target = append(target, fmt.Sprintf("GOMAXPROCS=%d", lay.GOMAXPROCS))
	}
	var modes []*mode
	all := allModes
	if p.Baseline != "" {
		all = append(slices.Clone(all), struct{ Key, Name string }{"G", "serve@" + p.BaselineRef})
	}
	for _, am := range all {
		if am.Key != "A" && am.Key != "B" && am.Key != "G" && p.Modes != nil && !p.Modes[am.Key] {
			continue
		}
		m := &mode{Key: am.Key, Name: am.Name}
		modes = append(modes, m)
		spec := childSpec{name: m.Name, logDir: logDir, cpus: lay.TargetCPUs, env: append([]string{up}, target...)}
		switch m.Key {
		case "A":
			m.load = newLoader(simc.URL)
			continue
		case "B":
			spec.role = "bare"
		case "F":
			dir := filepath.Join(logDir, m.Name)
			cfg := filepath.Join(logDir, "serve.yaml")
			if err = os.WriteFile(cfg, []byte(benchYAML(simURL, dir, "debug: {pprof: true}\n"+p.ServeYAML+"\n")), 0o600); err != nil {
				return nil, err
			}
			spec.argv = []string{p.Custody, "serve", "--config", cfg}
		case "G":
			// An older custody may not know debug.pprof, nor count its
			// fsyncs: neither is asked of it.
			dir := filepath.Join(logDir, "baseline")
			cfg := filepath.Join(logDir, "baseline.yaml")
			if err = os.WriteFile(cfg, []byte(benchYAML(simURL, dir, "")), 0o600); err != nil {
				return nil, err
			}
			spec.name, spec.argv = "baseline", []string{p.Baseline, "serve", "--config", cfg}
		default:
			dir := filepath.Join(logDir, m.Name)
			if err = os.Mkdir(dir, 0o700); err != nil {
				return nil, err
			}
			spec.role = "custody"
			spec.env = append(spec.env, modeEnv+"="+m.Name, dirEnv+"="+dir)
		}
		if m.proc, err = startChild(spec); err != nil {
			return nil, err
		}
		if m.Key == "G" {
			// Its /metrics is read for what it has: an older custody may
			// lack the journal's lines.
			m.proc.PProf, m.olderMetrics = "", true
		}
		children = append(children, m.proc)
		m.load = newLoader(m.proc.URL)
	}
	defer func() {
		for _, m := range modes {
			m.load.close()
		}
	}()

	// Calibrate (and warm up): a short saturation of each mode, to choose
	// an open-loop rate all of them sustain.
	rep := &proxyReport{Layout: lay, Modes: modes, Params: p, Rate: p.Rate, CalibRPS: math.Inf(1)}
	for _, m := range modes {
		calN := p.SatN / 2
		r := m.load.closedLoop(ctx, p.Conc, p.SatDur/2, calN)
		if r.N == 0 {
			return nil, fmt.Errorf("mode %s (%s): no request succeeded in calibration: %v%s", m.Key, m.Name, r.FirstErr, m.tail())
		}
		rep.CalibRPS = min(rep.CalibRPS, r.rps())
		fmt.Fprintf(p.Log, "%s: calibrate %s %-8s %8.0f req/s (%d errors)\n", lay.Name, m.Key, m.Name, r.rps(), r.Errors)
	}
	if rep.CalibRPS < 1.5*p.Rate {
		rep.Rate, rep.RateLowered = math.Max(10, math.Floor(rep.CalibRPS/1.5/50)*50), true
		fmt.Fprintf(p.Log, "%s: saturation %.0f req/s is under 1.5x %.0f req/s: open-loop rate lowered to %.0f req/s\n",
			lay.Name, rep.CalibRPS, p.Rate, rep.Rate)
	}

	if p.OpenN < 0 {
		p.OpenN = max(1, int(rep.Rate*p.openDur.Seconds()))
		p.StrN = max(1, int(rep.Rate*p.strDur.Seconds()))
		rep.Params = p
	}
	judged := rep.judged()
	for round := range p.Rounds {
		for _, m := range roundOrder(modes, round) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := m.measure(ctx, p, rep.Rate, simc); err != nil {
				return nil, err
			}
			fmt.Fprintf(p.Log, "%s: round %d %s %-8s %8.0f req/s  p50 %v  errors %d+%d\n", lay.Name, round+1, m.Key, m.Name,
				m.SatRPS[len(m.SatRPS)-1], pct(m.Lat, 0.5), m.SatErr, m.OpenErr)
			if m.FirstErr != nil {
				fmt.Fprintf(p.Log, "  first error: %v\n", m.FirstErr)
			}
		}
		// The disk alone, the open loop's requests committed as they
		// arrive (the judged mode is a durable one).
		if judged != nil {
			lat, commits, err := probeCommits(ctx, diskc, rep.Rate, p.OpenN)
			if err != nil {
				return nil, err
			}
			if rep.Disk == nil {
				rep.FirstDisk = lat
			}
			rep.Disk = append(rep.Disk, lat...)
			rep.DiskCommits += commits
			fmt.Fprintf(p.Log, "%s: round %d disk alone: %d requests at %.0f/s in %d commits  p50 %v  p99 %v\n", lay.Name, round+1, len(lat), rep.Rate, commits, pct(lat, 0.5), pct(lat, 0.99))
		}
	}
	for _, m := range modes {
		if m.proc != nil {
			st, err := m.proc.proc()
			if err != nil {
				return nil, err
			}
			m.HWMkB = max(m.HWMkB, st.HWMkB)
		}
	}
	if p.Profile != "" {
		// The profile is of custody serve (F), else of the assembled E,
		// unless -profile-mode says which.
		target := rep.mode(p.ProfileMode)
		if target == nil || target.proc == nil {
			target = rep.judged()
		}
		if target != nil {
			if err := profile(ctx, target, p, rep.Rate, profilePath(p.Profile, lay)); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// profilePath is where the profile of lay goes: FILE.one-core.pprof for
// FILE.pprof.
func profilePath(file string, lay layout) string {
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "." + lay.Name + ext
}

// mode is the report's mode of that key, nil if it was not measured.
func (r *proxyReport) mode(key string) *mode {
	for _, m := range r.Modes {
		if m.Key == key {
			return m
		}
	}
	return nil
}

// pinSelf pins every thread of this process (the load generator) to
// cpus; the threads it starts later inherit it.
func pinSelf(cpus string) error {
	out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, fmt.Sprint(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pinning the load generator to CPU %s (taskset, from util-linux): %v: %s", cpus, err, out)
	}
	return nil
}

func unpinSelf() {
	exec.Command("taskset", "-a", "-p", "-c", fmt.Sprintf("0-%d", runtime.NumCPU()-1), fmt.Sprint(os.Getpid())).Run()
}

func (m *mode) tail() string {
	if m.proc == nil {
		return ""
	}
	return "\n" + m.proc.tail()
}

// settle is the pause between a mode's saturation and its open loop.
const settle = 250 * time.Millisecond

// measure runs one round of a mode: saturation, open-loop latency,
// open-loop streaming.
func (m *mode) measure(ctx context.Context, p proxyParams, rate float64, simc *child) error {
	j0, err := m.scrape()
	if err != nil {
		return err
	}
	before, err := m.cpu(simc)
	if err != nil {
		return err
	}
	stopRSS := m.sampleRSS()
	r := m.load.closedLoop(ctx, p.Conc, p.SatDur, p.SatN)
	stopRSS()
	after, err := m.cpu(simc)
	if err != nil {
		return err
	}
	j1, err := m.scrape()
	if err != nil {
		return err
	}
	m.SatSyncs += j1.syncs - j0.syncs
	if r.N == 0 {
		return fmt.Errorf("mode %s (%s): no request succeeded: %v%s", m.Key, m.Name, r.FirstErr, m.tail())
	}
	m.SatN += r.N
	m.SatErr += r.Errors
	m.SatTime += r.Elapsed
	m.SatRPS = append(m.SatRPS, r.rps())
	m.CPU += after[0] - before[0]
	m.Wait += after[2] - before[2]
	m.SimCPU += after[1] - before[1]
	m.SimCPUN += r.N
	m.keepErr(r.FirstErr)
	if m.proc != nil {
		if st, err := m.proc.proc(); err == nil {
			m.HWMkB = max(m.HWMkB, st.HWMkB)
		}
	}

	// A moment for what saturation left behind (queues, garbage) to
	// settle, alike for every mode.
	time.Sleep(settle)
	if j0, err = m.scrape(); err != nil {
		return err
	}
	openStart := time.Now()
	o := m.load.openLoop(ctx, rate, p.OpenN, false)
	m.OpenTime += time.Since(openStart)
	if j1, err = m.scrape(); err != nil {
		return err
	}
	m.OpenSyncs += j1.syncs - j0.syncs
	m.addCommits(j0, j1)
	m.addSched(j0, j1)
	m.OpenN += int64(len(o.Lat))
	if m.Lat == nil {
		m.FirstLat = o.Lat
	}
	m.Lat = append(m.Lat, o.Lat...)
	m.OpenErr += o.Errors
	m.MaxLate = max(m.MaxLate, o.Late)
	m.keepErr(o.FirstErr)

	s := m.load.openLoop(ctx, rate, p.StrN, true)
	m.TTFB = append(m.TTFB, s.Lat...)
	m.OpenErr += s.Errors
	m.MaxLate = max(m.MaxLate, s.Late)
	m.keepErr(s.FirstErr)
	return nil
}

func (m *mode) keepErr(err error) {
	if err != nil && m.FirstErr == nil {
		m.FirstErr = err
	}
}

// scrape is what a durable mode's /metrics says: its journal's group
// commits and the histogram of their times (custody_ledger_commit_seconds),
// and the runtime's scheduling latencies (go_sched_latencies_seconds).
// A histogram a custody does not export is empty.
type scrape struct {
	syncs   int64
	commits histogram
	sched   histogram
}

// histogram is a Prometheus histogram as scraped.
type histogram struct {
	bounds     []float64 // seconds, ascending, without +Inf
	cumulative []int64   // at each bound
	count      int64
}

// scrape reads it (the zero scrape for modes that have none).
func (m *mode) scrape() (scrape, error) {
	if m.proc == nil || m.proc.Syncs == "" {
		return scrape{}, nil
	}
	resp, err := http.Get(m.proc.Syncs)
	if err != nil {
		return scrape{}, fmt.Errorf("reading %s's /metrics: %w", m.Name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return scrape{}, err
	}
	j, found, err := parseScrape(b)
	switch {
	case err != nil:
		return scrape{}, fmt.Errorf("%s: %s: %w", m.Name, m.proc.Syncs, err)
	case !found && m.olderMetrics:
		return scrape{}, nil
	case !found:
		return scrape{}, fmt.Errorf("%s: no custody_ledger_fsyncs_total in %s", m.Name, m.proc.Syncs)
	}
	return j, nil
}

// parseScrape reads a /metrics scrape in the Prometheus text format
// (expfmt's parser, not patterns over its lines): the journal's fsyncs
// and its group-commit histogram, and the runtime's scheduling latencies,
// each summed over its series. found is false when the scrape has no
// custody_ledger_fsyncs_total (a custody too old to count them).
func parseScrape(b []byte) (j scrape, found bool, err error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return scrape{}, false, err
	}
	syncs := fams["custody_ledger_fsyncs_total"]
	if syncs == nil {
		return scrape{}, false, nil
	}
	for _, m := range syncs.GetMetric() {
		j.syncs += int64(m.GetCounter().GetValue() + m.GetUntyped().GetValue())
	}
	if j.commits, err = histogramOf(fams["custody_ledger_commit_seconds"]); err != nil {
		return scrape{}, false, err
	}
	if j.sched, err = histogramOf(fams["go_sched_latencies_seconds"]); err != nil {
		return scrape{}, false, err
	}
	return j, true, nil
}

// histogramOf is a histogram family's buckets (ascending, without +Inf)
// and count, summed over its series, which must share their bounds; the
// zero histogram when the scrape has no such family.
func histogramOf(f *dto.MetricFamily) (histogram, error) {
	var h histogram
	if f == nil {
		return h, nil
	}
	if f.GetType() != dto.MetricType_HISTOGRAM {
		return histogram{}, fmt.Errorf("%s is a %s, not a histogram", f.GetName(), f.GetType())
	}
	for i, m := range f.GetMetric() {
		var bounds []float64
		var cumulative []int64
		for _, b := range m.GetHistogram().GetBucket() {
			if math.IsInf(b.GetUpperBound(), +1) {
				continue
			}
			bounds, cumulative = append(bounds, b.GetUpperBound()), append(cumulative, int64(b.GetCumulativeCount()))
		}
		if !slices.IsSorted(bounds) {
			return histogram{}, fmt.Errorf("%s: bounds %v not ascending", f.GetName(), bounds)
		}
		switch {
		case i == 0:
			h.bounds, h.cumulative = bounds, cumulative
		case !slices.Equal(h.bounds, bounds):
			return histogram{}, fmt.Errorf("%s: series with different bounds", f.GetName())
		default:
			for k := range cumulative {
				h.cumulative[k] += cumulative[k]
			}
		}
		h.count += int64(m.GetHistogram().GetSampleCount())
	}
	return h, nil
}

// over is how many of h's observations exceed limit seconds, as far as
// its buckets tell: those past the greatest bound at or under limit.
func (h histogram) over(limit float64) int64 {
	at := int64(0)
	for i, le := range h.bounds {
		if le > limit {
			break
		}
		at = h.cumulative[i]
	}
	return h.count - at
}

// addSched adds the scheduling waits between two readings to the open
// loop's: all of them, and those over schedSlow.
func (m *mode) addSched(before, after scrape) {
	if len(after.sched.bounds) == 0 || len(before.sched.bounds) != len(after.sched.bounds) {
		return
	}
	m.OpenSched += after.sched.count - before.sched.count
	m.OpenSchedSlow += after.sched.over(schedSlow) - before.sched.over(schedSlow)
	m.SchedSlowBound = schedSlow
	for _, le := range after.sched.bounds {
		if le <= schedSlow {
			m.SchedSlowBound = le
		}
	}
}

// schedSlow is the wait for a processor counted as slow: about a
// millisecond (the runtime's buckets there are 0.92 ms and 10.5 ms).
const schedSlow = 0.001

// addCommits adds the commits between two readings to the open loop's.
func (m *mode) addCommits(before, after scrape) {
	b, a := before.commits, after.commits
	if len(a.bounds) == 0 || len(b.bounds) != len(a.bounds) {
		return
	}
	if m.OpenCommits == nil {
		m.CommitBounds, m.OpenCommits = a.bounds, make([]int64, len(a.bounds)+1)
	}
	for i := range a.bounds {
		m.OpenCommits[i] += a.cumulative[i] - b.cumulative[i]
	}
	m.OpenCommits[len(a.bounds)] += a.count - b.count
}

// commitQuantile is the q-quantile of the open loops' group-commit
// times, interpolated within its bucket as Prometheus'
// histogram_quantile does; 0 when none were read.
func (m *mode) commitQuantile(q float64) time.Duration {
	if len(m.OpenCommits) == 0 {
		return 0
	}
	total := m.OpenCommits[len(m.CommitBounds)]
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	lower, below := 0.0, int64(0)
	for i, le := range m.CommitBounds {
		c := m.OpenCommits[i]
		if float64(c) >= rank {
			frac := (rank - float64(below)) / math.Max(1, float64(c-below))
			return time.Duration((lower + (le-lower)*frac) * float64(time.Second))
		}
		lower, below = le, c
	}
	return time.Duration(lower * float64(time.Second)) // past the last bound
}

// satSyncsPerSec and openSyncsPerSec are the fsync rates of a durable
// mode at saturation and at the open-loop rate.
func (m *mode) satSyncsPerSec() float64 {
	if m.SatTime == 0 {
		return 0
	}
	return float64(m.SatSyncs) / m.SatTime.Seconds()
}

func (m *mode) openSyncsPerSec() float64 {
	if m.OpenTime == 0 {
		return 0
	}
	return float64(m.OpenSyncs) / m.OpenTime.Seconds()
}

// sampleRSS samples the proxy's resident set every 50 ms into SatRSSkB
// until stop is called.
func (m *mode) sampleRSS() (stop func()) {
	if m.proc == nil {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if st, err := m.proc.proc(); err == nil {
				m.SatRSSkB = max(m.SatRSSkB, st.RSSkB)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}

// cpu reads the proxy's CPU time, the simulator's, and the proxy's
// run-queue wait.
func (m *mode) cpu(simc *child) ([3]time.Duration, error) {
	var out [3]time.Duration
	if m.proc != nil {
		st, err := m.proc.proc()
		if err != nil {
			return out, err
		}
		out[0], out[2] = st.CPU, st.Wait
	}
	st, err := simc.proc()
	if err != nil {
		return out, err
	}
	out[1] = st.CPU
	return out, nil
}

// profile takes a CPU profile of m's process while saturating it, into
// path (and path.allocs, path.trace), then an execution trace under the
// open loop at rate (path.open.trace), where the tail is measured.
func profile(ctx context.Context, m *mode, p proxyParams, rate float64, path string) error {
	secs := max(1, int(p.ProfileDur.Seconds()))
	done := make(chan closedResult, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- m.load.closedLoop(lctx, p.Conc, time.Duration(secs+2)*time.Second, 0) }()
	if err := fetch(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", m.proc.PProf, secs), path); err != nil {
		return fmt.Errorf("profiling %s: %w", m.Name, err)
	}
	r := <-done
	// The allocation profile: everything allocated since the process
	// started, most of it under this saturated load.
	if err := fetch(m.proc.PProf+"/debug/pprof/allocs", path+".allocs"); err != nil {
		return err
	}
	// And one second of execution trace under the same load: where the
	// goroutines wait (go tool trace -pprof=sched|syscall|net FILE.trace).
	go func() { done <- m.load.closedLoop(lctx, p.Conc, 3*time.Second, 0) }()
	if err := fetch(m.proc.PProf+"/debug/pprof/trace?seconds=1", path+".trace"); err != nil {
		return err
	}
	<-done
	// Three seconds of trace under the open loop: the stalls that make the
	// tail (go tool trace -pprof=sched FILE.open.trace; a stretch that
	// holds the only P shows as the others' wait).
	opened := make(chan openResult, 1)
	go func() { opened <- m.load.openLoop(lctx, rate, int(rate*4), false) }()
	if err := fetch(m.proc.PProf+"/debug/pprof/trace?seconds=3", path+".open.trace"); err != nil {
		return err
	}
	o := <-opened
	fmt.Fprintf(p.Log, "profile of %s at %.0f req/s written to %s (and %s.allocs, %s.trace; %s.open.trace at %.0f req/s, p99 %v)\n",
		m.Name, r.rps(), path, path, path, path, rate, pct(o.Lat, 0.99))
	// Which requests are the tail: at one P, mostly those that overlapped
	// the collector's mark phase (docs/BENCHMARKS.md, "The slowest
	// hundredth is the collector's"), and how long the journal's fsync
	// took then.
	if t, err := readTail(path+".open.trace", serveCommits); err != nil {
		fmt.Fprintf(p.Log, "reading %s.open.trace: %v\n", path, err)
	} else {
		fmt.Fprintf(p.Log, "%s.open.trace: %v\n", path, t)
	}
	return nil
}

// pct is the q-quantile of ds (nearest rank); ds is sorted in place.
func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// fetch saves the body of a GET of url to path.
// The admin key goes with it: custody serve's profiler is behind it.
func fetch(url, path string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+benchAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
