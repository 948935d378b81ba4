package config

import "time"

// applyDefaults fills in every key left out of the file.
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
	if c.Checks.ContractWindow == 0 {
		c.Checks.ContractWindow = 200
	}
	if c.Checks.ContractMinSamples == 0 {
		c.Checks.ContractMinSamples = min(50, max(c.Checks.ContractWindow, 1))
	}
	if c.Checks.ContractMinRate == nil {
		r := 0.9
		c.Checks.ContractMinRate = &r
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
