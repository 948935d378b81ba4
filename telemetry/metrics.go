// Package telemetry exports custody's metrics (Prometheus) and traces
// (OpenTelemetry) under the names listed in docs/operations.md (Observability). Labels are bounded by the
// configuration (model and provider names, codes, verdicts), never by
// traffic; no prompt or response text is ever a label or an attribute.
package telemetry

import (
	"net/http"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/custody-gateway/custody"
)

// Metrics holds custody's Prometheus collectors in their own registry.
type Metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec
	endpoints       *prometheus.CounterVec // by dialect: chat.completions, messages, responses...
	checkFailures   *prometheus.CounterVec
	fallbacks       *prometheus.CounterVec
	pathChanges     *prometheus.CounterVec
	canaryStatus    *prometheus.GaugeVec
	evalPassRatio   *prometheus.GaugeVec
	ledgerLeaves    prometheus.Counter
	requestDuration prometheus.Histogram
	upstreamDur     *prometheus.HistogramVec
	// known are the model names that may be labels: replaced (on a
	// config reload), never mutated.
	known atomic.Pointer[map[string]bool]
}

// NewMetrics registers the collectors in a registry of their own; models
// are the configured client-facing model names (any other requested name
// is "unknown"). One Metrics serves a process: a config reload calls
// SetModels, and every counter goes on.
func NewMetrics(models []string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.SetModels(models)
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "custody_requests_total",
		Help: "Transactions by requested model, effective provider and verdict."}, []string{"model", "provider", "verdict"})
	m.endpoints = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "custody_endpoint_requests_total",
		Help: "Transactions by endpoint (the client's dialect: chat.completions, completions, embeddings, messages, responses) and verdict."}, []string{"endpoint", "verdict"})
	m.checkFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "custody_check_failures_total",
		Help: "Failed (rejecting or flagging) integrity checks by code."}, []string{"code"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "custody_fallbacks_total",
		Help: "Requests served by a route other than the first they tried."}, []string{"model", "from", "to"})
	m.pathChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "custody_path_changes_total",
		Help: "New (provider, response model, system_fingerprint) tuples seen for a model."}, []string{"model"})
	m.canaryStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "custody_canary_status",
		Help: "1 when the route's canary probe passes, 0 when it fails."}, []string{"route", "probe"})
	m.evalPassRatio = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "custody_eval_pass_ratio",
		Help: "Passing cases / cases of the latest run of an evaluation suite on a route."}, []string{"suite", "route"})
	m.ledgerLeaves = prometheus.NewCounter(prometheus.CounterOpts{Name: "custody_ledger_leaves_total",
		Help: "Leaves durably appended to the transparency log."})
	m.requestDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "custody_request_duration_seconds",
		Help: "Time from request to the recorded answer.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)})
	m.upstreamDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "custody_upstream_duration_seconds",
		Help: "Upstream call time until its answer ended.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}, []string{"provider"})
	for _, c := range []prometheus.Collector{m.requests, m.endpoints, m.checkFailures, m.fallbacks, m.pathChanges, m.canaryStatus,
		m.evalPassRatio, m.ledgerLeaves, m.requestDuration, m.upstreamDur,
		// The runtime's scheduling latencies besides the defaults: how long
		// runnable goroutines waited for a processor, which is where a
		// gateway short of CPU (one core, GOMAXPROCS=1) shows first.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{Matcher: schedLatencies})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// SetModels replaces the model names that may be labels (the models of
// the config in force). Safe beside Transaction.
func (m *Metrics) SetModels(models []string) {
	known := make(map[string]bool, len(models))
	for _, name := range models {
		known[name] = true
	}
	m.known.Store(&known)
}

// Transaction counts one finished transaction.
func (m *Metrics) Transaction(tx *custody.Transaction) {
	model := tx.RequestedModel
	if !(*m.known.Load())[model] {
		model = "unknown"
	}
	m.requests.WithLabelValues(model, tx.Provider, string(tx.Verdict)).Inc()
	m.endpoints.WithLabelValues(tx.Endpoint, string(tx.Verdict)).Inc()
	// Every code, the refusals that are no check's (fallback_not_permitted,
	// ledger_unavailable, …) too, once per transaction.
	for _, c := range tx.Codes() {
		m.checkFailures.WithLabelValues(string(c)).Inc()
	}
	if n := len(tx.FallbackChain); n > 1 && tx.Status == http.StatusOK {
		m.fallbacks.WithLabelValues(model, tx.FallbackChain[0], tx.FallbackChain[n-1]).Inc()
	}
	if tx.PathChange {
		m.pathChanges.WithLabelValues(model).Inc()
	}
	m.requestDuration.Observe(tx.Duration.Seconds())
}

// Refusal counts the code of a refusal by one of custody's own endpoints
// (not an exchange, whose codes Transaction counts).
func (m *Metrics) Refusal(code custody.Code) {
	m.checkFailures.WithLabelValues(string(code)).Inc()
}

// Upstream observes one upstream call.
func (m *Metrics) Upstream(provider string, d time.Duration) {
	m.upstreamDur.WithLabelValues(provider).Observe(d.Seconds())
}

// Register adds a collector of another package's (the ledger's witness
// gauges) to the registry.
func (m *Metrics) Register(c prometheus.Collector) error { return m.reg.Register(c) }

// LedgerLeaf counts one durable leaf.
func (m *Metrics) LedgerLeaf() { m.ledgerLeaves.Inc() }

// LedgerSyncs exports syncs, the ledger's count of journal group
// commits (ledger.Log.JournalSyncs), as custody_ledger_fsyncs_total: one
// fdatasync each, shared by every leaf of the group.
func (m *Metrics) LedgerSyncs(syncs func() uint64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "custody_ledger_fsyncs_total",
		Help: "Group commits of the ledger's journal: one fdatasync each, shared by every leaf of the group."},
		func() float64 { return float64(syncs()) }))
}

