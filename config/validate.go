package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Provider kinds.
const (
	KindOpenAI = "openai"
	KindSim    = "sim"
	// KindAnthropic is the Anthropic API or any Messages-compatible
	// upstream (vLLM's /v1/messages): Messages requests pass through.
	KindAnthropic = "anthropic"
)

// Known canary probes.
var probeNames = []string{"echo", "needle", "oversize", "secret", "identity", "cache"}

// Validate returns every problem of c at once, as Errors, or nil. The
// sections are checked in this order, and the problems of each are listed
// in the order of its keys; a section that names another's entries
// (tenants name policies and models, models name providers, evals name
// routes) is checked after it.
func (c *Config) Validate(file string) error {
	p := &problems{file: file}
	c.validateServer(p)
	c.validateIndex(p)
	c.validateLedger(p)
	c.validateLimits(p)
	policies := c.validatePolicies(p)
	providers := c.validateProviders(p)
	models := c.validateModels(p, providers)
	c.validateTenants(p, policies, models)
	c.validateCanaryProbes(p)
	c.validateWebhooks(p)
	c.validateEvals(p)
	c.validateCanarySchedule(p)
	c.validateChecks(p)
	if len(p.errs) > 0 {
		return p.errs
	}
	return nil
}

// problems collects the problems of one config file as they are found.
type problems struct {
	file string
	errs Errors
}

// bad records that key is wrong, and why.
func (p *problems) bad(key, format string, args ...any) {
	p.errs = append(p.errs, &Problem{p.file, key, fmt.Sprintf(format, args...)})
}

// named checks that a list entry's key (its name, or id) is set and not
// used before in seen, and adds it to seen.
func (p *problems) named(seen map[string]bool, key, kind, name string) {
	if name == "" {
		p.bad(key, "required")
	} else if seen[name] {
		p.bad(key, "duplicate %s %q", kind, name)
	}
	seen[name] = true
}

// validateServer checks the listen address and the admin keys.
func (c *Config) validateServer(p *problems) {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p.bad("listen", "not a host:port address: %v", err)
	}
	for i, k := range c.AdminKeys {
		if strings.TrimSpace(k) == "" {
			p.bad(fmt.Sprintf("admin_keys[%d]", i), "empty key")
		}
	}
	for i, h := range c.AdminKeySHA256 {
		if !isSHA256Hex(h) {
			p.bad(fmt.Sprintf("admin_key_sha256[%d]", i), "not 64 hex digits")
		}
	}
}

// validateIndex checks the index backend and what it needs.
func (c *Config) validateIndex(p *problems) {
	switch c.Index.Backend {
	case "sqlite":
	case "postgres":
		if c.Index.DSN == "" {
			p.bad("index.dsn", "required for the postgres backend")
		}
	default:
		p.bad("index.backend", "%q is not sqlite or postgres", c.Index.Backend)
	}
}

// validateLedger checks the ledger's batching, witnesses and segments.
func (c *Config) validateLedger(p *problems) {
	if c.Ledger.BatchMaxAge < 0 || c.Ledger.BatchMaxAge > time.Second {
		p.bad("ledger.batch_max_age", "must be between 0 and 1s, got %s", c.Ledger.BatchMaxAge)
	}
	if c.Ledger.BatchMaxSize < 0 {
		p.bad("ledger.batch_max_size", "must not be negative")
	}
	validateWitnesses(&c.Ledger, p.bad)
	if c.Ledger.SegmentBytes < 1<<20 {
		p.bad("ledger.segment_bytes", "must be at least 1048576 (1 MiB; a segment holds whole records of up to 64 KiB), got %d", c.Ledger.SegmentBytes)
	}
}

