package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/custody-gateway/custody/tokenize"
)

// testResponse is the union of the response shapes the tests read.
type testResponse struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text     string `json:"text"`
		Logprobs *struct {
			Content []struct {
				Token       string  `json:"token"`
				Logprob     float64 `json:"logprob"`
				Bytes       []int   `json:"bytes"`
				TopLogprobs []struct {
					Token   string  `json:"token"`
					Logprob float64 `json:"logprob"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

// text is the first choice's content (chat) or text (completions).
func (r testResponse) text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Message.Content + r.Choices[0].Text
}

func (r testResponse) finish() string {
	if len(r.Choices) == 0 || r.Choices[0].FinishReason == nil {
		return ""
	}
	return *r.Choices[0].FinishReason
}

type reply struct {
	status int
	header http.Header
	body   []byte
	resp   testResponse
	events []testResponse // streamed chunks, without [DONE]
	done   bool           // stream ended with [DONE]
}

func newTestServer(t testing.TB, cfg Config) *httptest.Server {
	t.Helper()
	if cfg.Counter == nil {
		cfg.Counter = o200k(t)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// post sends body (marshalled unless []byte) with headers (name, value
// pairs) and decodes the reply, as a stream when it is one.
func post(t testing.TB, ts *httptest.Server, path string, body any, headers ...string) reply {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := reply{status: res.StatusCode, header: res.Header, body: b}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if line == "[DONE]" {
				r.done = true
				continue
			}
			var ev testResponse
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("bad stream event %q: %v", line, err)
			}
			r.events = append(r.events, ev)
		}
		return r
	}
	if err := json.Unmarshal(b, &r.resp); err != nil {
		t.Fatalf("status %d, body %q: %v", res.StatusCode, b, err)
	}
	return r
}

// streamText concatenates the content of a chat or completion stream.
func (r reply) streamText() string {
	var b strings.Builder
	for _, ev := range r.events {
		for _, ch := range ev.Choices {
			if ch.Delta.Content != nil {
				b.WriteString(*ch.Delta.Content)
			}
			b.WriteString(ch.Text)
		}
	}
	return b.String()
}

func chatBody(model string, stream bool, msgs ...string) map[string]any {
	var ms []map[string]any
	for _, m := range msgs {
		ms = append(ms, map[string]any{"role": "user", "content": m})
	}
	b := map[string]any{"model": model, "messages": ms}
	if stream {
		b["stream"] = true
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	return b
}

var (
	o200kOnce    sync.Once
	o200kCounter tokenize.Counter
	o200kErr     error
)

// o200k loads the counter once for all tests (loading takes ~0.5 s).
func o200k(t testing.TB) tokenize.Counter {
	t.Helper()
	o200kOnce.Do(func() { o200kCounter, o200kErr = tokenize.Lookup("o200k_base") })
	if o200kErr != nil {
		t.Fatal(o200kErr)
	}
	return o200kCounter
}

// chatTokens is the honest prompt_tokens of user messages msgs: the
// built-in ChatML template's rendering, counted.
func chatTokens(t testing.TB, msgs ...string) int {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>user\n" + m + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return o200k(t).Count(b.String())
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
