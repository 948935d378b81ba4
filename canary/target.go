package canary

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custody-gateway/custody/tokenize"
)

// Target is one route of one model, as the gateway exposes it to canaries.
// Implementations must be safe for concurrent use.
type Target interface {
	// Name is the route's label, e.g. "sim-1/sim" (model/provider): the
	// `route` label of custody_canary_status and the enrollment file name.
	Name() string
	// Capacity is the route's verified capacity in prompt tokens.
	Capacity() int
	// Chat sends a chat completion through custody's checks on this route
	// only (no fallback), recorded as canary traffic. A custody rejection
	// is a Result with Code set, not an error; err is for requests that
	// never got an answer (transport failure, ctx done).
	Chat(ctx context.Context, req ChatRequest) (Result, error)
	// Direct sends req as a chat completion straight to the route's
	// upstream (with the route's upstream model), bypassing custody: the
	// oversize probe needs to see what the upstream itself does with a
	// prompt custody would never forward.
	Direct(ctx context.Context, req ChatRequest) (Result, error)
}

// CountingTarget is a Target that knows its model's tokenizer (the
// `tokenizer:` of the model's config). The needle and oversize probes then
// size their prompts with it instead of Config.Counter, so that "half of
// capacity" and "just over capacity" hold in the upstream's own count.
type CountingTarget interface {
	Target
	Counter() tokenize.Counter
}

// Message is one chat message.
type Message struct {
	Role    string
	Content string
}

// ChatRequest is a canary's chat completion. Zero fields are left out of
// the upstream request.
type ChatRequest struct {
	Messages    []Message
	Temperature *float64
	Seed        *int
	MaxTokens   int
	Logprobs    bool
	TopLogprobs int
	// Tenant is the synthetic canary tenant the request is sent as (the
	// secret probe's, the cache probe's two); "" means the gateway's
	// default canary tenant. Distinct tenants must reach the upstream as
	// distinct tenants (custody salts their prompt caches apart).
	Tenant string
}

// Result is what a Target got back.
type Result struct {
	// Status is the HTTP status the client of custody (or, for Direct, of
	// the upstream) saw.
	Status int
	// Body is the response body: an OpenAI chat completion or error.
	Body []byte
	// Code is custody's rejection code ("prompt_token_mismatch", ...), or
	// "" when custody verified or flagged the response.
	Code string
	// TTFB is the time from sending the request to the first byte of the
	// response (for a non-streamed answer of one token, about the time to
	// first token); 0 when the Target does not measure it, and the probes
	// that time answers (cache) then time the whole Chat call.
	TTFB time.Duration
}

// CachedTokens is usage.prompt_tokens_details.cached_tokens of the
// response body: the prompt tokens the upstream served from its prefix
// cache; ok is false when the body does not say.
func (r Result) CachedTokens() (n int, ok bool) {
	a, err := parseAnswer(r.Body)
	if err != nil || !a.HasCached {
		return 0, false
	}
	return a.CachedTokens, true
}

// wireRequest is ChatRequest as an OpenAI chat completion request.
type wireRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Temperature *float64      `json:"temperature,omitempty"`
	Seed        *int          `json:"seed,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Logprobs    bool          `json:"logprobs,omitempty"`
	TopLogprobs int           `json:"top_logprobs,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Body encodes r as an OpenAI chat completion request for model (what a
// Target sends; Tenant is not part of the body).
func (r ChatRequest) Body(model string) ([]byte, error) {
	w := wireRequest{Model: model, Temperature: r.Temperature, Seed: r.Seed, MaxTokens: r.MaxTokens, Logprobs: r.Logprobs, TopLogprobs: r.TopLogprobs}
	for _, m := range r.Messages {
		w.Messages = append(w.Messages, wireMessage(m))
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding canary request: %w", err)
	}
	return b, nil
}
