package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// allowed reports whether tenant t may use the client-facing model name.
func allowed(t *config.Tenant, name string) bool {
	return len(t.Models) == 0 || slices.Contains(t.Models, name)
}

// tenantModel is the configured model name that tenant t may use, or the
// error that says it does not exist for t, with code (invalid_request for
// a request's model, not_found for GET /v1/models/{id}): one answer for a
// model that is not configured and one t may not use.
func (g *Gateway) tenantModel(t *config.Tenant, name string, code custody.Code) (*model, error) {
	m, ok := g.models[name]
	if !ok || !allowed(t, name) {
		return nil, &custody.Error{Code: code, Param: "model",
			Message: "the model `" + custody.Bound(name) + "` does not exist or you do not have access to it"}
	}
	return m, nil
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

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
