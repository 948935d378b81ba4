package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// stallingUpstream answers every stream with one good first event and
// then, for a while longer than any limit under test, only what the
// prompt's scenario says: keep-alive comments ("keepalive"), Anthropic
// ping events ("ping"), or a steady trickle of content ("busy"); then it
// closes without a terminal event.
func stallingUpstream(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := fmt.Sprint(n.Add(1))
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		messages := strings.HasSuffix(r.URL.Path, "/messages")
		if messages {
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_"+id+"\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"up-1\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":0}}}\n\n")
		} else {
			io.WriteString(w, `data: {"id":"c`+id+`","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n")
		}
		fl.Flush()
		for i := 0; i < 100; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			switch {
			case bytes.Contains(body, []byte("scenario:keepalive")):
				io.WriteString(w, ": keep-alive\n\n")
			case bytes.Contains(body, []byte("scenario:ping")):
				io.WriteString(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
			default:
				io.WriteString(w, `data: {"id":"c`+id+`","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[{"index":0,"delta":{"content":" more"}}]}`+"\n\n")
			}
			fl.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestStreamTimeLimits: keep-alive comments and ping events do not hold
// a stream open past the idle limit (a provider timeout of 1s), and a
// stream that keeps sending content is ended at
// limits.stream_max_duration; either way the client's stream ends with
// one upstream_timeout error event and no terminal event, and the
// rejection is recorded. The outcome is asserted, not the time: the
// upstream would otherwise go on for 10s and end truncated.
func TestStreamTimeLimits(t *testing.T) {
	up := stallingUpstream(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`checks: {contamination_warmup: -1}
canaries: {ignore_path_changes: true}
limits: {stream_idle: 1s, stream_max_duration: 2s}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: stall, kind: openai, base_url: %[1]q, timeout: 1s}
  - {name: stalla, kind: anthropic, base_url: %[1]q}
models:
  - {name: chat, context_window: 32768, routes: [{provider: stall, model: up-1}]}
  - {name: messages, context_window: 32768, routes: [{provider: stalla, model: up-1}]}
`, up)
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))
	for _, tc := range []struct{ path, model, scenario, want string }{
		{"/v1/chat/completions", "chat", "keepalive", "went silent"},
		{"/v1/messages", "messages", "ping", "went silent"},
		{"/v1/chat/completions", "chat", "busy", "limits.stream_max_duration"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			body := fmt.Sprintf(`{"model":%q,"stream":true,"max_tokens":8,"messages":[{"role":"user","content":"scenario:%s"}]}`, tc.model, tc.scenario)
			resp, out := post(t, s.URL+tc.path, "sk-acme", body, "anthropic-version", "2023-06-01")
			if resp.StatusCode != 200 || !strings.Contains(out, "upstream_timeout") || !strings.Contains(out, tc.want) {
				t.Fatalf("%d: %s", resp.StatusCode, out)
			}
			if strings.Contains(out, "[DONE]") || strings.Contains(out, "message_stop") || strings.Contains(out, "truncated") {
				t.Fatalf("the stream was completed or ran to the upstream's end: %s", out)
			}
			leafHas(t, s, "sk-acme", resp.Header.Get("Custody-Request-Id"), custody.CodeUpstreamTimeout)
		})
	}
}
