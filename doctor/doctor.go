// Package doctor checks a configuration against the live upstreams it
// names, for the first five minutes with a real engine: is each provider
// reachable, does it serve the routes' models, does its context window
// hold what the config claims, does it echo the request id, and does
// custody's prompt count equal the engine's on a few probe requests. A
// mismatch found here is a false alarm (or a missed one) that would
// otherwise be found in production; each finding says what to change.
// Disk times the journal's commit on the disk under data_dir, which
// every durable answer waits for.
package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// Status is a finding's outcome.
type Status string

const (
	OK      Status = "ok"
	Warn    Status = "warn"    // works, but could be checked better
	Problem Status = "problem" // custody will misjudge this upstream
)

// Finding is one check of one provider (and route).
type Finding struct {
	Check    string `json:"check"`
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"` // client-facing model of the route
	Status   Status `json:"status"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix,omitempty"`
}

// Checks, by name.
const (
	CheckReachable  = "reachable"
	CheckModels     = "models"
	CheckContext    = "context_window"
	CheckRequestID  = "request_id_echo"
	CheckAccounting = "accounting"
)

// Run checks every provider and route of cfg through clients (one per
// provider, as serve makes them).
func Run(ctx context.Context, cfg *config.Config, clients map[string]*upstream.Client) []Finding {
	var out []Finding
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		c := clients[p.Name]
		if c == nil {
			continue
		}
		listed, fs := models(ctx, p, c)
		out = append(out, fs...)
		if listed == nil {
			continue // unreachable: nothing more to learn
		}
		props, rendering := llamaCpp(ctx, p, c)
		if rendering != nil {
			out = append(out, *rendering)
		}
		echoChecked := false
		for j := range cfg.Models {
			m := &cfg.Models[j]
			for _, r := range m.Routes {
				if r.Provider != p.Name {
					continue
				}
				out = append(out, route(m, r, listed, props)...)
				fs, echo := accountingOf(ctx, cfg, m, r, p, c)
				out = append(out, fs...)
				if !echoChecked && echo != nil {
					out = append(out, *echo)
					echoChecked = true
				}
			}
		}
	}
	return out
}

// Problems counts the findings that are problems.
func Problems(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Status == Problem {
			n++
		}
	}
	return n
}

// models fetches GET {base}/models.
func models(ctx context.Context, p *config.Provider, c *upstream.Client) (map[string]upstream.Model, []Finding) {
	f := Finding{Check: CheckReachable, Provider: p.Name}
	list, status, err := c.Models(ctx)
	switch {
	case err != nil && status == 0:
		f.Status, f.Detail, f.Fix = Problem, err.Error(), "check providers[].base_url and that the upstream is running"
		return nil, []Finding{f}
	case err != nil:
		f.Status = Problem
		f.Detail = fmt.Sprintf("GET %s/models: %v", c.Config().BaseURL, err)
		f.Fix = "base_url must be the OpenAI-compatible API's root, usually ending in /v1"
		return nil, []Finding{f}
	}
	f.Status, f.Detail = OK, fmt.Sprintf("GET %s/models lists %d models", c.Config().BaseURL, len(list))
	out := map[string]upstream.Model{}
	for _, m := range list {
		out[m.ID] = m
	}
	return out, []Finding{f}
}

// route checks that the upstream serves the route's model and holds the
// configured capacity: the context it serves (llama.cpp's n_ctx from
// /props where it answers, props), not the one its model was trained on.
func route(m *config.Model, r config.Route, listed map[string]upstream.Model, props *upstream.LlamaCppProps) []Finding {
	base := Finding{Provider: r.Provider, Model: m.Name}
	um, ok := listed[r.Model]
	f := base
	f.Check = CheckModels
	if !ok {
		ids := make([]string, 0, len(listed))
		for id := range listed {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		f.Status, f.Detail = Problem, fmt.Sprintf("the upstream does not list %q (it lists: %s)", r.Model, strings.Join(ids, ", "))
		f.Fix = "set the route's model to one the upstream serves"
		return []Finding{f}
	}
	f.Status, f.Detail = OK, fmt.Sprintf("serves %q", r.Model)
	c := base
	c.Check = CheckContext
	w := um.Window()
	if props != nil && props.NCtx > 0 {
		w = props.NCtx
	}
	switch {
	case w == 0:
		c.Status, c.Detail = Warn, "the upstream does not report its context window: custody cannot check verified_capacity against it"
	case m.Capacity() > w:
		c.Status = Problem
		c.Detail = fmt.Sprintf("custody lets prompts of up to %d tokens through; the upstream serves a context of %d", m.Capacity(), w)
		c.Fix = fmt.Sprintf("set verified_capacity: %d for model %s (a longer prompt may be truncated or replaced upstream)", w, m.Name)
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("custody holds prompts to %d tokens; the upstream reports %d", m.Capacity(), w)
	}
	return []Finding{f, c}
}