// InflightBytes exports reserved, the bytes of upstream answers the
// gateway holds in memory now (gateway.Budget.Reserved, against
// limits.max_inflight_bytes), as the gauge custody_inflight_bytes.
func (m *Metrics) InflightBytes(reserved func() int64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "custody_inflight_bytes",
		Help: "Bytes of upstream answers reserved in the in-flight budget (limits.max_inflight_bytes) now."},
		func() float64 { return float64(reserved()) }))
}

// schedLatencies selects go_sched_latencies_seconds from runtime/metrics.
var schedLatencies = regexp.MustCompile(`^/sched/latencies:seconds$`)

// LedgerCommits exports the ledger's histogram of journal group-commit
// times (ledger.Log.JournalCommitTimes) as custody_ledger_commit_seconds:
// the disk's share of every durable answer's latency. bounds are the
// buckets' upper bounds; snapshot returns the cumulative count at each,
// the count of all commits and their total time.
func (m *Metrics) LedgerCommits(bounds []time.Duration, snapshot func() (cumulative []uint64, count uint64, sum time.Duration)) {
	m.reg.MustRegister(&commitCollector{bounds: bounds, snapshot: snapshot})
}

var commitDesc = prometheus.NewDesc("custody_ledger_commit_seconds",
	"Time of the ledger journal's group commits (one write and one fdatasync each), which every durable answer waits for.", nil, nil)

type commitCollector struct {
	bounds   []time.Duration
	snapshot func() ([]uint64, uint64, time.Duration)
}

func (c *commitCollector) Describe(ch chan<- *prometheus.Desc) { ch <- commitDesc }

func (c *commitCollector) Collect(ch chan<- prometheus.Metric) {
	cum, count, sum := c.snapshot()
	buckets := make(map[float64]uint64, len(c.bounds))
	for i, b := range c.bounds {
		buckets[b.Seconds()] = cum[i]
	}
	ch <- prometheus.MustNewConstHistogram(commitDesc, count, sum.Seconds(), buckets)
}

// Canary sets a probe's status on a route.
func (m *Metrics) Canary(route, probe string, ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.canaryStatus.WithLabelValues(route, probe).Set(v)
}

// EvalPassRatio sets the pass ratio of a suite's latest run on a route
// (MODEL/PROVIDER).
func (m *Metrics) EvalPassRatio(suite, route string, ratio float64) {
	m.evalPassRatio.WithLabelValues(suite, route).Set(ratio)
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
