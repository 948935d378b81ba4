// Package config turns custody's YAML file into a validated Config.
//
// Load interpolates ${VAR} (and ${VAR:-default}) in scalar values, refuses
// unknown keys, fills defaults, and validates: every problem is reported at
// once, each as "FILE: KEY: reason", so an operator fixes a file in one pass
// and nothing starts half-configured. The field comments below are the
// configuration reference; README.md repeats them for users.
package config

import "time"

// Config is the whole gateway configuration.
type Config struct {
	// Listen is the address of the HTTP server. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// DataDir holds the log, the index, keys. Default ./custody-data.
	DataDir string `yaml:"data_dir"`
	// AdminKeys may call the admin endpoints and open the console. When
	// empty, custody generates one into DataDir/admin.key on first start.
	AdminKeys []string `yaml:"admin_keys"`
	// AdminKeySHA256 are admin keys given as hex SHA-256 digests.
	AdminKeySHA256 []string `yaml:"admin_key_sha256"`

	Index     Index      `yaml:"index"`
	Ledger    Ledger     `yaml:"ledger"`
	Limits    Limits     `yaml:"limits"`
	Tenants   []Tenant   `yaml:"tenants"`
	Providers []Provider `yaml:"providers"`
	Models    []Model    `yaml:"models"`
	Policies  []Policy   `yaml:"policies"`
	Canaries  Canaries   `yaml:"canaries"`
	Evals     []Eval     `yaml:"evals"`
	Webhooks  []Webhook  `yaml:"webhooks"`
	Checks    Checks     `yaml:"checks"`
	Debug     Debug      `yaml:"debug"`
}

// Index selects where the searchable index of transactions lives.
type Index struct {
	// Backend is sqlite (default, a file in DataDir) or postgres.
	Backend string `yaml:"backend"`
	// DSN is the PostgreSQL connection string (postgres only).
	DSN string `yaml:"dsn"`
}

// Ledger configures the transparency log.
type Ledger struct {
	// Origin names the log in its checkpoints. Default "custody.local/log".
	Origin string `yaml:"origin"`
	// BatchMaxAge bounds how long a durable leaf waits to be sequenced
	// into the public log with others. Durability does not wait for it:
	// a leaf is acknowledged once the journal's group commit has synced it
	// (one fsync shared by every leaf that arrived meanwhile). Default
	// 250ms (tessera's own); smaller values publish sooner at a steep cost in CPU and
	// syscalls (tessera's POSIX driver writes, syncs and renames every
	// tile and bundle a batch touches, and syncs their directories: at
	// 100ms that was 13-25 µs of CPU per request at 3,000-4,000 req/s);
	// larger ones hold more leaves in memory on their way to the log.
	BatchMaxAge time.Duration `yaml:"batch_max_age"`
	// BatchMaxSize bounds a sequencing batch. Default 4096.
	BatchMaxSize int `yaml:"batch_max_size"`
	// SegmentBytes is the size of each journal segment, zero-filled on
	// disk before use: the data dir needs room for two (the current one
	// and the next, prepared ahead). Default 32 MiB; at least 1 MiB.
	SegmentBytes int64 `yaml:"segment_bytes"`
	// KeyFile is the signing key; generated in DataDir when empty.
	KeyFile string `yaml:"key_file"`
	// PublicURL is where other replicas reach this one (its receipts and
	// its log shard at PublicURL/log). Default http://<listen>. Replicas
	// sharing a postgres index each need their own Origin and PublicURL.
	PublicURL string `yaml:"public_url"`
	// Witnesses cosign every checkpoint (C2SP tlog-witness) before it is
	// published, so that a client can tell this log shows everyone the
	// same history. Each witness must know the log (its origin and
	// verifier key) first. Empty: checkpoints carry the log's signature
	// only.
	Witnesses []Witness `yaml:"witnesses"`
	// WitnessPolicy says how many witnesses must cosign.
	WitnessPolicy WitnessPolicy `yaml:"witness_policy"`
}

