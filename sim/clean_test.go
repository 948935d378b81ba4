package sim

import (
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

const (
	nonceA = "k9XbQ2mZ7w"
	nonceB = "Zp4t8QwX2r"
)

func TestChatUsageIsHonest(t *testing.T) {
	ts := newTestServer(t, Config{})
	c := o200k(t)
	cases := []struct {
		name string
		msgs []map[string]any
		want string // the prompt as the built-in ChatML template renders it
	}{
		{"one string", []map[string]any{{"role": "user", "content": "Hello there, how are you?"}},
			"<|im_start|>user\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\n"},
		{"system and user", []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name three rivers."}},
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName three rivers.<|im_end|>\n<|im_start|>assistant\n"},
		{"content parts", []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "part one "}, {"type": "text", "text": "part two"}}}},
			"<|im_start|>user\npart one \npart two<|im_end|>\n<|im_start|>assistant\n"},
		{"named", []map[string]any{{"role": "user", "name": "alice", "content": "hi"}},
			"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"},
		{"null content", []map[string]any{{"role": "assistant", "content": nil}, {"role": "user", "content": "go on"}},
			"<|im_start|>assistant\n<|im_end|>\n<|im_start|>user\ngo on<|im_end|>\n<|im_start|>assistant\n"},
		{"unicode", []map[string]any{{"role": "user", "content": "Grüße aus Köln — 東京 🚀"}},
			"<|im_start|>user\nGrüße aus Köln — 東京 🚀<|im_end|>\n<|im_start|>assistant\n"},
		{"tool round trip", []map[string]any{{"role": "user", "content": "weather?"},
			{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "c1", "type": "function", "function": map[string]any{"name": "w", "arguments": `{"city":"Paris"}`}}}},
			{"role": "tool", "tool_call_id": "c1", "content": "sunny"}},
			"<|im_start|>user\nweather?<|im_end|>\n<|im_start|>assistant\n<tool_call>{\"name\": \"w\", \"arguments\": {\"city\": \"Paris\"}}</tool_call><|im_end|>\n<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, ts, "/v1/chat/completions", map[string]any{"model": "sim-1", "messages": tc.msgs})
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			want := c.Count(tc.want)
			if got := r.resp.Usage.PromptTokens; got != want {
				t.Errorf("prompt_tokens = %d, want %d", got, want)
			}
			u := r.resp.Usage
			if u.CompletionTokens < 1 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage %+v inconsistent", u)
			}
		})
	}
}

func TestCompletionUsageIsHonest(t *testing.T) {
	ts := newTestServer(t, Config{})
	c := o200k(t)
	cases := []struct {
		name    string
		prompt  any
		prompts []string
	}{
		{"string", "Once upon a time", []string{"Once upon a time"}},
		{"array", []string{"first prompt here", "second one " + nonceA}, []string{"first prompt here", "second one " + nonceA}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, ts, "/v1/completions", map[string]any{"model": "sim-1", "prompt": tc.prompt})
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			want := 0
			for _, p := range tc.prompts {
				want += c.Count(p)
			}
			if r.resp.Usage.PromptTokens != want {
				t.Errorf("prompt_tokens = %d, want %d", r.resp.Usage.PromptTokens, want)
			}
			if len(r.resp.Choices) != len(tc.prompts) || r.resp.Object != "text_completion" {
				t.Fatalf("%d choices, object %q", len(r.resp.Choices), r.resp.Object)
			}
			for i, ch := range r.resp.Choices {
				if ch.Index != i || ch.Text == "" {
					t.Errorf("choice %d: index %d text %q", i, ch.Index, ch.Text)
				}
			}
		})
	}
}