// validateLimits checks the request, stream and memory limits.
func (c *Config) validateLimits(p *problems) {
	l := &c.Limits
	if l.MaxBodyBytes < 1024 {
		p.bad("limits.max_body_bytes", "must be at least 1024, got %d", l.MaxBodyBytes)
	}
	for _, n := range []struct {
		key string
		v   int64
	}{
		{"limits.max_concurrent_per_tenant", int64(l.MaxConcurrentPerTenant)},
		{"limits.max_connections", int64(l.MaxConnections)},
		{"limits.max_stream_bytes", l.MaxStreamBytes},
		{"limits.stream_idle", int64(l.StreamIdle)},
		{"limits.stream_max_duration", int64(l.StreamMaxDuration)},
	} {
		if n.v < 0 {
			p.bad(n.key, "must not be negative")
		}
	}
	for _, b := range []struct {
		key string
		n   int64
	}{
		{"limits.max_response_bytes", l.MaxResponseBytes},
		{"limits.max_event_bytes", l.MaxEventBytes},
		{"limits.max_inflight_bytes", l.MaxInflightBytes},
	} {
		if b.n <= 0 {
			p.bad(b.key, "must be a positive number of bytes (leave it out for the default), got %d", b.n)
		}
	}
	if m := l.MaxInflightBytes; m > 0 && (m < l.MaxResponseBytes || m < l.MaxEventBytes) {
		p.bad("limits.max_inflight_bytes", "must be at least limits.max_response_bytes (%d) and limits.max_event_bytes (%d): "+
			"an answer of that size could never be held, got %d", l.MaxResponseBytes, l.MaxEventBytes, m)
	}
}

// validatePolicies checks each policy's name and its choices, and returns
// the policy names.
func (c *Config) validatePolicies(p *problems) map[string]bool {
	names := map[string]bool{}
	for i, pol := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		p.named(names, key+".name", "policy", pol.Name)
		if pol.Fallback != "allow" && pol.Fallback != "deny" {
			p.bad(key+".fallback", "%q is not allow or deny", pol.Fallback)
		}
		if pol.OnContamination != "reject" && pol.OnContamination != "flag" {
			p.bad(key+".on_contamination", "%q is not reject or flag", pol.OnContamination)
		}
		if pol.OnContract != "default" && pol.OnContract != "reject" && pol.OnContract != "flag" {
			p.bad(key+".on_contract", "%q is not default, reject or flag", pol.OnContract)
		}
		if pol.OnCacheShared != "flag" && pol.OnCacheShared != "quarantine" {
			p.bad(key+".on_cache_shared", "%q is not flag or quarantine", pol.OnCacheShared)
		}
	}
	return names
}

// validateProviders checks each provider's name, kind, URL, cache
// isolation, engine and timeout, and returns the provider names.
func (c *Config) validateProviders(p *problems) map[string]bool {
	names := map[string]bool{}
	for i, pr := range c.Providers {
		key := fmt.Sprintf("providers[%d]", i)
		p.named(names, key+".name", "provider", pr.Name)
		switch pr.Kind {
		case KindOpenAI:
			validateBaseURL(p, key, pr)
		case KindSim:
		case KindAnthropic:
			validateBaseURL(p, key, pr)
			if pr.Responses {
				p.bad(key+".responses", "a kind anthropic provider does not serve /v1/responses")
			}
		default:
			p.bad(key+".kind", "%q is not openai, anthropic or sim", pr.Kind)
		}
		switch pr.CacheIsolation {
		case "tenant", "tenant_use_case", "disable", "off":
		default:
			p.bad(key+".cache_isolation", "%q is not tenant, tenant_use_case, disable or off", pr.CacheIsolation)
		}
		if pr.Responses && pr.CacheIsolation != "off" {
			// The Responses requests passed through carry no cache
			// member custody sets, and no engine contract says how a
			// Responses endpoint's cache is keyed: isolation would be
			// claimed and not applied.
			p.bad(key+".cache_isolation", "%q cannot apply to the Responses requests passed through to a provider with responses: true; use cache_isolation: off there, or a second provider without responses: true for isolated traffic", pr.CacheIsolation)
		}
		switch pr.Engine {
		case "auto", "llamacpp", "vllm", "sglang", "openai":
		default:
			p.bad(key+".engine", "%q is not llamacpp, vllm, sglang, openai or auto", pr.Engine)
		}
		if pr.Timeout < 0 {
			p.bad(key+".timeout", "must be positive")
		}
	}
	return names
}

// validateBaseURL checks the base_url that a provider of kind openai or
// anthropic needs.
func validateBaseURL(p *problems, key string, pr Provider) {
	if pr.BaseURL == "" {
		p.bad(key+".base_url", "required for kind %s", pr.Kind)
	} else if !isHTTPURL(pr.BaseURL) {
		p.bad(key+".base_url", "%q is not an http(s) URL", pr.BaseURL)
	}
}

