package gateway

import (
	"context"
	"sync"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/upstream"
)

// llama.cpp's server has rendered chat templates on two Jinja engines
// that print numbers in tools and tool calls differently (see
// template.EngineLlamaCppStream). A provider with engine: llamacpp is
// counted both ways where a request's numbers make them differ, a band
// over both, until serve's start-up probe has asked the server which one
// it runs; from then on it is counted exactly as that one.

// llamaRenderings are the renderings the probe found, by provider.
type llamaRenderings struct {
	m sync.Map // provider name -> template.Engine
}

// probeLlamaCpp asks a llama.cpp provider to render template.LlamaCppProbe
// and remembers which rendering it runs; it says what it found (for the
// provider's /readyz line), "" for a provider that is not llama.cpp's.
func (g *Gateway) probeLlamaCpp(ctx context.Context, p config.Provider, cl *upstream.Client) string {
	if p.Kind != config.KindOpenAI || p.Engine != string(template.EngineLlamaCpp) {
		return ""
	}
	rendered, err := cl.ApplyTemplate(ctx, []byte(template.LlamaCppProbe))
	if err != nil {
		g.log.Warn("llama.cpp rendering unknown: counting both ways where they differ", "provider", p.Name, "error", err)
		return "llama.cpp rendering unknown (POST /apply-template failed): counted both ways where they differ"
	}
	e := template.ClassifyLlamaCpp(rendered)
	if e == template.EngineLlamaCpp {
		return "llama.cpp rendering: the template prints no number through tojson, both renderings alike"
	}
	g.llama.m.Store(p.Name, e)
	return "llama.cpp rendering " + string(e)
}

// routeEngine is how rt's provider renders chat: its engine, or the
// rendering the start-up probe found.
func (g *Gateway) routeEngine(rt route) template.Engine {
	if rt.engine == template.EngineLlamaCpp {
		if e, ok := g.llama.m.Load(rt.prov.Name); ok {
			return e.(template.Engine)
		}
	}
	return rt.engine
}
