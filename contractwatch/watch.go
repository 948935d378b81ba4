// Package contractwatch watches each route's contract pass rate on live
// traffic (issue 30, "a drop is an event on the timeline"): it holds the
// last answers the contract check judged on each route, and says when the
// route's rate drops below the configured minimum and when it comes back.
//
// A drop is declared only when the window shows it with confidence: the
// upper bound of the pass rate's 99% Wilson interval (one-sided 0.5%) is
// below Config.MinRate, over at least Config.MinSamples answers. A route
// whose true rate is at the minimum therefore rarely alarms, and a handful
// of broken answers on a quiet route do not. The route recovers when the
// window's observed rate is back at or above the minimum: between the two
// conditions lies a band (hysteresis), so a rate hovering at the minimum
// gives one event per real crossing, never one per request.
package contractwatch

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// Kinds of contract events: the first word of their detail.
const (
	KindDropped   = "dropped"
	KindRecovered = "recovered"
)

// z is the normal quantile of the drop's confidence: 2.576, a one-sided
// 0.5% chance, per test, that a route at exactly MinRate looks below it.
const z = 2.576

// Config is what a Watcher judges by. The zero value watches nothing.
type Config struct {
	// Window is how many of a route's last judged answers the rate is
	// taken over. Zero or less: nothing is watched.
	Window int
	// MinSamples is how many answers the window must hold before a drop
	// can be declared (at most Window; zero means Window).
	MinSamples int
	// MinRate is the pass rate under which a route has dropped; zero
	// or less: nothing is watched.
	MinRate float64
}

func (c Config) enabled() bool { return c.Window > 0 && c.MinRate > 0 }

func (c Config) minSamples() int {
	if c.MinSamples <= 0 || c.MinSamples > c.Window {
		return c.Window
	}
	return c.MinSamples
}

// Watcher holds each route's window. It is safe for concurrent use:
// Observe runs on the request's goroutine, after the durable append.
type Watcher struct {
	mu     sync.Mutex // guards the fields below
	cfg    Config
	routes map[string]*route // by "model/provider"
}

// route is one route's last judged answers, a ring: codes[i] is ""
// for an answer that passed, else its broken clause's code.
type route struct {
	codes   []custody.Code
	next, n int
	failed  int
	dropped bool
}

// New returns a Watcher judging by cfg.
func New(cfg Config) *Watcher {
	return &Watcher{cfg: cfg, routes: map[string]*route{}}
}

// Configure puts cfg in force (a reload). A route whose window changes
// size starts it again, keeping whether it has dropped, so a route that
// dropped still has one recovery to report; turning the watch off
// forgets every route.
func (w *Watcher) Configure(cfg Config) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !cfg.enabled() {
		clear(w.routes)
	} else if cfg.Window != w.cfg.Window {
		for k, r := range w.routes {
			w.routes[k] = &route{codes: make([]custody.Code, cfg.Window), dropped: r.dropped}
		}
	}
	w.cfg = cfg
}

// Observe adds tx's contract outcome, if the check judged its answer, to
// its route's window, and returns the timeline event it causes, if any:
// a drop or a recovery of the route's rate. Answers the check skipped and
// transactions without a contract outcome count for nothing.
func (w *Watcher) Observe(tx *custody.Transaction) (custody.Event, bool) {
	var code custody.Code
	judged := false
	for _, o := range tx.Outcomes {
		if o.Check != custody.CheckContract || o.Status == custody.StatusSkipped {
			continue
		}
		judged = true
		if o.Status != custody.StatusOK {
			code = o.Code
			if code == "" {
				code = "contract"
			}
		}
		break
	}
	if !judged {
		return custody.Event{}, false
	}
	label := tx.RequestedModel + "/" + tx.Provider
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.cfg.enabled() {
		return custody.Event{}, false
	}
	r := w.routes[label]
	if r == nil {
		r = &route{codes: make([]custody.Code, w.cfg.Window)}
		w.routes[label] = r
	}
	r.add(code)
	var kind string
	switch {
	case !r.dropped && r.n >= w.cfg.minSamples() && upperBound(r.n-r.failed, r.n) < w.cfg.MinRate:
		r.dropped, kind = true, KindDropped
	case r.dropped && r.n >= w.cfg.minSamples() && float64(r.n-r.failed) >= w.cfg.MinRate*float64(r.n):
		r.dropped, kind = false, KindRecovered
	default:
		return custody.Event{}, false
	}
	at := tx.Time
	if at.IsZero() {
		at = time.Now()
	}
	e := custody.Event{Time: at, Type: index.EventContract, Model: tx.RequestedModel, Provider: tx.Provider,
		Route: label, Detail: r.detail(kind, w.cfg.MinRate)}
	if kind == KindDropped {
		e.Code = r.top()
	}
	return e, true
}

// add puts an answer's code in the ring, the oldest out once it is full.
func (r *route) add(code custody.Code) {
	if r.n == len(r.codes) {
		if r.codes[r.next] != "" {
			r.failed--
		}
	} else {
		r.n++
	}
	r.codes[r.next] = code
	if code != "" {
		r.failed++
	}
	r.next = (r.next + 1) % len(r.codes)
}

// broken counts the window's broken answers by code, most first (ties
// by code), as "code=count".
func (r *route) broken() []string {
	counts := map[custody.Code]int{}
	for i := range r.n {
		if c := r.codes[(r.next-r.n+i+len(r.codes))%len(r.codes)]; c != "" {
			counts[c]++
		}
	}
	codes := make([]custody.Code, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	slices.SortFunc(codes, func(a, b custody.Code) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(string(a), string(b))
	})
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = fmt.Sprintf("%s=%d", c, counts[c])
	}
	return out
}

// top is the code the window's broken answers carry most.
func (r *route) top() custody.Code {
	b := r.broken()
	if len(b) == 0 {
		return ""
	}
	c, _, _ := strings.Cut(b[0], "=")
	return custody.Code(c)
}

// detail is the event's detail: numbers and codes only, "KIND
// pass_rate=R passed=P/N min_rate=M [broken=code=n,...]".
func (r *route) detail(kind string, minRate float64) string {
	d := fmt.Sprintf("%s pass_rate=%.4f passed=%d/%d min_rate=%g", kind, float64(r.n-r.failed)/float64(r.n), r.n-r.failed, r.n, minRate)
	if b := r.broken(); len(b) > 0 {
		d += " broken=" + strings.Join(b, ",")
	}
	return d
}

// upperBound is the upper end of the Wilson score interval of passed
// out of n at z.
func upperBound(passed, n int) float64 {
	p, nf := float64(passed)/float64(n), float64(n)
	centre := p + z*z/(2*nf)
	margin := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return (centre + margin) / (1 + z*z/nf)
}