// validateModels checks each model's name, window, tokenizer, template
// and slack, and that its routes name known providers; it returns the
// model names.
func (c *Config) validateModels(p *problems, providers map[string]bool) map[string]bool {
	names := map[string]bool{}
	for i, m := range c.Models {
		key := fmt.Sprintf("models[%d]", i)
		p.named(names, key+".name", "model", m.Name)
		if m.ContextWindow <= 0 {
			p.bad(key+".context_window", "must be a positive number of tokens")
		}
		if m.VerifiedCapacity < 0 {
			p.bad(key+".verified_capacity", "must not be negative")
		}
		switch {
		case m.Tokenizer == "o200k_base", m.Tokenizer == "cl100k_base", m.Tokenizer == "bytes":
		case isFileRef(m.Tokenizer):
			if reason := unreadable(strings.TrimPrefix(m.Tokenizer, "file:")); reason != "" {
				p.bad(key+".tokenizer", "%s", reason)
			}
		default:
			p.bad(key+".tokenizer", "%q is not o200k_base, cl100k_base, file:PATH or bytes", m.Tokenizer)
		}
		switch {
		case m.ChatTemplate == "auto", m.ChatTemplate == "none", m.ChatTemplate == "builtin:chatml":
		case isFileRef(m.ChatTemplate):
			if reason := unreadable(strings.TrimPrefix(m.ChatTemplate, "file:")); reason != "" {
				p.bad(key+".chat_template", "%s", reason)
			}
		default:
			p.bad(key+".chat_template", "%q is not auto, file:PATH, builtin:chatml or none", m.ChatTemplate)
		}
		if m.PromptTokenSlack.PerMessage < 0 || m.PromptTokenSlack.Fixed < 0 {
			p.bad(key+".prompt_token_slack", "must not be negative")
		}
		if len(m.Routes) == 0 {
			p.bad(key+".routes", "at least one route is required")
		}
		for j, r := range m.Routes {
			if !providers[r.Provider] {
				p.bad(fmt.Sprintf("%s.routes[%d].provider", key, j), "unknown provider %q", r.Provider)
			}
		}
	}
	return names
}

// isFileRef reports whether s is file:PATH with a PATH.
func isFileRef(s string) bool {
	return strings.HasPrefix(s, "file:") && len(s) > len("file:")
}

// validateTenants checks each tenant's id and keys (a key belongs to one
// tenant), and that its policies and models are known.
func (c *Config) validateTenants(p *problems, policies, models map[string]bool) {
	ids := map[string]bool{}
	keys := map[string]string{}
	for i, t := range c.Tenants {
		key := fmt.Sprintf("tenants[%d]", i)
		p.named(ids, key+".id", "tenant", t.ID)
		if ReservedTenantID(t.ID) {
			p.bad(key+".id", "%q is reserved for custody's own principals (admin, canary..., custody:...); choose another id", t.ID)
		}
		if len(t.APIKeys) == 0 && len(t.APIKeySHA256) == 0 && !t.AnonymousLoopback {
			p.bad(key, "needs api_keys, api_key_sha256 or anonymous_loopback")
		}
		for j, k := range t.APIKeys {
			if strings.TrimSpace(k) == "" {
				p.bad(fmt.Sprintf("%s.api_keys[%d]", key, j), "empty key")
			} else if other, dup := keys[k]; dup {
				p.bad(fmt.Sprintf("%s.api_keys[%d]", key, j), "key already belongs to tenant %q", other)
			}
			keys[k] = t.ID
		}
		for j, h := range t.APIKeySHA256 {
			if !isSHA256Hex(h) {
				p.bad(fmt.Sprintf("%s.api_key_sha256[%d]", key, j), "not 64 hex digits")
			}
		}
		if !policies[t.Policy] {
			p.bad(key+".policy", "unknown policy %q", t.Policy)
		}
		for uc, pol := range t.UseCases {
			if !policies[pol] {
				p.bad(fmt.Sprintf("%s.use_cases.%s", key, uc), "unknown policy %q", pol)
			}
		}
		for j, m := range t.Models {
			if !models[m] {
				p.bad(fmt.Sprintf("%s.models[%d]", key, j), "unknown model %q", m)
			}
		}
	}
	if len(c.Tenants) == 0 {
		p.bad("tenants", "at least one tenant is required")
	}
}

// validateCanaryProbes checks that canaries.probes are known probes.
func (c *Config) validateCanaryProbes(p *problems) {
	for i, pr := range c.Canaries.Probes {
		if !slices.Contains(probeNames, pr) {
			p.bad(fmt.Sprintf("canaries.probes[%d]", i), "unknown probe %q (want one of %s)", pr, strings.Join(probeNames, ", "))
		}
	}
}

// webhookEvents are the event types a webhook can be sent.
var webhookEvents = []string{"fallback", "path_change", "violation", "canary", "eval", "contract"}

