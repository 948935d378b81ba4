package openai

import (
	"encoding/json"
	"testing"
)

func TestParseResponse(t *testing.T) {
	r, err := ParseResponse([]byte(`{"id":"c1","model":"m","created":5,"system_fingerprint":"fp","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}},{"index":1,"text":" there"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "c1" || r.Model != "m" || r.Created != 5 || r.SystemFingerprint != "fp" || r.Usage.PromptTokens != 3 || r.Text() != "hi there" || !r.HasChoices {
		t.Errorf("%+v", r)
	}
	r, _ = ParseResponse([]byte(`{"id":"c1","choices":[],"usage":{"prompt_tokens":3}}`))
	if !r.HasChoices || len(r.Choices) != 0 {
		t.Errorf("an empty choices list must be seen: %+v", r)
	}
	var reused Response
	reused.Decode([]byte(`{"id":"a","choices":[{"delta":{"content":"x"}}]}`))
	reused.Decode([]byte(`{"id":"b"}`))
	if reused.ID != "b" || reused.HasChoices || reused.Text() != "" {
		t.Errorf("decode must not keep the previous chunk: %+v", reused)
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"choices":5}`, `{"usage":{"prompt_tokens":"many"}}`, `{`} {
		if _, err := ParseResponse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// FuzzParseResponse: upstream bodies are untrusted; parsing never panics
// and agrees with encoding/json on what it accepts.
func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`{"id":"c1","model":"m","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"error":{"message":"x","code":"y"}}`))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.1]}]}`))
	addSeeds(f, "testdata/responses")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b)
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			t.Fatalf("accepted a body encoding/json rejects")
		}
		_ = r.Text()
	})
}