// Witness is one cosigning witness.
type Witness struct {
	// Name is the witness's name, as in its cosignature lines.
	Name string `yaml:"name"`
	// VKey is its cosignature/v1 verifier key ("name+hash+base64", as
	// litewitness prints it).
	VKey string `yaml:"vkey"`
	// URL is its tlog-witness endpoint (custody POSTs URL/add-checkpoint).
	URL string `yaml:"url"`
}

// WitnessPolicy is the cosigning requirement.
type WitnessPolicy struct {
	// Quorum is how many of the witnesses must cosign a checkpoint before
	// it is published. Default (0): all of them. Requests never wait for
	// witnesses; while fewer than Quorum answer, no new checkpoint is
	// published and /readyz says so.
	Quorum int `yaml:"quorum"`
	// Timeout bounds one round of asking them. Default 5s.
	Timeout time.Duration `yaml:"timeout"`
}

// Limits protect the gateway from its clients and its upstreams.
type Limits struct {
	// MaxBodyBytes is the largest request body accepted (413 above).
	// Default 32 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadHeaderTimeout bounds a client's request headers. Default 10s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request body. Default 60s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// IdleTimeout closes idle keep-alive connections. Default 120s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConcurrentPerTenant bounds in-flight requests per tenant (429
	// with Retry-After above it). Zero means 256.
	MaxConcurrentPerTenant int `yaml:"max_concurrent_per_tenant"`
	// MaxConnections bounds the client connections open at once (idle
	// keep-alives included). Above it, new connections wait in the
	// kernel's listen backlog, unanswered, until one closes; they are
	// not accepted and closed. Read at start: a reload does not change
	// it. Zero means 4096.
	MaxConnections int `yaml:"max_connections"`
	// MaxStreamBytes bounds the bytes of one upstream stream (its events,
	// keep-alive comments included). A stream that exceeds it is ended
	// with one response_too_large error event and no [DONE]. Zero means
	// 64 MiB.
	MaxStreamBytes int64 `yaml:"max_stream_bytes"`
	// MaxResponseBytes bounds a plain (non-streamed) upstream answer's
	// body: a longer one is refused 502 response_too_large, before it is
	// read whole when its Content-Length says so. Default 32 MiB; zero
	// or negative is refused.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// MaxEventBytes bounds one event of an upstream stream (every line
	// read since the last event, comments included): a stream with a
	// longer event is ended with one response_too_large error event.
	// Default 1 MiB; zero or negative is refused.
	MaxEventBytes int64 `yaml:"max_event_bytes"`
	// MaxInflightBytes is the process-wide budget of upstream body bytes
	// held in memory at once by in-flight answers: a plain answer's body
	// as it is read, a stream's largest event so far, and 64 KiB for each
	// request's first read. A request that cannot reserve what it needs
	// waits up to 1s for room, then is refused 503 overloaded with
	// Retry-After: 1 (a stream already started ends with one overloaded
	// error event). It must be at least max_response_bytes and
	// max_event_bytes. Default 1 GiB; zero or negative is refused.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// StreamIdle bounds the time an upstream stream may go without an
	// event that carries something: keep-alive comments, ignored fields
	// and Anthropic ping events do not count, so an upstream cannot hold
	// a stream open with them. Past it the stream ends with one
	// upstream_timeout error event. Zero means the provider's timeout;
	// a provider's shorter timeout wins.
	StreamIdle time.Duration `yaml:"stream_idle"`
	// StreamMaxDuration bounds the whole of one upstream stream, however
	// busy. Past it the stream ends with one upstream_timeout error
	// event. Zero means 30m.
	StreamMaxDuration time.Duration `yaml:"stream_max_duration"`
	// AuthFailuresPerMinute is how many wrong admin keys one client IP may
	// present a minute, at the admin endpoints and the console login
	// together; past it every attempt from that IP gets 429 with
	// Retry-After until its allowance refills. Read at start. Zero means
	// 10; negative means no limit.
	AuthFailuresPerMinute int `yaml:"auth_failures_per_minute"`
}

