package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/fixtures"
)

// fixtureUpstream answers chat requests with the prompt-token count a
// real engine reported for the same request in the chat-template corpus,
// so custody meets real engines' accounting, not its own simulator's.
// The upstream model names the family and a behaviour (FAMILY:honest,
// or one of the faults the prompt-token band exists for).
type fixtureUpstream struct {
	counts map[string]int // family NUL messages JSON (canonical) -> engine count
	seq    atomic.Int64
	start  int64
}

// messagesKey is a request's messages and tools, decoded and re-encoded
// so that both sides agree whatever the escaping: custody forwards the
// client's bytes with only model and stream_options changed.
func messagesKey(body []byte) string {
	var req struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
		Kwargs   json.RawMessage `json:"chat_template_kwargs"`
		Effort   json.RawMessage `json:"reasoning_effort"`
	}
	json.Unmarshal(body, &req)
	var b bytes.Buffer
	for _, r := range []json.RawMessage{req.Messages, req.Tools, req.Kwargs, req.Effort} {
		var v any
		json.Unmarshal(r, &v)
		canon, _ := json.Marshal(v)
		b.Write(canon)
		b.WriteByte(0)
	}
	return b.String()
}

func (u *fixtureUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(body.Bytes(), &req)
	fam, behaviour, _ := strings.Cut(req.Model, ":")
	honest, ok := u.counts[fam+"\x00"+messagesKey(body.Bytes())]
	if !ok {
		http.Error(w, `{"error":{"message":"unknown request","type":"invalid_request_error"}}`, 400)
		return
	}
	reported := honest
	switch behaviour {
	case "placeholder":
		reported = 1
	case "truncated":
		reported = honest * 6 / 10
	case "other-prompt":
		reported = honest + 400
	}
	n := u.seq.Add(1)
	id := fmt.Sprintf("chatcmpl-fx-%d", n)
	w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":3,"total_tokens":%d}`, reported, reported+3)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"object":"chat.completion","created":%d,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":%s}`,
			id, u.start, req.Model, n, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	// llama.cpp stamps every chunk with the second it was made: here
	// each chunk is a second later than the one before.
	chunk := func(i int, choices, extra string) {
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%q,\"choices\":%s%s}\n\n", id, u.start+int64(i), req.Model, choices, extra)
		fl.Flush()
	}
	chunk(0, `[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`, "")
	chunk(1, `[{"index":0,"delta":{"content":"answer "},"finish_reason":null}]`, "")
	chunk(2, fmt.Sprintf(`[{"index":0,"delta":{"content":"%d"},"finish_reason":null}]`, n), "")
	chunk(3, `[{"index":0,"delta":{},"finish_reason":"stop"}]`, "")
	chunk(4, `[]`, `,"usage":`+usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestRealEngineFidelity runs the real binary in front of an upstream
// that answers with llama.cpp's own prompt-token counts for every
// request of the chat-template corpus, plain and streamed, through
// engine llamacpp and engine auto: no false alarm. The same upstream
// reporting a one-token placeholder, 60 % of the prompt or the prompt +
// 400 is refused every time; a request the template refuses is refused
// by custody and never forwarded. Without CUSTODY_SOAK=1 (see
// soakInFull) it sends every fifth request of the corpus and every
// request the template refuses.
func TestRealEngineFidelity(t *testing.T) {
	t.Parallel() // its own data dir and ports
	up := &fixtureUpstream{counts: map[string]int{}, start: time.Now().Unix()}
	type job struct {
		model string
		body  []byte
		want  string // "" served, else the code
	}
	var jobs []job
	var b strings.Builder
	b.WriteString("tenants:\n  - {id: acme, api_keys: [sk-acme]}\n")
	// The corpus holds real engines' prompt counts, not their answers: the
	// fixture upstream answers every request with a placeholder text,
	// which breaks a request's response_format or tool_choice. The
	// contract check is right to say so (TestContractMatrix holds it);
	// here it flags instead of refusing, so that what this test holds,
	// the prompt accounting, is judged on every request.
	b.WriteString("policies:\n  - {name: default, on_contract: flag}\n")
	var models strings.Builder
	refusedByEngine, ambiguous := 0, 0
	for _, fam := range fixtures.Families {
		tok := filepath.Join(fixtures.Tokenizer(t, fam), "tokenizer.json")
		for _, behaviour := range []string{"honest", "placeholder", "truncated", "other-prompt"} {
			for _, engine := range []string{"llamacpp", "auto"} {
				name := fam + "-" + engine + "-" + behaviour
				fmt.Fprintf(&models, "  - {name: %q, context_window: 131072, tokenizer: %q, routes: [{provider: %q, model: %q}]}\n",
					name, "file:"+tok, engine, fam+":"+behaviour)
			}
		}
		for i, l := range fixtures.ChatTemplates(t, fam) {
			if l.EngineTokens == nil {
				if l.EngineHTTPStatus == 400 && !strings.Contains(string(l.Request), "image_url") {
					// The template refused it (raise_exception): so must
					// custody, before forwarding.
					refusedByEngine++
					jobs = append(jobs, job{fam + "-llamacpp-honest", withStream(l.Request, false), "invalid_request"})
				}
				continue
			}
			if !soakInFull() && i%5 != 0 {
				continue
			}
			up.counts[fam+"\x00"+messagesKey(l.Request)] = *l.EngineTokens
			for _, engine := range []string{"llamacpp", "auto"} {
				for _, stream := range []bool{false, true} {
					jobs = append(jobs, job{fam + "-" + engine + "-honest", withStream(l.Request, stream), ""})
				}
				if i%4 == 0 {
					for _, bad := range []string{"placeholder", "truncated", "other-prompt"} {
						if engine == "auto" && bad == "truncated" && l.HFPyVLLMTokens != nil && *l.EngineTokens*6/10 >= *l.HFPyVLLMTokens {
							// Under auto, 60 % of llama.cpp's count is as
							// low as vLLM's honest rendering (a developer
							// turn one drops): not a fault auto can see.
							ambiguous++
							continue
						}
						jobs = append(jobs, job{fam + "-" + engine + "-" + bad, withStream(l.Request, i%8 == 0), "prompt_token_mismatch"})
					}
				}
			}
		}
	}
	ts := httptest.NewServer(up)
	defer ts.Close()
	b.WriteString("providers:\n")
	for _, engine := range []string{"llamacpp", "auto"} {
		fmt.Fprintf(&b, "  - {name: %s, kind: openai, engine: %s, base_url: %q, request_id_echo: x-request-id}\n", engine, engine, ts.URL+"/v1")
	}
	b.WriteString("models:\n" + models.String())
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, b.String()))

	var (
		mu       sync.Mutex
		failures = map[string]int{}
		served   atomic.Int64
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				body := withModel(j.body, j.model)
				resp, out := post(t, s.URL+"/v1/chat/completions", "sk-acme", string(body))
				got := outcome(resp.StatusCode, out)
				if got == "" && resp.StatusCode != 200 {
					got = fmt.Sprintf("HTTP %d", resp.StatusCode)
				}
				if got != j.want {
					mu.Lock()
					k := j.model + " " + got
					if failures[k] < 2 {
						t.Errorf("%s: got %q, want %q: %.300s", j.model, got, j.want, out)
					}
					failures[k]++
					mu.Unlock()
				}
				served.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests through the binary (%d the template refuses), %d upstream calls, %d truncations auto cannot tell from another engine; failures by model and outcome: %v",
		served.Load(), refusedByEngine, up.seq.Load(), ambiguous, failures)
}

// withStream sets a request's stream flag.
func withStream(body []byte, stream bool) []byte {
	var m map[string]json.RawMessage
	json.Unmarshal(body, &m)
	if stream {
		m["stream"] = json.RawMessage("true")
	} else {
		delete(m, "stream")
		delete(m, "stream_options")
	}
	out, _ := json.Marshal(m)
	return out
}

// withModel sets a request's model.
func withModel(body []byte, model string) []byte {
	var m map[string]json.RawMessage
	json.Unmarshal(body, &m)
	m["model"], _ = json.Marshal(model)
	out, _ := json.Marshal(m)
	return out
}
