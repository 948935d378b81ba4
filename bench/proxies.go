package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
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
	Profile    string
	ProfileDur time.Duration
	Log        io.Writer // progress
	KeepLogs   bool      // keep the children's logs and data directories
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
	SimCPU       time.Duration
	SimCPUN      int64
	Lat, TTFB    []time.Duration
	OpenErr      int64
	HWMkB        int64
	FirstErr     error
	MaxLate      time.Duration
}

// proxyReport is the outcome of the proxy benchmark.
type proxyReport struct {
	Modes       []*mode
	Rate        float64 // the open-loop rate used
	RateLowered bool
	CalibRPS    float64 // the lowest saturation seen in calibration
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

// runProxies starts the simulator and the four proxies and measures the
// five modes in interleaved rounds.
func runProxies(ctx context.Context, p proxyParams) (*proxyReport, error) {
	logDir, err := os.MkdirTemp("", "custody-bench-")
	if err != nil {
		return nil, err
	}
	if p.KeepLogs {
		fmt.Fprintf(p.Log, "children's logs and data in %s\n", logDir)
	} else {
		defer os.RemoveAll(logDir)
	}
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	simc, err := startChild("sim", "sim", logDir)
	if err != nil {
		return nil, err
	}
	children = append(children, simc)
	up := upstreamEnv + "=" + simc.URL + "/v1"
	modes := []*mode{{Key: "A", Name: "direct"}, {Key: "B", Name: "bare"}, {Key: "C", Name: "nochecks"},
		{Key: "D", Name: "checks"}, {Key: "E", Name: "durable"}}
	for _, m := range modes {
		switch m.Key {
		case "A":
			m.load = newLoader(simc.URL)
			continue
		case "B":
			m.proc, err = startChild("bare", "bare", logDir, up)
		default:
			dir := filepath.Join(logDir, m.Name)
			if err = os.Mkdir(dir, 0o700); err == nil {
				m.proc, err = startChild(m.Name, "custody", logDir, up, modeEnv+"="+m.Name, dirEnv+"="+dir)
			}
		}
		if err != nil {
			return nil, err
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
	rep := &proxyReport{Modes: modes, Params: p, Rate: p.Rate, CalibRPS: math.Inf(1)}
	for _, m := range modes {
		calN := p.SatN / 2
		r := m.load.closedLoop(ctx, p.Conc, p.SatDur/2, calN)
		if r.N == 0 {
			return nil, fmt.Errorf("mode %s (%s): no request succeeded in calibration: %v%s", m.Key, m.Name, r.FirstErr, m.tail())
		}
		rep.CalibRPS = min(rep.CalibRPS, r.rps())
		fmt.Fprintf(p.Log, "calibrate %s %-8s %8.0f req/s (%d errors)\n", m.Key, m.Name, r.rps(), r.Errors)
	}
	if rep.CalibRPS < 1.5*p.Rate {
		rep.Rate, rep.RateLowered = math.Max(10, math.Floor(rep.CalibRPS/1.5/50)*50), true
		fmt.Fprintf(p.Log, "saturation %.0f req/s is under 1.5x %.0f req/s: open-loop rate lowered to %.0f req/s\n",
			rep.CalibRPS, p.Rate, rep.Rate)
	}

	if p.OpenN < 0 {
		p.OpenN = max(1, int(rep.Rate*p.openDur.Seconds()))
		p.StrN = max(1, int(rep.Rate*p.strDur.Seconds()))
		rep.Params = p
	}
	for round := range p.Rounds {
		for _, m := range modes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := m.measure(ctx, p, rep.Rate, simc); err != nil {
				return nil, err
			}
			fmt.Fprintf(p.Log, "round %d %s %-8s %8.0f req/s  p50 %v  errors %d+%d\n", round+1, m.Key, m.Name,
				m.SatRPS[len(m.SatRPS)-1], pct(m.Lat, 0.5), m.SatErr, m.OpenErr)
			if m.FirstErr != nil {
				fmt.Fprintf(p.Log, "  first error: %v\n", m.FirstErr)
			}
		}
	}
	for _, m := range modes {
		if m.proc != nil {
			st, err := m.proc.proc()
			if err != nil {
				return nil, err
			}
			m.HWMkB = st.HWMkB
		}
	}
	if p.Profile != "" {
		if err := profile(ctx, modes[4], p); err != nil {
			return nil, err
		}
	}
	return rep, nil
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
	before, err := m.cpu(simc)
	if err != nil {
		return err
	}
	r := m.load.closedLoop(ctx, p.Conc, p.SatDur, p.SatN)
	after, err := m.cpu(simc)
	if err != nil {
		return err
	}
	if r.N == 0 {
		return fmt.Errorf("mode %s (%s): no request succeeded: %v%s", m.Key, m.Name, r.FirstErr, m.tail())
	}
	m.SatN += r.N
	m.SatErr += r.Errors
	m.SatTime += r.Elapsed
	m.SatRPS = append(m.SatRPS, r.rps())
	m.CPU += after[0] - before[0]
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
	o := m.load.openLoop(ctx, rate, p.OpenN, false)
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

// cpu reads the proxy's and the simulator's CPU time.
func (m *mode) cpu(simc *child) ([2]time.Duration, error) {
	var out [2]time.Duration
	if m.proc != nil {
		st, err := m.proc.proc()
		if err != nil {
			return out, err
		}
		out[0] = st.CPU
	}
	st, err := simc.proc()
	if err != nil {
		return out, err
	}
	out[1] = st.CPU
	return out, nil
}

// profile takes a CPU profile of m's process while saturating it.
func profile(ctx context.Context, m *mode, p proxyParams) error {
	secs := max(1, int(p.ProfileDur.Seconds()))
	done := make(chan closedResult, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- m.load.closedLoop(lctx, p.Conc, time.Duration(secs+2)*time.Second, 0) }()
	if err := fetch(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", m.proc.PProf, secs), p.Profile); err != nil {
		return fmt.Errorf("profiling %s: %w", m.Name, err)
	}
	r := <-done
	// The allocation profile: everything allocated since the process
	// started, most of it under this saturated load.
	if err := fetch(m.proc.PProf+"/debug/pprof/allocs", p.Profile+".allocs"); err != nil {
		return err
	}
	fmt.Fprintf(p.Log, "profile of %s at %.0f req/s written to %s (and %s.allocs)\n", m.Name, r.rps(), p.Profile, p.Profile)
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
func fetch(url, path string) error {
	resp, err := http.Get(url)
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