// Tenant is a client of the gateway.
type Tenant struct {
	ID string `yaml:"id"`
	// APIKeys are the tenant's bearer keys in clear; prefer APIKeySHA256.
	APIKeys []string `yaml:"api_keys"`
	// APIKeySHA256 are hex SHA-256 digests of the tenant's keys.
	APIKeySHA256 []string `yaml:"api_key_sha256"`
	// AnonymousLoopback lets requests without a key from a loopback
	// address act as this tenant (the no-config `local` tenant).
	AnonymousLoopback bool `yaml:"anonymous_loopback"`
	// Policy is the default policy's name. Default "default".
	Policy string `yaml:"policy"`
	// UseCases maps a Custody-Use-Case header value to a policy name.
	UseCases map[string]string `yaml:"use_cases"`
	// Models is the allow-list of client-facing model names; empty = all.
	Models []string `yaml:"models"`
}

// Provider is an upstream serving stack.
type Provider struct {
	Name string `yaml:"name"`
	// Kind is openai (any OpenAI-compatible server), anthropic (the
	// Anthropic API or any Messages-compatible server: /v1/messages passes
	// through, and only Messages requests can be routed to it) or sim (the
	// built-in simulator, run in-process on a loopback port).
	Kind string `yaml:"kind"`
	// Responses: the upstream serves /v1/responses itself (OpenAI, vLLM),
	// so Responses requests pass through; false (the default) translates
	// them, statelessly, to chat completions.
	Responses bool `yaml:"responses"`
	// Engine is how the upstream renders a chat request before it counts
	// the prompt: llamacpp, vllm, sglang (exact, with the model's chat
	// template), openai (no template; OpenAI's framing) or auto (the
	// default: a band that covers every known engine's rendering). A sim
	// provider renders as llamacpp.
	Engine string `yaml:"engine"`
	// CacheIsolation keeps tenants' prompts out of each other's prompt
	// cache: tenant (a salt per tenant), tenant_use_case (per tenant and
	// use case), disable (no prompt caching: cache_prompt false, for
	// llama.cpp, which has no salt) or off (the default: nothing sent,
	// for upstreams that ignore the field). The salt is a keyed MAC of the
	// tenant, sent as vLLM's cache_salt, over any salt the client sent.
	CacheIsolation string `yaml:"cache_isolation"`
	// BaseURL ends in /v1 for OpenAI-compatible servers. Unused for sim.
	BaseURL string `yaml:"base_url"`
	// APIKey is sent as a bearer token upstream. Never logged.
	APIKey string `yaml:"api_key"`
	Region string `yaml:"region"`
	// RequestIDEcho names the response header in which the upstream must
	// echo custody's X-Request-Id (vLLM: x-request-id).
	RequestIDEcho string `yaml:"request_id_echo"`
	// Timeout bounds one upstream call until its response headers, and
	// each gap between stream chunks. Default 120s.
	Timeout time.Duration `yaml:"timeout"`
	// BreakerThreshold consecutive failures (transport, 5xx, 429) open
	// the provider's circuit breaker for BreakerCooldown, after which one
	// probe is let through. Defaults 5 and 5s.
	BreakerThreshold int           `yaml:"breaker_threshold"`
	BreakerCooldown  time.Duration `yaml:"breaker_cooldown"`
	// Sim configures a sim provider.
	Sim SimOptions `yaml:"sim"`
}

// SimOptions configures the built-in simulator of a sim provider.
type SimOptions struct {
	Models   []string `yaml:"models"`
	Capacity int      `yaml:"capacity"`
	Faults   []string `yaml:"faults"`
	// FaultRate applies Faults to that share of the requests, spread
	// evenly (sim.Config.FaultRate); 0 means every request.
	FaultRate        float64 `yaml:"fault_rate"`
	AllowFaultHeader bool    `yaml:"allow_fault_header"`
	OwnershipTags    bool    `yaml:"ownership_tags"`
	Variant          int     `yaml:"variant"`
	// TokenDelay is the simulated model time per generated token.
	TokenDelay time.Duration `yaml:"token_delay"`
	// PrefillDelay is the simulated model time per prompt token the
	// prefix cache does not hold (a cache hit shows in the time to first
	// token); zero means none.
	PrefillDelay time.Duration `yaml:"prefill_delay"`
}

