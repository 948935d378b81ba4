//go:build unix

package main

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// startUpstreams makes a client per provider, starting the built-in
// simulator on a loopback port for each provider of kind sim.
func (a *app) startUpstreams(cfg *config.Config) (map[string]*upstream.Client, error) {
	clients := map[string]*upstream.Client{}
	var counter tokenize.Counter
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		base := p.BaseURL
		if u, ok := a.simURLs[p.Name]; ok && p.Kind == config.KindSim {
			base = u // already running (a reload keeps it)
		} else if p.Kind == config.KindSim {
			if counter == nil {
				var err error
				if counter, err = tokenize.Default(); err != nil {
					return nil, err
				}
			}
			url, err := a.startSim(cfg, p, counter)
			if err != nil {
				return nil, fmt.Errorf("provider %s: %w", p.Name, err)
			}
			base = url
		}
		clients[p.Name] = upstream.New(upstream.Config{Name: p.Name, BaseURL: base, APIKey: p.APIKey, Timeout: p.Timeout,
			Anthropic:     p.Kind == config.KindAnthropic,
			RequestIDEcho: p.RequestIDEcho, BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})
	}
	return clients, nil
}

func (a *app) startSim(cfg *config.Config, p *config.Provider, counter tokenize.Counter) (string, error) {
	sc := sim.Config{Models: p.Sim.Models, Capacity: p.Sim.Capacity, AllowFaultHeader: p.Sim.AllowFaultHeader, FaultRate: p.Sim.FaultRate,
		OwnershipTags: p.Sim.OwnershipTags, Variant: p.Sim.Variant, TokenDelay: p.Sim.TokenDelay, PrefillDelay: p.Sim.PrefillDelay, Counter: counter}
	// Serve every model routed to this provider and, unless told
	// otherwise, hold exactly the capacity the config claims for them.
	for _, m := range cfg.Models {
		for _, r := range m.Routes {
			if r.Provider != p.Name {
				continue
			}
			if len(p.Sim.Models) == 0 {
				sc.Models = append(sc.Models, r.Model)
			}
			if p.Sim.Capacity == 0 {
				sc.Capacity = max(sc.Capacity, m.Capacity())
			}
		}
	}
	for _, f := range p.Sim.Faults {
		ft, err := sim.ParseFault(f)
		if err != nil {
			return "", err
		}
		sc.Faults = append(sc.Faults, ft)
	}
	s, err := sim.New(sc)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	a.closers = append(a.closers, func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/v1"
	a.simURLs[p.Name] = url
	return url, nil
}
