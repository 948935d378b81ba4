package gateway

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// A provider whose base_url lacks /v1 still "starts": every request then
// gets 404. So custody asks each provider for GET {base_url}/models once
// it is built, in the background (start never waits for an upstream),
// logs which URL answered what, and shows the outcome in /readyz's body.
// The outcome never changes readiness: an upstream that is down at start
// may be up a second later, and routes fail over per request anyway.

// ProviderProbe is what one provider answered to GET {base_url}/models.
type ProviderProbe struct {
	Provider string
	URL      string
	Done     bool   // false while the probe is in flight
	Status   int    // the HTTP status; 0 when the request failed
	OK       bool   // 200 with a model list
	Detail   string // what it means, for the operator
}

// probes holds the providers' probe outcomes, in config order.
type probes struct {
	mu  sync.Mutex
	all []ProviderProbe // guarded by mu
}

// ProbeProviders starts one probe per provider and returns at once;
// each is bounded by its provider's timeout (at most 10s). Call it once,
// after New; serve does, for each config it loads.
func (g *Gateway) ProbeProviders() {
	type target struct {
		i      int
		prov   config.Provider
		client *upstream.Client
		want   []string // the route models sent to it
	}
	var targets []target
	g.probes.mu.Lock()
	for _, p := range g.cfg.Providers {
		cl := g.clients[p.Name]
		if cl == nil {
			continue
		}
		var want []string
		for _, m := range g.cfg.Models {
			for _, r := range m.Routes {
				if r.Provider == p.Name && !slices.Contains(want, r.Model) {
					want = append(want, r.Model)
				}
			}
		}
		targets = append(targets, target{len(g.probes.all), p, cl, want})
		g.probes.all = append(g.probes.all, ProviderProbe{Provider: p.Name, URL: strings.TrimRight(cl.Config().BaseURL, "/") + "/models"})
	}
	g.probes.mu.Unlock()
	for _, t := range targets {
		go func() {
			timeout := min(10*time.Second, max(t.client.Config().Timeout, time.Second))
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			g.probes.mu.Lock()
			p := g.probes.all[t.i]
			g.probes.mu.Unlock()
			p.Status, p.OK, p.Detail = probeModels(ctx, t.client, t.want)
			if p.OK {
				if r := g.probeLlamaCpp(ctx, t.prov, t.client); r != "" {
					p.Detail += "; " + r
				}
			}
			p.Done = true
			g.probes.mu.Lock()
			g.probes.all[t.i] = p
			g.probes.mu.Unlock()
			if p.OK {
				g.log.Info("provider probe", "provider", p.Provider, "url", p.URL, "status", p.Status, "detail", p.Detail)
			} else {
				g.log.Warn("provider probe", "provider", p.Provider, "url", p.URL, "status", p.Status, "detail", p.Detail)
			}
		}()
	}
}

// probeModels asks cl for its model list and says what the answer means.
func probeModels(ctx context.Context, cl *upstream.Client, want []string) (status int, ok bool, detail string) {
	list, status, err := cl.Models(ctx)
	if err != nil {
		return status, false, err.Error()
	}
	var missing []string
	for _, m := range want {
		if !slices.ContainsFunc(list, func(u upstream.Model) bool { return u.ID == m }) {
			missing = append(missing, m)
		}
	}
	detail = fmt.Sprintf("%d models", len(list))
	if len(missing) > 0 {
		// Routers and aliases serve names they do not list: a note, not a failure.
		detail += "; not listed: " + strings.Join(missing, ", ")
	}
	return status, true, detail
}

// ProviderProbes returns the probes' outcomes so far, in config order.
func (g *Gateway) ProviderProbes() []ProviderProbe {
	g.probes.mu.Lock()
	defer g.probes.mu.Unlock()
	return slices.Clone(g.probes.all)
}

// writeProbes writes one /readyz line per provider.
func writeProbes(w io.Writer, ps []ProviderProbe) {
	for _, p := range ps {
		switch {
		case !p.Done:
			fmt.Fprintf(w, "provider %s: GET %s: pending\n", p.Provider, p.URL)
		case p.OK:
			fmt.Fprintf(w, "provider %s: GET %s: ok, %s\n", p.Provider, p.URL, p.Detail)
		default:
			fmt.Fprintf(w, "provider %s: GET %s: FAILED, %s\n", p.Provider, p.URL, p.Detail)
		}
	}
}
