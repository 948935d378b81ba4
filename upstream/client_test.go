package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/internal/refused"
)

// TestClientDo: what goes upstream (path under the base URL, body,
// bearer key, X-Request-Id, traceparent, Accept by stream), that
// redirects are not followed, and how transport failures are named.
func TestClientDo(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v1/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/v1/slow":
			time.Sleep(300 * time.Millisecond)
		default:
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	c := New(Config{Name: "p", BaseURL: srv.URL + "/v1/", APIKey: "sk-up", Timeout: 100 * time.Millisecond})
	ctx := context.Background()

	resp, err := c.Do(ctx, Call{Path: "/chat/completions", Body: []byte(`{"a":1}`), RequestID: "req-1", TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := got.Header
	if got.URL.Path != "/v1/chat/completions" || string(body) != `{"a":1}` || h.Get("Authorization") != "Bearer sk-up" ||
		h.Get("X-Request-Id") != "req-1" || h.Get("Traceparent") == "" || h.Get("Accept") != "text/event-stream" ||
		h.Get("Content-Type") != "application/json" {
		t.Errorf("upstream saw %s %s %q", got.URL.Path, body, h)
	}
	if got.Header.Get("Accept-Encoding") != "" {
		t.Errorf("compression asked for: %q (custody commits to the exact bytes)", got.Header.Get("Accept-Encoding"))
	}

	resp, err = c.Do(ctx, Call{Path: "/redirect"})
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Errorf("redirect followed: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	if _, err := c.Do(ctx, Call{Path: "/slow"}); custody.CodeOf(err) != custody.CodeUpstreamTimeout {
		t.Errorf("slow upstream: %v, want upstream_timeout", err)
	}

	dead := New(Config{Name: "gone", BaseURL: "http://" + refused.Addr(t) + "/v1", Timeout: time.Second})
	if _, err := dead.Do(ctx, Call{Path: "/chat/completions"}); custody.CodeOf(err) != custody.CodeUpstreamUnavailable {
		t.Errorf("refused connection: %v, want upstream_unavailable", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Do(cancelled, Call{Path: "/chat/completions"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
}
