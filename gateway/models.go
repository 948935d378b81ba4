package gateway

import (
	"net/http"
	"slices"
	"sort"

	"github.com/custody-gateway/custody/config"
)

// allowed reports whether tenant t may use the client-facing model name.
func allowed(t *config.Tenant, name string) bool {
	return len(t.Models) == 0 || slices.Contains(t.Models, name)
}

// listModels answers GET /v1/models with the tenant's own models only.
func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request) error {
	t, err := g.keys.tenant(r)
	if err != nil {
		return err
	}
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for name := range g.models {
		if allowed(t, name) {
			out.Data = append(out.Data, entry{ID: name, Object: "model", OwnedBy: "custody"})
		}
	}
	sort.Slice(out.Data, func(i, j int) bool { return out.Data[i].ID < out.Data[j].ID })
	return writeJSON(w, out)
}
