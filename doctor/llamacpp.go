package doctor

import (
	"context"
	"fmt"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/upstream"
)

// CheckLlamaCppRendering reports which of llama.cpp's template
// renderings a provider runs (template.EngineLlamaCppShortest or
// template.EngineLlamaCppStream): they count numbers in tools and tool
// calls differently.
const CheckLlamaCppRendering = "llamacpp_rendering"

// llamaCpp asks a provider that may be llama.cpp's server for its /props
// (the context it serves) and renders template.LlamaCppProbe with it.
// props is nil when the provider is not llama.cpp or does not answer.
func llamaCpp(ctx context.Context, p *config.Provider, c *upstream.Client) (*upstream.LlamaCppProps, *Finding) {
	if p.Kind != config.KindOpenAI || p.Engine != string(template.EngineLlamaCpp) && p.Engine != string(template.EngineAuto) {
		return nil, nil
	}
	f := &Finding{Check: CheckLlamaCppRendering, Provider: p.Name}
	props, err := c.LlamaCppProps(ctx)
	if err != nil {
		if p.Engine != string(template.EngineLlamaCpp) {
			return nil, nil // auto: not a llama.cpp server, most likely
		}
		f.Status = Warn
		f.Detail = fmt.Sprintf("engine is llamacpp, but GET /props failed (%v): custody cannot tell which of llama.cpp's template renderings the server runs, so it counts a request whose tools or tool calls hold a float or an integer past int64 both ways, a band over both", err)
		f.Fix = "check that base_url is the llama.cpp server's, ending in /v1"
		return nil, f
	}
	build := props.BuildInfo
	if build == "" {
		build = "unknown build"
	}
	rendered, err := c.ApplyTemplate(ctx, []byte(template.LlamaCppProbe))
	if err != nil {
		f.Status = Warn
		f.Detail = fmt.Sprintf("llama.cpp (%s) did not render the probe (%v): counting a request with numbers in its tools both ways, a band over llamacpp-shortest and llamacpp-stream", build, err)
		f.Fix = "start llama-server with --jinja so that it renders the model's own template"
		return &props, f
	}
	f.Status = OK
	switch e := template.ClassifyLlamaCpp(rendered); e {
	case template.EngineLlamaCppStream:
		f.Detail = fmt.Sprintf("llama.cpp (%s) renders chat templates as %s: its own Jinja engine, whose tojson prints floats with 6 significant digits and wraps integers past int64; serve counts exactly so", build, e)
	case template.EngineLlamaCppShortest:
		f.Detail = fmt.Sprintf("llama.cpp (%s) renders chat templates as %s: tojson prints floats in their shortest form; serve counts exactly so", build, e)
	default:
		f.Detail = fmt.Sprintf("llama.cpp (%s): the model's template prints no number through tojson, so llamacpp-shortest and llamacpp-stream render it alike", build)
	}
	return &props, f
}
