package gateway

import "net/http"

// AdminOnly serves h to requests bearing an admin key and answers every
// other request as the admin API does (401/403/429, OpenAI-shaped), with
// the same limiter of wrong keys. It is for handlers mounted beside the
// gateway (Options.Mounts) that must not be public, such as the
// profiler (debug.pprof).
func (g *Gateway) AdminOnly(h http.Handler) http.Handler {
	return g.handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := g.keys.admin(r); err != nil {
			return err
		}
		h.ServeHTTP(w, r)
		return nil
	})
}
