// Package upstream calls model providers. A Client is one provider: its
// base URL, its credentials and its own connection pool, so that a
// misbehaving provider cannot exhaust another's connections.
//
// A connection is reused only after its response body was read to the
// end; a call abandoned early (client gone, check failed mid-stream) is
// cancelled, which closes the connection: a connection in an unknown
// state never carries another request.
package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
)

// Config is one provider as the client needs it.
type Config struct {
	Name    string
	BaseURL string // ends in /v1
	APIKey  string // sent as a bearer token; never logged
	// Anthropic: the provider is Anthropic's API (kind anthropic): the key
	// goes in x-api-key, with anthropic-version, instead of a bearer token.
	Anthropic bool
	Timeout   time.Duration
	// RequestIDEcho names the response header that must echo X-Request-Id.
	RequestIDEcho string
	// BreakerThreshold consecutive failures open the breaker for
	// BreakerCooldown. Zero means 5 and 5s.
	BreakerThreshold int
	BreakerCooldown  time.Duration
}

// Client calls one provider.
type Client struct {
	cfg     Config
	base    string
	http    *http.Client
	breaker *Breaker
}

// New makes a client with its own transport.
func New(cfg Config) *Client {
	t := &http.Transport{
		Proxy:                 nil, // custody talks to its upstreams directly
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		ExpectContinueTimeout: time.Second,
		// Ask for identity encoding: custody checks and commits to the
		// exact bytes, and relays them to the client unchanged.
		DisableCompression: true,
		ForceAttemptHTTP2:  true,
	}
	threshold, cooldown := cfg.BreakerThreshold, cfg.BreakerCooldown
	if threshold <= 0 {
		threshold = 5
	}
	if cooldown <= 0 {
		cooldown = 5 * time.Second
	}
	return &Client{
		breaker: NewBreaker(threshold, cooldown),
		cfg:     cfg,
		base:    strings.TrimRight(cfg.BaseURL, "/"),
		http:    &http.Client{Transport: t, CheckRedirect: noRedirects},
	}
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Breaker is the provider's circuit breaker.
func (c *Client) Breaker() *Breaker { return c.breaker }

// Name is the provider's config name.
func (c *Client) Name() string { return c.cfg.Name }

// Config is the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// Call is one upstream request.
type Call struct {
	Path        string // e.g. /chat/completions, appended to the base URL
	Body        []byte
	RequestID   string // sent as X-Request-Id
	TraceParent string // sent as traceparent
	Stream      bool
}

// Do sends the call. Transport failures come back as *custody.Error
// with upstream_timeout or upstream_unavailable; a cancelled ctx comes
// back as ctx.Err(). The caller must close the response body.
func (c *Client) Do(ctx context.Context, call Call) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+call.Path, bytes.NewReader(call.Body))
	if err != nil {
		return nil, custody.Wrap(custody.CodeUpstreamUnavailable, err, "the upstream URL is invalid")
	}
	req.Header.Set("Content-Type", "application/json")
	if call.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	c.auth(req)
	req.Header.Set("X-Request-Id", call.RequestID)
	if call.TraceParent != "" {
		req.Header.Set("Traceparent", call.TraceParent)
	}
	// A kept-alive connection the upstream closes as this request goes out
	// on it (its keep-alive timeout racing the reuse) answers nothing: net/http
	// sends the request again on a new connection only for a request it may
	// replay, and a nil Idempotency-Key marks it so without sending the
	// header. net/http retries only a reused connection that failed before
	// the first byte of an answer (closed, or reset): an upstream that
	// read the request and then died that way may generate it twice, and
	// custody checks whichever answer comes. Nothing else is sent twice;
	// a fresh connection's failure is never retried.
	req.Header["Idempotency-Key"] = nil
	// Straight to the transport: a POST that is never redirected needs
	// none of http.Client's work per request (its copy of the headers for
	// a redirect, its redirect loop).
	resp, err := c.http.Transport.RoundTrip(req)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return resp, nil
}

// AnthropicVersion is the anthropic-version header sent to kind anthropic
// providers.
const AnthropicVersion = "2023-06-01"

// auth sets the provider's credentials on req.
func (c *Client) auth(req *http.Request) {
	if c.cfg.Anthropic {
		req.Header.Set("Anthropic-Version", AnthropicVersion)
		if c.cfg.APIKey != "" {
			req.Header.Set("X-Api-Key", c.cfg.APIKey)
		}
		return
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}

// Get fetches a path (for canaries and model listings).
func (c *Client) Get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, custody.Wrap(custody.CodeUpstreamUnavailable, err, "the upstream URL is invalid")
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return resp, nil
}

func (c *Client) classify(ctx context.Context, err error) error {
	if ctx.Err() == context.Canceled {
		return ctx.Err()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return custody.Wrap(custody.CodeUpstreamTimeout, err,
			fmt.Sprintf("provider %s did not answer in time", c.cfg.Name))
	}
	return custody.Wrap(custody.CodeUpstreamUnavailable, err,
		fmt.Sprintf("provider %s is unreachable", c.cfg.Name))
}

// CloseIdle closes idle connections (on shutdown and config reload).
func (c *Client) CloseIdle() { c.http.CloseIdleConnections() }
