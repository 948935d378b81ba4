package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Model is an entry of a provider's GET {base_url}/models, with the
// context windows engines report: vLLM's max_model_len, llama.cpp's
// meta.n_ctx (what it serves, -c) and meta.n_ctx_train (what the model
// was trained on, which older builds report alone).
type Model struct {
	ID          string `json:"id"`
	MaxModelLen int    `json:"max_model_len"`
	Meta        struct {
		NCtx      int `json:"n_ctx"`
		NCtxTrain int `json:"n_ctx_train"`
	} `json:"meta"`
}

// Window is the context window the upstream reports, 0 if none: the
// served one where the upstream says (a llama-server started with
// -c 2048 holds 2,048 tokens whatever its model was trained on).
func (m Model) Window() int {
	if m.Meta.NCtx > 0 {
		return max(m.MaxModelLen, m.Meta.NCtx)
	}
	return max(m.MaxModelLen, m.Meta.NCtxTrain)
}

// maxModelsBody bounds the /models answer read.
const maxModelsBody = 8 << 20

// Models asks the provider for GET {base_url}/models (start-up probes and
// custody doctor). status is the HTTP status, 0 when no answer came; an
// answer that is not a model list is an error whose message says what to
// look at (a base_url without /v1, a refused api_key).
func (c *Client) Models(ctx context.Context) (list []Model, status int, err error) {
	resp, err := c.Get(ctx, "/models")
	if err != nil {
		return nil, 0, fmt.Errorf("no answer: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	base := c.cfg.BaseURL
	switch s := resp.StatusCode; {
	case s == http.StatusNotFound && !strings.HasSuffix(strings.TrimRight(base, "/"), "/v1"):
		return nil, s, fmt.Errorf("404: base_url %s does not end in /v1, which OpenAI-compatible servers serve under", base)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return nil, s, fmt.Errorf("%d: the upstream refused the provider's api_key", s)
	case s != http.StatusOK:
		return nil, s, fmt.Errorf("%d: not a model list; is base_url the API's root (…/v1)?", s)
	}
	var l struct {
		Data []Model `json:"data"`
	}
	if err := json.Unmarshal(body, &l); err != nil || l.Data == nil {
		return nil, resp.StatusCode, errors.New("200, but not an OpenAI model list ({\"data\":[...]}); is base_url the API's root (…/v1)?")
	}
	return l.Data, resp.StatusCode, nil
}