// validateWebhooks checks each webhook's URL, secret and event types.
func (c *Config) validateWebhooks(p *problems) {
	for i, h := range c.Webhooks {
		key := fmt.Sprintf("webhooks[%d]", i)
		if !isHTTPURL(h.URL) {
			p.bad(key+".url", "%q is not an http(s) URL", h.URL)
		}
		if h.Secret == "" {
			p.bad(key+".secret", "required: receivers verify deliveries with it")
		}
		for j, e := range h.Events {
			if !slices.Contains(webhookEvents, e) {
				p.bad(fmt.Sprintf("%s.events[%d]", key, j), "unknown event type %q (want fallback, path_change, violation, canary, eval or contract)", e)
			}
		}
	}
}

// validateCanarySchedule checks canaries.interval. It is listed after
// the evals, apart from canaries.probes, as it always has been.
func (c *Config) validateCanarySchedule(p *problems) {
	if c.Canaries.Interval < 0 {
		p.bad("canaries.interval", "must not be negative")
	}
}

// validateChecks checks the replay window, what to do without an index,
// and the watch on the routes' contract pass rates.
func (c *Config) validateChecks(p *problems) {
	if c.Checks.ReplayWindow < 0 {
		p.bad("checks.replay_window", "must not be negative")
	}
	if v := c.Checks.OnIndexUnavailable; v != "flag" && v != "reject" {
		p.bad("checks.on_index_unavailable", "%q is not flag or reject", v)
	}
	if c.Checks.ContractWindow < 0 {
		p.bad("checks.contract_window", "must not be negative")
	}
	if n := c.Checks.ContractMinSamples; n < 0 || n > c.Checks.ContractWindow {
		p.bad("checks.contract_min_samples", "%d is not between 1 and contract_window (%d)", n, c.Checks.ContractWindow)
	}
	if r := c.Checks.ContractMinRate; r != nil && (*r < 0 || *r > 1 || math.IsNaN(*r)) {
		p.bad("checks.contract_min_rate", "%v is not between 0 and 1", *r)
	}
}

// unreadable says why path cannot be read as a file, or "" when it can.
// Paths are relative to custody's working directory, as the tokenizer
// and template loaders read them.
func unreadable(path string) string {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Sprintf("cannot read %s: %v", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return path + " is a directory, not a file"
	}
	return ""
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isSHA256Hex(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

var suiteName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// validateEvals checks the evals section and the policies' require_evals
// against it. The suites' files are read and checked line by line where
// they are loaded (package eval), so that every bad case is named with
// its FILE:LINE.
func (c *Config) validateEvals(p *problems) {
	routes := map[string]bool{}
	for _, m := range c.Models {
		for _, r := range m.Routes {
			routes[m.Name+"/"+r.Provider] = true
		}
	}
	suites := map[string]bool{}
	for i, e := range c.Evals {
		key := fmt.Sprintf("evals[%d]", i)
		switch {
		case e.Name == "":
			p.bad(key+".name", "required")
		case suites[e.Name]:
			p.bad(key+".name", "duplicate suite %q", e.Name)
		case !suiteName.MatchString(e.Name):
			p.bad(key+".name", "%q: a suite name is letters, digits, - and _ (it names files and metric labels)", e.Name)
		}
		suites[e.Name] = true
		if e.File == "" {
			p.bad(key+".file", "required: the suite's JSONL file")
		}
		for j, r := range e.Routes {
			if !routes[r] {
				p.bad(fmt.Sprintf("%s.routes[%d]", key, j), "no route %q (want MODEL/PROVIDER, one of the models' routes)", r)
			}
		}
		if e.Interval < 0 {
			p.bad(key+".interval", "must not be negative")
		}
		if t := *e.Threshold; t < 0 || t > 1 || t != t {
			p.bad(key+".threshold", "must be a pass ratio in [0, 1], got %v", t)
		}
		if r := e.ContractPassRate; r < 0 || r > 1 || r != r {
			p.bad(key+".contract_pass_rate", "must be a pass rate in [0, 1], got %v", r)
		}
		if e.Rate <= 0 || e.Rate != e.Rate {
			p.bad(key+".rate", "must be a positive number of requests per second")
		}
	}
	for i, pol := range c.Policies {
		for j, s := range pol.RequireEvals {
			if !suites[s] {
				p.bad(fmt.Sprintf("policies[%d].require_evals[%d]", i, j), "unknown suite %q (not in evals)", s)
			}
		}
	}
}
