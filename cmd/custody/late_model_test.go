package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// llamaResponses serves the simulator's Responses streams in the shape
// llama.cpp's /v1/responses sends them: no sequence_number, no
// output_index, and the model named only in the terminal event's
// Response. A prompt holding "then:MODEL" names MODEL there instead;
// "then:nothing" names none.
func llamaResponses(t *testing.T) string {
	t.Helper()
	sim := toySim(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if rec.Code == 200 && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			then := ""
			if _, after, ok := strings.Cut(string(body), "then:"); ok {
				then, _, _ = strings.Cut(after, `"`)
			}
			var evs []string
			for _, e := range sseEvents(out) {
				d, m := eventData(e)
				if m == nil {
					evs = append(evs, e)
					continue
				}
				delete(m, "sequence_number")
				delete(m, "output_index")
				typ, _ := m["type"].(string)
				if resp, ok := m["response"].(map[string]any); ok {
					switch {
					case typ != "response.completed" && typ != "response.incomplete" || then == "nothing":
						delete(resp, "model")
					case then != "":
						resp["model"] = then
					}
				}
				b, _ := json.Marshal(m)
				evs = append(evs, strings.Replace(e, d, string(b), 1))
			}
			out = joinEvents(evs)
		}
		writeRecorded(w, rec, out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestResponsesStreamLateModel: a Responses stream that names its model
// only in its terminal event (llama.cpp's) is checked there, before the
// end is relayed: the route's model is verified, another model or none
// is model_mismatch and the client never reads the terminal event.
// Before, every llama.cpp Responses stream was refused at its first
// event ("names no model").
func TestResponsesStreamLateModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := `tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: llama, kind: openai, engine: llamacpp, responses: true, base_url: "` + llamaResponses(t) + `", timeout: 20s}
models:
  - {name: m, tokenizer: o200k_base, context_window: 32768, routes: [{provider: llama, model: sim-1}]}
`
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))
	for _, tc := range []struct {
		then, verdict, checks string
	}{
		{"", "verified", "model=ok"},
		{"sim-2", "rejected", "model=model_mismatch"},
		{"nothing", "rejected", "model=model_mismatch"},
	} {
		body := string(jsonOf(map[string]any{"model": "m", "max_output_tokens": 12, "stream": true,
			"input": "Tell me a short story about a lighthouse. then:" + tc.then}))
		status, read, checks, _ := exchangeAt(t, s.URL, "/v1/responses", "sk-acme", body)
		refused := strings.Contains(read, "model_mismatch")
		if !strings.Contains(checks, tc.checks) || refused != (tc.verdict == "rejected") ||
			!strings.Contains(read, ": custody-verdict "+tc.verdict+" ") {
			t.Errorf("then %q: %d checks %q, want %s with %s\n%s", tc.then, status, checks, tc.verdict, tc.checks, tail(read, 1500))
		}
		if ended := strings.Contains(read, "event: response.completed") || strings.Contains(read, "event: response.incomplete"); ended != (tc.verdict == "verified") {
			t.Errorf("then %q: the client read the terminal event: %v", tc.then, ended)
		}
	}
}