func TestCleanAnswers(t *testing.T) {
	ts := newTestServer(t, Config{})
	ask := func(prompt string, extra map[string]any) testResponse {
		t.Helper()
		b := chatBody("sim-1", false, prompt)
		for k, v := range extra {
			b[k] = v
		}
		r := post(t, ts, "/v1/chat/completions", b)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		return r.resp
	}
	t.Run("nonce echoed", func(t *testing.T) {
		if got := ask("Please remember the code "+nonceA+" for later.", nil).text(); !strings.Contains(got, nonceA) {
			t.Errorf("answer %q lacks the nonce", got)
		}
	})
	t.Run("two prompts differ", func(t *testing.T) {
		a, b := ask("What is the capital of France?", nil).text(), ask("Write a haiku about autumn leaves.", nil).text()
		if a == b {
			t.Errorf("both answers are %q", a)
		}
	})
	t.Run("temperature 0 deterministic", func(t *testing.T) {
		x := map[string]any{"temperature": 0}
		a, b := ask("Explain paged attention briefly.", x), ask("Explain paged attention briefly.", x)
		if a.text() != b.text() || a.ID == b.ID {
			t.Errorf("answers %q / %q, ids %s / %s", a.text(), b.text(), a.ID, b.ID)
		}
	})
	t.Run("seeded sampling", func(t *testing.T) {
		p := "Tell me a short story about a lighthouse keeper and a storm."
		s1 := ask(p, map[string]any{"temperature": 1.5, "seed": 7}).text()
		if again := ask(p, map[string]any{"temperature": 1.5, "seed": 7}).text(); again != s1 {
			t.Errorf("same seed: %q then %q", s1, again)
		}
		differ := false
		for seed := 8; seed < 16 && !differ; seed++ {
			differ = ask(p, map[string]any{"temperature": 1.5, "seed": seed}).text() != s1
		}
		if !differ {
			t.Error("eight other seeds all sampled the same answer")
		}
	})
	t.Run("max_tokens", func(t *testing.T) {
		r := ask("Count slowly from one to a hundred please.", map[string]any{"max_tokens": 3})
		if r.finish() != "length" || r.Usage.CompletionTokens != 3 {
			t.Errorf("finish %q, completion_tokens %d", r.finish(), r.Usage.CompletionTokens)
		}
		if r := ask("Say something.", nil); r.finish() != "stop" {
			t.Errorf("default finish %q, want stop (%d tokens)", r.finish(), r.Usage.CompletionTokens)
		}
	})
	t.Run("logprobs", func(t *testing.T) {
		r := ask("Give me one word.", map[string]any{"logprobs": true, "top_logprobs": 3})
		lp := r.Choices[0].Logprobs
		if lp == nil || len(lp.Content) != r.Usage.CompletionTokens {
			t.Fatalf("logprobs %+v for %d tokens", lp, r.Usage.CompletionTokens)
		}
		var joined strings.Builder
		for _, tok := range lp.Content {
			joined.WriteString(tok.Token)
			if tok.Logprob > 0 || len(tok.TopLogprobs) != 3 || tok.TopLogprobs[0].Logprob < tok.Logprob-1e-9 {
				t.Errorf("token %+v", tok)
			}
			if string(bytesOf(tok.Bytes)) != tok.Token {
				t.Errorf("bytes of %q = %v", tok.Token, tok.Bytes)
			}
		}
		if joined.String() != r.text() {
			t.Errorf("logprob tokens %q != content %q", joined.String(), r.text())
		}
	})
}

func bytesOf(ints []int) []byte {
	b := make([]byte, len(ints))
	for i, v := range ints {
		b[i] = byte(v)
	}
	return b
}

