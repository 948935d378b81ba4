package doctor

import (
	"context"
	"log/slog"
	"slices"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/upstream"
)

// Warnings runs the checks of Run on cfg's real upstreams and logs each
// finding that is not OK at WARN, with what to change: what serve prints
// at start, in the background (call it in a goroutine; it returns when
// the checks are done or ctx ends). Providers of kind sim are left out:
// the built-in simulator is custody's own, configured to match, and its
// faults must see only the traffic a user sends. It returns the findings
// it logged.
func Warnings(ctx context.Context, cfg *config.Config, clients map[string]*upstream.Client, log *slog.Logger) []Finding {
	real := *cfg
	real.Providers = slices.DeleteFunc(slices.Clone(cfg.Providers), func(p config.Provider) bool { return p.Kind == config.KindSim })
	if len(real.Providers) == 0 {
		return nil
	}
	var out []Finding
	for _, f := range Run(ctx, &real, clients) {
		if f.Status == OK || ctx.Err() != nil {
			continue
		}
		log.Warn("doctor: "+f.Detail, "check", f.Check, "provider", f.Provider, "model", f.Model, "status", string(f.Status), "fix", f.Fix)
		out = append(out, f)
	}
	return out
}