// Model is a client-facing model name and the routes that serve it.
type Model struct {
	Name string `yaml:"name"`
	// ContextWindow is the advertised context, in tokens.
	ContextWindow int `yaml:"context_window"`
	// VerifiedCapacity is what the serving stack truly holds; preflight
	// uses min(ContextWindow, VerifiedCapacity). Zero means ContextWindow.
	VerifiedCapacity int `yaml:"verified_capacity"`
	// Tokenizer is o200k_base (default), cl100k_base, file:PATH or bytes.
	Tokenizer string `yaml:"tokenizer"`
	// ChatTemplate is the model's chat template: auto (the default: the
	// chat_template of tokenizer_config.json beside a file: tokenizer, or
	// none for the others), file:PATH (a Jinja file, or a
	// tokenizer_config.json), builtin:chatml (the simulator's) or none
	// (count chat without a template).
	ChatTemplate     string  `yaml:"chat_template"`
	PromptTokenSlack Slack   `yaml:"prompt_token_slack"`
	Routes           []Route `yaml:"routes"`
}

// Capacity is the number of prompt tokens custody lets through.
func (m *Model) Capacity() int {
	if m.VerifiedCapacity > 0 && m.VerifiedCapacity < m.ContextWindow {
		return m.VerifiedCapacity
	}
	return m.ContextWindow
}

// Slack is how far above the local count usage.prompt_tokens may be:
// PerMessage per chat message plus Fixed (templates, BOS, tool framing).
type Slack struct {
	PerMessage int `yaml:"per_message"`
	Fixed      int `yaml:"fixed"`
}

// Route is one way to serve a model; later routes are fallbacks.
type Route struct {
	Provider string `yaml:"provider"`
	// Model is the name sent upstream. Default: the client-facing name.
	Model string `yaml:"model"`
	// Accept lists the response models accepted. Default [Model].
	Accept []string `yaml:"accept"`
}

// Policy governs routes, fallbacks and what a failed check does.
type Policy struct {
	Name string `yaml:"name"`
	// Fallback is allow (default) or deny.
	Fallback string `yaml:"fallback"`
	// Regions allowed for providers; empty means any.
	Regions []string `yaml:"regions"`
	// RequirePinned: the response model must equal the route's model.
	RequirePinned bool `yaml:"require_pinned"`
	// OnContamination is reject (default) or flag.
	OnContamination string `yaml:"on_contamination"`
	// OnContract is what an answer that breaks what its request asked
	// for does (the contract check): default (the default) rejects what
	// only a broken serving stack produces (an undeclared tool, an
	// ignored tool_choice, a strict schema broken, more tokens than
	// max_tokens, text where JSON mode was on, a kept stop sequence, a
	// tool_calls finish without a call) and flags a model's own mistake
	// (arguments that break a non-strict tool's schema); reject rejects
	// every broken clause, flag serves every one flagged.
	OnContract string `yaml:"on_contract"`
	// OnCacheShared is what a prompt cache shared across tenants does to
	// the route: flag (default: the answer is served flagged, the event
	// recorded) or quarantine (the cache canary's failure takes the route
	// out of service for this policy, as any failing probe does).
	OnCacheShared string `yaml:"on_cache_shared"`
	// RequireEvals names evaluation suites (evals[].name) that a route's
	// current path must have passed for this policy to use it: until the
	// suites pass on a new path (and on a route a suite does not cover,
	// ever), the policy falls back past the route or refuses with 503
	// route_quarantined naming the suite. Other policies are unaffected.
	RequireEvals []string `yaml:"require_evals"`
}

// Webhook receives custody's events, HMAC-signed (see package notify).
type Webhook struct {
	URL    string `yaml:"url"`
	Secret string `yaml:"secret"`
	// Events are the types sent: fallback, path_change, violation,
	// canary, eval. Empty means all.
	Events []string `yaml:"events"`
}

// Canaries configures the probes of routes.
type Canaries struct {
	// Interval between runs; zero disables the scheduler in serve.
	Interval time.Duration `yaml:"interval"`
	// Probes run on each route; empty means echo, needle, secret and
	// identity (oversize and cache are opt-in).
	Probes []string `yaml:"probes"`
	// IgnorePathChanges stops a new (provider, model, fingerprint) tuple
	// from triggering the route's canaries at once.
	IgnorePathChanges bool `yaml:"ignore_path_changes"`
	// NeedleMaxTokens caps the needle probe's prompt (half the route's
	// verified capacity otherwise): a long prompt on every run costs money
	// on a paid upstream. Zero means 16384; negative means no cap.
	NeedleMaxTokens int `yaml:"needle_max_tokens"`
}