func TestResponseEnvelope(t *testing.T) {
	ts := newTestServer(t, Config{Models: []string{"sim-1", "sim-1-0827"}})
	ids := map[string]bool{}
	var fp string
	for i, model := range []string{"sim-1", "sim-1", "sim-1-0827", "sim-1"} {
		r := post(t, ts, "/v1/chat/completions", chatBody(model, false, "hello number "+string(rune('a'+i))), "X-Request-Id", "rid-"+string(rune('a'+i)))
		if r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
		if got := r.header.Get("X-Request-Id"); got != "rid-"+string(rune('a'+i)) {
			t.Errorf("echoed X-Request-Id %q", got)
		}
		if !strings.HasPrefix(r.resp.ID, "chatcmpl-") || ids[r.resp.ID] {
			t.Errorf("id %q not fresh", r.resp.ID)
		}
		ids[r.resp.ID] = true
		if r.resp.Object != "chat.completion" || r.resp.Model != model || r.resp.Created == 0 {
			t.Errorf("object %q model %q created %d", r.resp.Object, r.resp.Model, r.resp.Created)
		}
		if model == "sim-1" {
			if fp != "" && r.resp.SystemFingerprint != fp {
				t.Errorf("fingerprint moved %q -> %q", fp, r.resp.SystemFingerprint)
			}
			fp = r.resp.SystemFingerprint
		} else if r.resp.SystemFingerprint == fp {
			t.Errorf("two models share fingerprint %q", fp)
		}
	}
	if r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, "x")); r.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id generated when none was sent")
	}
}

func TestStreaming(t *testing.T) {
	ts := newTestServer(t, Config{})
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		t.Run(path, func(t *testing.T) {
			p := "Describe the sea at night " + nonceB
			var plain, streamed map[string]any
			if path == "/v1/completions" {
				plain = map[string]any{"model": "sim-1", "prompt": p}
				streamed = map[string]any{"model": "sim-1", "prompt": p, "stream": true, "stream_options": map[string]any{"include_usage": true}}
			} else {
				plain, streamed = chatBody("sim-1", false, p), chatBody("sim-1", true, p)
			}
			a := post(t, ts, path, plain)
			s := post(t, ts, path, streamed)
			if s.status != http.StatusOK || !s.done || len(s.events) < 3 {
				t.Fatalf("status %d, done %v, %d events", s.status, s.done, len(s.events))
			}
			if got := s.streamText(); got != a.resp.text() {
				t.Errorf("stream %q != non-stream %q", got, a.resp.text())
			}
			last := s.events[len(s.events)-1]
			if len(last.Choices) != 0 || last.Usage == nil || *last.Usage != *a.resp.Usage {
				t.Errorf("usage chunk %+v, want empty choices and %+v", last, a.resp.Usage)
			}
			for _, ev := range s.events {
				if ev.ID != s.events[0].ID || ev.Created != s.events[0].Created || ev.Model != "sim-1" {
					t.Errorf("chunk head %s/%d/%s differs", ev.ID, ev.Created, ev.Model)
				}
				if ev.Usage != nil && len(ev.Choices) != 0 {
					t.Error("usage on a content chunk")
				}
			}
			if fin := s.events[len(s.events)-2]; fin.finish() != a.resp.finish() {
				t.Errorf("stream finish %q, want %q", fin.finish(), a.resp.finish())
			}
		})
	}
	t.Run("no usage unless asked", func(t *testing.T) {
		b := chatBody("sim-1", false, "hi")
		b["stream"] = true
		s := post(t, ts, "/v1/chat/completions", b)
		for _, ev := range s.events {
			if ev.Usage != nil {
				t.Error("usage chunk without include_usage")
			}
		}
	})
	t.Run("token delay", func(t *testing.T) {
		ts := newTestServer(t, Config{TokenDelay: 1})
		s := post(t, ts, "/v1/chat/completions", chatBody("sim-1", true, "hello"))
		if !s.done || s.streamText() == "" {
			t.Errorf("delayed stream: done %v text %q", s.done, s.streamText())
		}
	})
}

