package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/custody-gateway/custody/eval"
	"github.com/custody-gateway/custody/internal/inproc"
)

// The console reads only the admin API (the gateway's AdminAPI, called in
// this process once the operator's session is checked): the answers it
// decodes are the ones the OpenAPI document describes and an outside
// client gets, so the page shows nothing the API cannot.

// apiError is an answer of the admin API other than 200.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("admin API %d %s: %s", e.status, e.code, e.message)
}

// call GETs path?q from the admin API and decodes its JSON into v.
func (c *Console) call(ctx context.Context, path string, q url.Values, v any) error {
	u := path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	status, body, err := inproc.Get(ctx, c.cfg.API, u)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &e)
		return &apiError{status: status, code: e.Error.Code, message: e.Error.Message}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

// pathString is a run's path as the events page writes one: provider /
// model / fingerprint.
func pathString(p eval.Path) string {
	return readablePath(p.Provider + "|" + p.Model + "|" + p.Fingerprint)
}