// Enabled reports whether canaries run at all in serve: on a schedule or
// when a path changes. A config that names neither probes nor an
// interval sends no synthetic traffic.
func (c *Canaries) Enabled() bool { return c.Interval > 0 || len(c.Probes) > 0 }

// Eval is one evaluation suite: the team's own cases, run through
// custody's pipeline on every path change of the routes it covers, on its
// interval and on demand (custody eval). See package eval.
type Eval struct {
	Name string `yaml:"name"`
	// File is the suite: JSONL, one case a line (package eval documents
	// the fields). Relative paths are from custody's working directory.
	// It is read at start and on reload; a bad line refuses the config.
	File string `yaml:"file"`
	// Routes the suite covers, as MODEL/PROVIDER; empty means every route
	// of every model.
	Routes []string `yaml:"routes"`
	// Interval between scheduled runs; zero means only on path changes
	// and on demand.
	Interval time.Duration `yaml:"interval"`
	// Threshold is the pass ratio (passing cases / cases) a run needs to
	// pass, in [0, 1]. Default 1: every case.
	Threshold *float64 `yaml:"threshold"`
	// ContractPassRate is the share of a run's answers that must honour
	// their request's contract (the contract check: tools, schemas,
	// tool_choice, formats, limits), in [0, 1]; a run below it fails,
	// naming the broken clauses' codes. Zero (the default) requires none.
	ContractPassRate float64 `yaml:"contract_pass_rate"`
	// Rate bounds the suite's requests per second on one route (eval
	// traffic is billed like any other). Default 2.
	Rate float64 `yaml:"rate"`
}

// Debug holds operator diagnostics; all of them are off by default.
type Debug struct {
	// PProf serves Go's profiler (net/http/pprof) under /debug/pprof/ on
	// the gateway's listener, to admin keys only: a CPU profile of a
	// running gateway is then one request. Off by default. A profile holds
	// stacks and sizes, never request or response bytes.
	PProf bool `yaml:"pprof"`
}

// Checks tunes the integrity checks.
type Checks struct {
	// ReplayWindow is how long response ids and digests are remembered.
	// Default 1h.
	ReplayWindow time.Duration `yaml:"replay_window"`
	// ReplayMaxEntries bounds the replay memory (about 40 bytes an entry,
	// two per response). Default 500,000: 20 MB.
	ReplayMaxEntries int `yaml:"replay_max_entries"`
	// ContaminationWarmup is how many responses the contamination
	// detector learns the model's stock phrases from before it reports
	// fingerprint findings (canary secrets are reported from the first).
	// Zero or negative means none, the default: built-in stock phrases
	// make a warm-up unnecessary.
	ContaminationWarmup int `yaml:"contamination_warmup"`
	// ContaminationMaxPrompts bounds the prompts remembered. Zero means 4096.
	ContaminationMaxPrompts int `yaml:"contamination_max_prompts"`
	// OnIndexUnavailable is what happens to a transaction whose shared
	// check (the replay claim across replicas) cannot run because the
	// index does not answer: "flag" (the default) serves it flagged, with
	// the check skipped; "reject" refuses it, 503 index_unavailable.
	OnIndexUnavailable string `yaml:"on_index_unavailable"`
	// ContractWindow is how many of a route's last answers the contract
	// check judged its pass rate is watched over (issue 30: a drop is an
	// event on the timeline, contractwatch). Zero means 200.
	ContractWindow int `yaml:"contract_window"`
	// ContractMinSamples is how many answers the window must hold before
	// a drop is declared. Zero means 50 (at most the window).
	ContractMinSamples int `yaml:"contract_min_samples"`
	// ContractMinRate is the pass rate a route's window must be shown to
	// fall below (the upper bound of its 99% confidence interval) for a
	// contract event "dropped"; the route's "recovered" event comes when
	// the window's rate is back at or above it. Unset means 0.9; 0 turns
	// contract events off.
	ContractMinRate *float64 `yaml:"contract_min_rate"`
}