func TestErrors(t *testing.T) {
	ts := newTestServer(t, Config{Capacity: 50, AllowFaultHeader: true})
	long := strings.Repeat("word ", 80)
	cases := []struct {
		name    string
		path    string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"malformed", "/v1/chat/completions", []byte(`{"model":`), nil, 400, "invalid_request"},
		{"not an object", "/v1/chat/completions", []byte(`[1,2]`), nil, 400, "invalid_request"},
		{"bad utf8", "/v1/chat/completions", []byte("{\"model\":\"sim-1\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}"), nil, 400, "invalid_request"},
		{"no messages", "/v1/chat/completions", map[string]any{"model": "sim-1", "messages": []any{}}, nil, 400, "invalid_request"},
		{"image part", "/v1/chat/completions", map[string]any{"model": "sim-1", "messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_url"}}}}}, nil, 400, "invalid_request"},
		{"unknown model", "/v1/chat/completions", chatBody("gpt-9", false, "hi"), nil, 404, "model_not_found"},
		{"over capacity", "/v1/chat/completions", chatBody("sim-1", false, long), nil, 400, "context_length_exceeded"},
		{"over capacity completions", "/v1/completions", map[string]any{"model": "sim-1", "prompt": long}, nil, 400, "context_length_exceeded"},
		{"bad temperature", "/v1/chat/completions", map[string]any{"model": "sim-1", "messages": []any{map[string]any{"role": "user", "content": "x"}}, "temperature": 9}, nil, 400, "invalid_request"},
		{"unknown fault", "/v1/chat/completions", chatBody("sim-1", false, "hi"), []string{"X-Sim-Fault", "gremlins"}, 400, "invalid_request"},
		{"prompt wrong type", "/v1/completions", map[string]any{"model": "sim-1", "prompt": 42}, nil, 400, "invalid_request"},
		{"no input", "/v1/embeddings", map[string]any{"model": "sim-1"}, nil, 400, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, ts, tc.path, tc.body, tc.headers...)
			if r.status != tc.status || r.resp.Error == nil || r.resp.Error.Code != tc.code || r.resp.Error.Type == "" {
				t.Errorf("status %d body %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
		})
	}
	t.Run("body limit", func(t *testing.T) {
		ts := newTestServer(t, Config{MaxBodyBytes: 100})
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, long))
		if r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", r.status)
		}
	})
}

func TestModelsEndpoint(t *testing.T) {
	ts := newTestServer(t, Config{Models: []string{"a", "b"}})
	res, err := ts.Client().Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list modelList
	if err := jsonDecode(res, &list); err != nil {
		t.Fatal(err)
	}
	if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b" {
		t.Errorf("models %+v", list)
	}
}

func TestEmbeddings(t *testing.T) {
	ts := newTestServer(t, Config{})
	get := func(input any, format string) embeddingList {
		t.Helper()
		r := post(t, ts, "/v1/embeddings", map[string]any{"model": "sim-1", "input": input, "encoding_format": format})
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		var l embeddingList
		if err := jsonUnmarshal(r.body, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	a := get([]string{"alpha", "beta"}, "float")
	if len(a.Data) != 2 || a.Usage.PromptTokens != o200k(t).Count("alpha")+o200k(t).Count("beta") {
		t.Fatalf("embeddings %+v", a)
	}
	v0, v1 := floats(a.Data[0].Embedding), floats(a.Data[1].Embedding)
	var norm float64
	same := true
	for i := range v0 {
		norm += v0[i] * v0[i]
		same = same && v0[i] == v1[i]
	}
	if math.Abs(norm-1) > 1e-5 || same || len(v0) != defaultEmbeddingDims {
		t.Errorf("norm %v, same %v, dims %d", norm, same, len(v0))
	}
	again := floats(get("alpha", "float").Data[0].Embedding)
	for i := range v0 {
		if again[i] != v0[i] {
			t.Fatal("embedding not deterministic")
		}
	}
	b64 := get("alpha", "base64").Data[0].Embedding.(string)
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 4*defaultEmbeddingDims {
		t.Errorf("base64 embedding: %d bytes, %v", len(raw), err)
	}
}

func floats(v any) []float64 {
	xs, _ := v.([]any)
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i], _ = x.(float64)
	}
	return out
}

