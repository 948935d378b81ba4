package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = "./custody-data"
	}
	if c.Index.Backend == "" {
		c.Index.Backend = "sqlite"
	}
	if c.Ledger.Origin == "" {
		c.Ledger.Origin = "custody.local/log"
	}
	if c.Ledger.BatchMaxAge == 0 {
		c.Ledger.BatchMaxAge = 250 * time.Millisecond
	}
	if c.Ledger.BatchMaxSize == 0 {
		c.Ledger.BatchMaxSize = 4096
	}
	if c.Ledger.SegmentBytes == 0 {
		c.Ledger.SegmentBytes = 32 << 20
	}
	if c.Limits.MaxBodyBytes == 0 {
		c.Limits.MaxBodyBytes = 32 << 20
	}
	if c.Limits.ReadHeaderTimeout == 0 {
		c.Limits.ReadHeaderTimeout = 10 * time.Second
	}
	if c.Limits.ReadTimeout == 0 {
		c.Limits.ReadTimeout = 60 * time.Second
	}
	if c.Limits.IdleTimeout == 0 {
		c.Limits.IdleTimeout = 120 * time.Second
	}
	if c.Limits.MaxConcurrentPerTenant == 0 {
		c.Limits.MaxConcurrentPerTenant = 256
	}
	if c.Limits.MaxConnections == 0 {
		c.Limits.MaxConnections = 4096
	}
	if c.Limits.MaxStreamBytes == 0 {
		c.Limits.MaxStreamBytes = 64 << 20
	}
	if c.Limits.StreamMaxDuration == 0 {
		c.Limits.StreamMaxDuration = 30 * time.Minute
	}
	if c.Limits.MaxResponseBytes == 0 {
		c.Limits.MaxResponseBytes = 32 << 20
	}
	if c.Limits.MaxEventBytes == 0 {
		c.Limits.MaxEventBytes = 1 << 20
	}
	if c.Limits.MaxInflightBytes == 0 {
		c.Limits.MaxInflightBytes = 1 << 30
	}
	if c.Limits.AuthFailuresPerMinute == 0 {
		c.Limits.AuthFailuresPerMinute = 10
	}
	if c.Canaries.NeedleMaxTokens == 0 {
		c.Canaries.NeedleMaxTokens = 16384
	}
	if c.Checks.ReplayWindow == 0 {
		c.Checks.ReplayWindow = time.Hour
	}
	if c.Checks.ReplayMaxEntries == 0 {
		c.Checks.ReplayMaxEntries = 500_000
	}
	if c.Checks.OnIndexUnavailable == "" {
		c.Checks.OnIndexUnavailable = "flag"
	}
	for i := range c.Tenants {
		if c.Tenants[i].Policy == "" {
			c.Tenants[i].Policy = "default"
		}
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Timeout == 0 {
			p.Timeout = 120 * time.Second
		}
		if p.CacheIsolation == "" {
			p.CacheIsolation = "off"
		}
		if p.Engine == "" {
			p.Engine = "auto"
			if p.Kind == "sim" {
				p.Engine = "llamacpp"
			}
		}
	}
	for i := range c.Models {
		m := &c.Models[i]
		if m.Tokenizer == "" {
			m.Tokenizer = "o200k_base" // tokenize.DefaultName
		}
		if m.ChatTemplate == "" {
			m.ChatTemplate = "auto"
		}
		if m.PromptTokenSlack == (Slack{}) {
			m.PromptTokenSlack = Slack{PerMessage: 8, Fixed: 64}
		}
		for j := range m.Routes {
			r := &m.Routes[j]
			if r.Model == "" {
				r.Model = m.Name
			}
			if len(r.Accept) == 0 {
				r.Accept = []string{r.Model}
			}
		}
	}
	hasDefault := false
	for i := range c.Policies {
		p := &c.Policies[i]
		hasDefault = hasDefault || p.Name == "default"
		if p.Fallback == "" {
			p.Fallback = "allow"
		}
		if p.OnCacheShared == "" {
			p.OnCacheShared = "flag"
		}
		if p.OnContamination == "" {
			p.OnContamination = "reject"
		}
		if p.OnContract == "" {
			p.OnContract = "default"
		}
	}
	for i := range c.Evals {
		e := &c.Evals[i]
		if e.Threshold == nil {
			one := 1.0
			e.Threshold = &one
		}
		if e.Rate == 0 {
			e.Rate = 2
		}
	}
	if !hasDefault {
		c.Policies = append(c.Policies, Policy{Name: "default", Fallback: "allow", OnContamination: "reject", OnContract: "default", OnCacheShared: "flag"})
	}
}

