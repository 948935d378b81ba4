package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// llama.cpp's server answers beside its OpenAI API, at its root (the
// base URL without /v1): GET /props says what it serves, POST
// /apply-template renders a chat request with its own template engine.
// custody doctor and serve's start-up probe ask them which context the
// server holds and which of llama.cpp's template renderings it runs.

// LlamaCppProps is what GET /props reports.
type LlamaCppProps struct {
	// NCtx is the context one request may fill (a slot's n_ctx, what
	// -c gives), not the model's trained context.
	NCtx      int
	BuildInfo string
	// JinjaCaps: the server reports chat_template_caps, which the
	// builds that render with llama.cpp's own Jinja engine do.
	JinjaCaps bool
}

// LlamaCppProps asks a llama.cpp server for GET /props.
func (c *Client) LlamaCppProps(ctx context.Context) (LlamaCppProps, error) {
	var p struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		BuildInfo string          `json:"build_info"`
		Caps      json.RawMessage `json:"chat_template_caps"`
	}
	if err := c.rootJSON(ctx, http.MethodGet, "/props", nil, &p); err != nil {
		return LlamaCppProps{}, err
	}
	return LlamaCppProps{NCtx: p.Settings.NCtx, BuildInfo: p.BuildInfo, JinjaCaps: len(p.Caps) > 0 && string(p.Caps) != "null"}, nil
}

// ApplyTemplate asks a llama.cpp server to render a chat request with
// its template (POST /apply-template) and returns the prompt text.
func (c *Client) ApplyTemplate(ctx context.Context, chat []byte) (string, error) {
	var p struct {
		Prompt *string `json:"prompt"`
	}
	if err := c.rootJSON(ctx, http.MethodPost, "/apply-template", chat, &p); err != nil {
		return "", err
	}
	if p.Prompt == nil {
		return "", fmt.Errorf("POST /apply-template: no prompt in the answer")
	}
	return *p.Prompt, nil
}

// rootJSON sends a request to the server's root and decodes its JSON.
func (c *Client) rootJSON(ctx context.Context, method, path string, body []byte, v any) error {
	root := strings.TrimSuffix(c.base, "/v1")
	req, err := http.NewRequestWithContext(ctx, method, root+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return c.classify(ctx, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: not JSON", method, path)
	}
	return nil
}