// TestVariant: a close variant keeps the name and fingerprint it is given
// but not its answers: logprobs differ on every answer, text on some.
func TestVariant(t *testing.T) {
	honest, variant := newTestServer(t, Config{}), newTestServer(t, Config{Variant: 1})
	textDiffers, lpDiffers, n := 0, 0, 20
	for i := range n {
		b := chatBody("sim-1", false, "question number "+string(rune('A'+i))+" about the weather in spring")
		b["logprobs"] = true
		h, v := post(t, honest, "/v1/chat/completions", b).resp, post(t, variant, "/v1/chat/completions", b).resp
		if h.Model != v.Model {
			t.Fatalf("variant reports %q", v.Model)
		}
		if h.text() != v.text() {
			textDiffers++
		}
		if h.Choices[0].Logprobs.Content[0].Logprob != v.Choices[0].Logprobs.Content[0].Logprob {
			lpDiffers++
		}
	}
	t.Logf("variant: text differs in %d/%d answers, first logprob in %d/%d", textDiffers, n, lpDiffers, n)
	if textDiffers == 0 || textDiffers == n || lpDiffers < n/2 {
		t.Errorf("variant text differs in %d/%d, logprobs in %d/%d: want some but not all texts, most logprobs", textDiffers, n, lpDiffers, n)
	}
}

// TestCleanTrafficLooksClean runs a mixed sequence of clean requests and
// checks every property a custody check keys on, so that none of the
// checks could flag clean traffic: fresh ids and bodies, honest usage, the
// requested model with a stable fingerprint, the echoed request id,
// consistent streams, a success shape, and no other request's nonce.
func TestCleanTrafficLooksClean(t *testing.T) {
	ts := newTestServer(t, Config{OwnershipTags: true, Pages: 64, PageTokens: 4})
	ids, bodies := map[string]bool{}, map[string]bool{}
	fps := map[string]string{}
	for i := range 30 {
		nonce := fmt.Sprintf("q%02dx%04d", i, i)
		p := fmt.Sprintf("clean request %d with secret %s and some words", i, nonce)
		rid := fmt.Sprintf("rid-%d", i)
		stream := i%3 == 1
		path, body := "/v1/chat/completions", chatBody("sim-1", stream, p)
		want := chatTokens(t, p)
		if i%3 == 2 {
			path, body, want = "/v1/completions", map[string]any{"model": "sim-1", "prompt": p}, o200k(t).Count(p)
		}
		r := post(t, ts, path, body, "X-Request-Id", rid)
		if r.status != 200 || r.header.Get("X-Request-Id") != rid {
			t.Fatalf("request %d: status %d, echoed %q", i, r.status, r.header.Get("X-Request-Id"))
		}
		if bodies[string(r.body)] {
			t.Errorf("request %d: body delivered twice", i)
		}
		bodies[string(r.body)] = true
		resp, text := r.resp, r.resp.text()
		if stream {
			for _, ev := range r.events {
				if ev.ID != r.events[0].ID || ev.Created != r.events[0].Created || ev.Model != r.events[0].Model || ev.SystemFingerprint != r.events[0].SystemFingerprint {
					t.Errorf("request %d: inconsistent stream", i)
				}
			}
			resp = r.events[len(r.events)-1]
			resp.Choices = r.events[len(r.events)-2].Choices
			text = r.streamText()
		}
		if ids[resp.ID] {
			t.Errorf("request %d: id %s reused", i, resp.ID)
		}
		ids[resp.ID] = true
		if resp.Model != "sim-1" {
			t.Errorf("request %d: model %q", i, resp.Model)
		}
		if old, ok := fps[path]; ok && old != resp.SystemFingerprint {
			t.Errorf("request %d: fingerprint moved", i)
		}
		fps[path] = resp.SystemFingerprint
		if resp.Usage == nil || resp.Usage.PromptTokens != want || resp.Usage.CompletionTokens == 0 {
			t.Errorf("request %d: usage %+v, want prompt_tokens %d", i, resp.Usage, want)
		}
		if f := resp.finish(); resp.Error != nil || (f != "stop" && f != "length") {
			t.Errorf("request %d: error %v finish %q", i, resp.Error, f)
		}
		for _, n := range testNonce.FindAllString(text, -1) {
			if n != nonce {
				t.Errorf("request %d: foreign nonce %s", i, n)
			}
		}
		if !strings.Contains(text, nonce) {
			t.Errorf("request %d: own nonce missing", i)
		}
	}
}