// Validate returns every problem of c at once, as Errors, or nil.
func (c *Config) Validate(file string) error {
	var errs Errors
	bad := func(key, format string, args ...any) {
		errs = append(errs, &Problem{file, key, fmt.Sprintf(format, args...)})
	}
	// named checks that a list entry's key (its name, or id) is set and
	// not used before in seen.
	named := func(seen map[string]bool, key, kind, name string) {
		if name == "" {
			bad(key, "required")
		} else if seen[name] {
			bad(key, "duplicate %s %q", kind, name)
		}
		seen[name] = true
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "not a host:port address: %v", err)
	}
	for i, k := range c.AdminKeys {
		if strings.TrimSpace(k) == "" {
			bad(fmt.Sprintf("admin_keys[%d]", i), "empty key")
		}
	}
	for i, h := range c.AdminKeySHA256 {
		if !isSHA256Hex(h) {
			bad(fmt.Sprintf("admin_key_sha256[%d]", i), "not 64 hex digits")
		}
	}
	switch c.Index.Backend {
	case "sqlite":
	case "postgres":
		if c.Index.DSN == "" {
			bad("index.dsn", "required for the postgres backend")
		}
	default:
		bad("index.backend", "%q is not sqlite or postgres", c.Index.Backend)
	}
	if c.Ledger.BatchMaxAge < 0 || c.Ledger.BatchMaxAge > time.Second {
		bad("ledger.batch_max_age", "must be between 0 and 1s, got %s", c.Ledger.BatchMaxAge)
	}
	if c.Ledger.BatchMaxSize < 0 {
		bad("ledger.batch_max_size", "must not be negative")
	}
	validateWitnesses(&c.Ledger, bad)
	if c.Ledger.SegmentBytes < 1<<20 {
		bad("ledger.segment_bytes", "must be at least 1048576 (1 MiB; a segment holds whole records of up to 64 KiB), got %d", c.Ledger.SegmentBytes)
	}
	if c.Limits.MaxBodyBytes < 1024 {
		bad("limits.max_body_bytes", "must be at least 1024, got %d", c.Limits.MaxBodyBytes)
	}
	if c.Limits.MaxConcurrentPerTenant < 0 {
		bad("limits.max_concurrent_per_tenant", "must not be negative")
	}
	if c.Limits.MaxConnections < 0 {
		bad("limits.max_connections", "must not be negative")
	}
	if c.Limits.MaxStreamBytes < 0 {
		bad("limits.max_stream_bytes", "must not be negative")
	}
	if c.Limits.StreamIdle < 0 {
		bad("limits.stream_idle", "must not be negative")
	}
	if c.Limits.StreamMaxDuration < 0 {
		bad("limits.stream_max_duration", "must not be negative")
	}
	for _, l := range []struct {
		key string
		n   int64
	}{
		{"limits.max_response_bytes", c.Limits.MaxResponseBytes},
		{"limits.max_event_bytes", c.Limits.MaxEventBytes},
		{"limits.max_inflight_bytes", c.Limits.MaxInflightBytes},
	} {
		if l.n <= 0 {
			bad(l.key, "must be a positive number of bytes (leave it out for the default), got %d", l.n)
		}
	}
	if m := c.Limits.MaxInflightBytes; m > 0 && (m < c.Limits.MaxResponseBytes || m < c.Limits.MaxEventBytes) {
		bad("limits.max_inflight_bytes", "must be at least limits.max_response_bytes (%d) and limits.max_event_bytes (%d): "+
			"an answer of that size could never be held, got %d", c.Limits.MaxResponseBytes, c.Limits.MaxEventBytes, m)
	}

	policies := map[string]bool{}
	for i, p := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		named(policies, key+".name", "policy", p.Name)
		if p.Fallback != "allow" && p.Fallback != "deny" {
			bad(key+".fallback", "%q is not allow or deny", p.Fallback)
		}
		if p.OnContamination != "reject" && p.OnContamination != "flag" {
			bad(key+".on_contamination", "%q is not reject or flag", p.OnContamination)
		}
		if p.OnContract != "default" && p.OnContract != "reject" && p.OnContract != "flag" {
			bad(key+".on_contract", "%q is not default, reject or flag", p.OnContract)
		}
		if p.OnCacheShared != "flag" && p.OnCacheShared != "quarantine" {
			bad(key+".on_cache_shared", "%q is not flag or quarantine", p.OnCacheShared)
		}
	}

	providers := map[string]bool{}
	for i, p := range c.Providers {
		key := fmt.Sprintf("providers[%d]", i)
		named(providers, key+".name", "provider", p.Name)
		switch p.Kind {
		case KindOpenAI:
			if p.BaseURL == "" {
				bad(key+".base_url", "required for kind openai")
			} else if !isHTTPURL(p.BaseURL) {
				bad(key+".base_url", "%q is not an http(s) URL", p.BaseURL)
			}
		case KindSim:
		case KindAnthropic:
			if p.BaseURL == "" {
				bad(key+".base_url", "required for kind anthropic")
			} else if !isHTTPURL(p.BaseURL) {
				bad(key+".base_url", "%q is not an http(s) URL", p.BaseURL)
			}
			if p.Responses {
				bad(key+".responses", "a kind anthropic provider does not serve /v1/responses")
			}
		default:
			bad(key+".kind", "%q is not openai, anthropic or sim", p.Kind)
		}
		switch p.CacheIsolation {
		case "tenant", "tenant_use_case", "disable", "off":
		default:
			bad(key+".cache_isolation", "%q is not tenant, tenant_use_case, disable or off", p.CacheIsolation)
		}
		if p.Responses && p.CacheIsolation != "off" {
			// The Responses requests passed through carry no cache
			// member custody sets, and no engine contract says how a
			// Responses endpoint's cache is keyed: isolation would be
			// claimed and not applied.
			bad(key+".cache_isolation", "%q cannot apply to the Responses requests passed through to a provider with responses: true; use cache_isolation: off there, or a second provider without responses: true for isolated traffic", p.CacheIsolation)
		}
		switch p.Engine {
		case "auto", "llamacpp", "vllm", "sglang", "openai":
		default:
			bad(key+".engine", "%q is not llamacpp, vllm, sglang, openai or auto", p.Engine)
		}
		if p.Timeout < 0 {
			bad(key+".timeout", "must be positive")
		}
	}

	models := map[string]bool{}
	for i, m := range c.Models {
		key := fmt.Sprintf("models[%d]", i)
		named(models, key+".name", "model", m.Name)
		if m.ContextWindow <= 0 {
			bad(key+".context_window", "must be a positive number of tokens")
		}
		if m.VerifiedCapacity < 0 {
			bad(key+".verified_capacity", "must not be negative")
		}
		switch {
		case m.Tokenizer == "o200k_base", m.Tokenizer == "cl100k_base", m.Tokenizer == "bytes":
		case strings.HasPrefix(m.Tokenizer, "file:") && len(m.Tokenizer) > len("file:"):
			if reason := unreadable(strings.TrimPrefix(m.Tokenizer, "file:")); reason != "" {
				bad(key+".tokenizer", "%s", reason)
			}
		default:
			bad(key+".tokenizer", "%q is not o200k_base, cl100k_base, file:PATH or bytes", m.Tokenizer)
		}
		switch {
		case m.ChatTemplate == "auto", m.ChatTemplate == "none", m.ChatTemplate == "builtin:chatml":
		case strings.HasPrefix(m.ChatTemplate, "file:") && len(m.ChatTemplate) > len("file:"):
			if reason := unreadable(strings.TrimPrefix(m.ChatTemplate, "file:")); reason != "" {
				bad(key+".chat_template", "%s", reason)
			}
		default:
			bad(key+".chat_template", "%q is not auto, file:PATH, builtin:chatml or none", m.ChatTemplate)
		}
		if m.PromptTokenSlack.PerMessage < 0 || m.PromptTokenSlack.Fixed < 0 {
			bad(key+".prompt_token_slack", "must not be negative")
		}
		if len(m.Routes) == 0 {
			bad(key+".routes", "at least one route is required")
		}
		for j, r := range m.Routes {
			if !providers[r.Provider] {
				bad(fmt.Sprintf("%s.routes[%d].provider", key, j), "unknown provider %q", r.Provider)
			}
		}
	}

	tenants := map[string]bool{}
	keys := map[string]string{}
	for i, t := range c.Tenants {
		key := fmt.Sprintf("tenants[%d]", i)
		named(tenants, key+".id", "tenant", t.ID)
		if ReservedTenantID(t.ID) {
			bad(key+".id", "%q is reserved for custody's own principals (admin, canary..., custody:...); choose another id", t.ID)
		}
		if len(t.APIKeys) == 0 && len(t.APIKeySHA256) == 0 && !t.AnonymousLoopback {
			bad(key, "needs api_keys, api_key_sha256 or anonymous_loopback")
		}
		for j, k := range t.APIKeys {
			if strings.TrimSpace(k) == "" {
				bad(fmt.Sprintf("%s.api_keys[%d]", key, j), "empty key")
			} else if other, dup := keys[k]; dup {
				bad(fmt.Sprintf("%s.api_keys[%d]", key, j), "key already belongs to tenant %q", other)
			}
			keys[k] = t.ID
		}
		for j, h := range t.APIKeySHA256 {
			if !isSHA256Hex(h) {
				bad(fmt.Sprintf("%s.api_key_sha256[%d]", key, j), "not 64 hex digits")
			}
		}
		if !policies[t.Policy] {
			bad(key+".policy", "unknown policy %q", t.Policy)
		}
		for uc, p := range t.UseCases {
			if !policies[p] {
				bad(fmt.Sprintf("%s.use_cases.%s", key, uc), "unknown policy %q", p)
			}
		}
		for j, m := range t.Models {
			if !models[m] {
				bad(fmt.Sprintf("%s.models[%d]", key, j), "unknown model %q", m)
			}
		}
	}
	if len(c.Tenants) == 0 {
		bad("tenants", "at least one tenant is required")
	}
	for i, p := range c.Canaries.Probes {
		if !slices.Contains(probeNames, p) {
			bad(fmt.Sprintf("canaries.probes[%d]", i), "unknown probe %q (want one of %s)", p, strings.Join(probeNames, ", "))
		}
	}
	for i, h := range c.Webhooks {
		key := fmt.Sprintf("webhooks[%d]", i)
		if !isHTTPURL(h.URL) {
			bad(key+".url", "%q is not an http(s) URL", h.URL)
		}
		if h.Secret == "" {
			bad(key+".secret", "required: receivers verify deliveries with it")
		}
		for j, e := range h.Events {
			if !slices.Contains([]string{"fallback", "path_change", "violation", "canary", "eval"}, e) {
				bad(fmt.Sprintf("%s.events[%d]", key, j), "unknown event type %q (want fallback, path_change, violation, canary or eval)", e)
			}
		}
	}
	c.validateEvals(bad)
	if c.Canaries.Interval < 0 {
		bad("canaries.interval", "must not be negative")
	}
	if c.Checks.ReplayWindow < 0 {
		bad("checks.replay_window", "must not be negative")
	}
	if v := c.Checks.OnIndexUnavailable; v != "flag" && v != "reject" {
		bad("checks.on_index_unavailable", "%q is not flag or reject", v)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
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
func (c *Config) validateEvals(bad func(key, format string, args ...any)) {
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
			bad(key+".name", "required")
		case suites[e.Name]:
			bad(key+".name", "duplicate suite %q", e.Name)
		case !suiteName.MatchString(e.Name):
			bad(key+".name", "%q: a suite name is letters, digits, - and _ (it names files and metric labels)", e.Name)
		}
		suites[e.Name] = true
		if e.File == "" {
			bad(key+".file", "required: the suite's JSONL file")
		}
		for j, r := range e.Routes {
			if !routes[r] {
				bad(fmt.Sprintf("%s.routes[%d]", key, j), "no route %q (want MODEL/PROVIDER, one of the models' routes)", r)
			}
		}
		if e.Interval < 0 {
			bad(key+".interval", "must not be negative")
		}
		if t := *e.Threshold; t < 0 || t > 1 || t != t {
			bad(key+".threshold", "must be a pass ratio in [0, 1], got %v", t)
		}
		if e.Rate <= 0 || e.Rate != e.Rate {
			bad(key+".rate", "must be a positive number of requests per second")
		}
	}
	for i, p := range c.Policies {
		for j, s := range p.RequireEvals {
			if !suites[s] {
				bad(fmt.Sprintf("policies[%d].require_evals[%d]", i, j), "unknown suite %q (not in evals)", s)
			}
		}
	}
}
