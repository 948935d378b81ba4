package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRequest feeds untrusted bodies to every endpoint (and the fault
// header parser): the simulator must never panic, must answer a status it
// documents, and must answer JSON (or an SSE stream) in OpenAI's shape.
func FuzzRequest(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "requests", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for ep := range uint8(3) {
			f.Add(ep, b, "")
		}
	}
	f.Add(uint8(0), []byte(`{"model":"sim-1","messages":[{"role":"user","content":"x"}]}`), "stale-kv,truncate")
	s, err := New(Config{Counter: o200k(f), AllowFaultHeader: true, OwnershipTags: true, Capacity: 512, Pages: 256, PageTokens: 4})
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}
	f.Fuzz(func(t *testing.T, ep uint8, body []byte, fault string) {
		req := httptest.NewRequest(http.MethodPost, paths[int(ep)%len(paths)], bytes.NewReader(body))
		if fault != "" {
			req.Header.Set("X-Sim-Fault", fault)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404, 413, 500, 503:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Header().Get("X-Request-Id") == "" {
			t.Fatal("no X-Request-Id")
		}
		if rec.Header().Get("Content-Type") == "text/event-stream" {
			if !bytes.HasPrefix(rec.Body.Bytes(), []byte("data: ")) {
				t.Fatalf("stream body %q", rec.Body.Bytes())
			}
			return
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("status %d, non-JSON body %q", rec.Code, rec.Body.Bytes())
		}
		if _, isErr := v["error"]; rec.Code != 200 && !isErr {
			t.Fatalf("status %d without an error object", rec.Code)
		}
	})
}

// FuzzMessageText covers the content decoder alone, faster.
func FuzzMessageText(f *testing.F) {
	for _, s := range []string{`"hi"`, `null`, `[{"type":"text","text":"a"}]`, `[{"type":"image_url"}]`, `{}`, `[`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = messageText(raw)
		_, _ = stringOrStrings(raw, "prompt")
	})
}
