package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The numbers llama.cpp's two template engines print differently, in a
// tool schema and in a tool call's arguments, and the line separators
// custody's Jinja engine once escaped (see template.EngineLlamaCppStream).
const (
	driftSchema = `{"type":"object","properties":{` +
		`"lat":{"type":"number","description":"latitude\u2028north of the equator\u2029in degrees","default":48.8606111},` +
		`"lon":{"type":"number","default":12345.67},"scale":{"type":"number","default":1234567.5},` +
		`"id":{"type":"integer","examples":[12345678901234567890]},"mask":{"type":"integer","examples":[18446744073709551615]}},"required":["lat"]}`
	driftArgs = `{\"lat\": 48.8606111, \"lon\": 12345.67, \"scale\": 1234567.5, \"id\": 12345678901234567890, \"mask\": 18446744073709551615, \"note\": \"a\u2028b\u2029c\"}`
)

// engineText is deterministic prose of about n words, with some
// non-ASCII, for long prompts.
func engineText(n int) string {
	words := strings.Fields("the river bends past old mills where millers once ground grain for the towns along its banks and ferries crossed at dawn carrying carts of wool cheese and timber to the markets — über Brücken, 川の流れ, río abajo")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+i/len(words))%len(words)])
	}
	return b.String()
}

// engineChatCases are chat requests whose every answer llama.cpp serves
// (max_tokens 1, tool_choice none: a random-weight model's tool-call
// gibberish is otherwise a 500 from its parser about 8% of the time).
func engineChatCases(model string) []struct{ name, body string } {
	m := fmt.Sprintf("%q", model)
	long := engineText(2500)
	tools := `[{"type":"function","function":{"name":"locate","description":"Find a place\u2028precisely.","parameters":` + driftSchema + `}},` +
		`{"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}}]`
	return []struct{ name, body string }{
		{"plain", `{"model":` + m + `,"max_tokens":1,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Name three rivers of Europe."}]}`},
		{"non-ASCII", `{"model":` + m + `,"max_tokens":1,"messages":[{"role":"user","content":"Ünïcödé — 日本語のテキスト, emoji 🦀🚀👩‍👩‍👧, العربية, עברית, Ελληνικά, a\u2028line\u2029separator"}]}`},
		{"tools", `{"model":` + m + `,"max_tokens":1,"tool_choice":"none","tools":` + tools + `,"messages":[{"role":"user","content":"Where is the Louvre?"}]}`},
		{"tool history", `{"model":` + m + `,"max_tokens":1,"tool_choice":"none","tools":` + tools + `,"messages":[` +
			`{"role":"user","content":"Where is the Louvre?"},` +
			`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"locate","arguments":"` + driftArgs + `"}},` +
			`{"id":"call_2","type":"function","function":{"name":"noop","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"call_1","content":"{\"found\": true, \"lat\": 48.8606111}"},` +
			`{"role":"tool","tool_call_id":"call_2","content":"ok"},` +
			`{"role":"user","content":"And the Orsay?"}]}`},
		{"developer and parts", `{"model":` + m + `,"max_tokens":1,"messages":[{"role":"developer","content":"Answer in French."},{"role":"user","content":[{"type":"text","text":"first part"},{"type":"text","text":"second part"}]}]}`},
		{"long", `{"model":` + m + `,"max_tokens":1,"messages":[{"role":"user","content":"Summarise:\n` + long + `"}]}`},
		// The same long prefix again, then extended by a turn: llama.cpp
		// serves it from its prompt cache (cached_tokens).
		{"cache reuse", `{"model":` + m + `,"max_tokens":1,"messages":[{"role":"user","content":"Summarise:\n` + long + `"},{"role":"assistant","content":"A river."},{"role":"user","content":"Longer, please."}]}`},
	}
}

// engineResult is one transaction through custody.
type engineResult struct {
	status        int
	verdict       string
	checks        string
	id            string
	body          string
	cachedTokens  int
	promptTokens  int
	usageReported bool
}

// sendEngine posts body to custody's path; a stream is read to its end
// and its verdict taken from the trailers.
func sendEngine(t *testing.T, s *server, path, body string, stream bool) engineResult {
	t.Helper()
	if stream {
		body = strings.Replace(body, `{`, `{"stream":true,`, 1)
	}
	req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-acme")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := engineResult{status: resp.StatusCode, id: resp.Header.Get("Custody-Request-Id"), body: string(b),
		verdict: resp.Header.Get("Custody-Verdict"), checks: resp.Header.Get("Custody-Checks")}
	if v := resp.Trailer.Get("Custody-Verdict"); v != "" {
		r.verdict, r.checks = v, resp.Trailer.Get("Custody-Checks")
	}
	// The usage the client got: chat's last chunk or body, and what
	// llama.cpp cached.
	sc := bufio.NewScanner(strings.NewReader(r.body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		var u struct {
			Usage *struct {
				PromptTokens  int `json:"prompt_tokens"`
				PromptDetails struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(line), &u) == nil && u.Usage != nil {
			r.usageReported = true
			r.promptTokens, r.cachedTokens = u.Usage.PromptTokens, u.Usage.PromptDetails.Cached
		}
	}
	return r
}

// engineFailed reports whether custody's answer is llama.cpp's own
// failure faithfully passed on, not custody's judgement: its tool-call
// parser rejecting a random-weight model's gibberish, as HTTP 500 before
// a stream or as an error event inside one (carried with its message).
func engineFailed(r engineResult) bool {
	return strings.Contains(r.body, "peg-native format") || strings.Contains(r.body, "answered HTTP 500")
}

// sendServed is sendEngine, again (up to 5 times) while llama.cpp
// itself fails the generation: sampling differs each time.
func (ty *tally) sendServed(t *testing.T, s *server, dialect, path, body string, stream bool) engineResult {
	t.Helper()
	var r engineResult
	for range 5 {
		if r = sendEngine(t, s, path, body, stream); !engineFailed(r) {
			break
		}
		ty.mu.Lock()
		ty.engineFailures[dialect]++
		ty.mu.Unlock()
	}
	return r
}

// judge records one transaction the engine served: a false alarm unless
// custody verified it, exact unless custody's count differs from the
// engine's usage.prompt_tokens (read from the receipt's leaf).
func (ty *tally) judge(t *testing.T, s *server, dialect, name string, r engineResult) {
	t.Helper()
	ty.mu.Lock()
	ty.served[dialect]++
	ty.mu.Unlock()
	if r.status != 200 || r.verdict != "verified" {
		ty.alarm(dialect, fmt.Sprintf("%s: HTTP %d, verdict %q, checks %q: %s", name, r.status, r.verdict, r.checks, tail(r.body, 1500)))
		return
	}
	local, reported := leafCounts(t, s, r.id)
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.counts[dialect]++
	if local == reported && reported > 0 {
		ty.exact[dialect]++
	} else {
		ty.alarms[dialect] = append(ty.alarms[dialect], fmt.Sprintf("%s: custody counted %d, llama.cpp %d", name, local, reported))
	}
}

func (ty *tally) report(t *testing.T) {
	t.Helper()
	for _, d := range []string{"chat", "messages", "responses"} {
		t.Logf("%s: %d transactions the engine served, %d false alarms; counts equal on %d of %d (llama.cpp itself failed %d generations, retried)", d, ty.served[d], len(ty.alarms[d]), ty.exact[d], ty.counts[d], ty.engineFailures[d])
		for _, a := range ty.alarms[d] {
			t.Errorf("%s: %s", d, a)
		}
	}
}

// TestEngineDialects drives custody in front of real llama-servers (Qwen3
// and Llama-3 tokenizers and templates, -c 8192, engine: llamacpp) on
// every dialect, plain and streamed: chat with tools, tool histories,
// numbers llama.cpp's template engine prints its own way, non-ASCII, long
// prompts and prompt-cache reuse; Messages and Responses, through their
// official Go SDKs and as plain HTTP. Every answer the engine serves is
// verified (no false alarm) with custody's count equal to llama.cpp's.
func TestEngineDialects(t *testing.T) {
	t.Parallel() // its own llama-servers, data dir and ports
	if testing.Short() {
		t.Skip("starts llama-server")
	}
	var servers []*llama
	for _, fam := range engineFamilies {
		servers = append(servers, startLlama(t, fam, 8192))
	}
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, engineConfig(t, 8192, servers...)))
	// serve's start-up probe tells which of llama.cpp's renderings the
	// servers run (Qwen3's template prints numbers through tojson;
	// Llama-3's prints none, so both renderings are alike for it).
	waitFor(t, time.Minute, func() bool {
		_, ready := get(t, s.URL+"/readyz", "")
		return strings.Contains(ready, "llama.cpp rendering llamacpp-stream") &&
			strings.Contains(ready, "both renderings alike")
	}, "/readyz naming the llama.cpp renderings")
	ty := newTally()
	for _, l := range servers {
		t.Run(l.model, func(t *testing.T) {
			for _, c := range engineChatCases(l.model) {
				for _, stream := range []bool{false, true} {
					name := fmt.Sprintf("%s %s stream=%v", l.model, c.name, stream)
					r := ty.sendServed(t, s, "chat", "/v1/chat/completions", c.body, stream)
					ty.judge(t, s, "chat", name, r)
					if !stream {
						// llama.cpp's own count of the same request, from
						// its template and tokenizer endpoints.
						if own := l.promptTokens(t, []byte(c.body)); r.usageReported && own != r.promptTokens {
							t.Errorf("%s: usage.prompt_tokens %d, llama.cpp's /apply-template + /tokenize %d", name, r.promptTokens, own)
						}
					}
					if c.name == "cache reuse" && !stream && r.cachedTokens == 0 {
						t.Errorf("%s: llama.cpp served nothing from its prompt cache (usage %d)", name, r.promptTokens)
					}
				}
			}
			engineMessages(t, s, l, ty)
			engineResponses(t, s, l, ty)
		})
	}
	ty.report(t)
}

// engineMessages: /v1/messages translated to chat, through the Anthropic
// Go SDK (create, stream, count_tokens) and plain HTTP (tools, several
// system blocks); count_tokens equals llama.cpp's own
// /v1/messages/count_tokens.
func engineMessages(t *testing.T, s *server, l *llama, ty *tally) {
	m := fmt.Sprintf("%q", l.model)
	// Joined with "" (llama.cpp) or "\n", these count differently.
	system := `[{"type":"text","text":"You are a guide"},{"type":"text","text":"answer briefly"},{"type":"text","text":"in French"}]`
	tools := `[{"name":"locate","description":"Find a place\u2028precisely.","input_schema":` + driftSchema + `}]`
	cases := []struct{ name, body string }{
		{"system blocks", `{"model":` + m + `,"max_tokens":1,"system":` + system + `,"messages":[{"role":"user","content":"Where is the Louvre?"}]}`},
		{"tools", `{"model":` + m + `,"max_tokens":1,"tool_choice":{"type":"none"},"tools":` + tools + `,"messages":[{"role":"user","content":"Where is the Louvre?"}]}`},
		{"tool history", `{"model":` + m + `,"max_tokens":1,"tool_choice":{"type":"none"},"tools":` + tools + `,"messages":[` +
			`{"role":"user","content":"Where is the Louvre?"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"locate","input":{"lat":48.8606111,"scale":1234567.5,"id":12345678901234567890,"note":"a\u2028b"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"found"},{"type":"text","text":"And the Orsay? 日本語"}]}]}`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s messages %s stream=%v", l.model, c.name, stream)
			ty.judge(t, s, "messages", name, ty.sendServed(t, s, "messages", "/v1/messages", c.body, stream))
		}
		// count_tokens: custody's answer and llama.cpp's own.
		var mine, theirs struct {
			InputTokens int `json:"input_tokens"`
		}
		resp, out := post(t, s.URL+"/v1/messages/count_tokens", "sk-acme", c.body)
		if resp.StatusCode != 200 || json.Unmarshal([]byte(out), &mine) != nil {
			t.Errorf("%s count_tokens: %d %s", c.name, resp.StatusCode, out)
			continue
		}
		if st := l.postJSON(t, "/v1/messages/count_tokens", []byte(c.body), &theirs); st != 200 {
			t.Errorf("%s: llama.cpp's count_tokens: HTTP %d", c.name, st)
			continue
		}
		if mine.InputTokens != theirs.InputTokens {
			t.Errorf("%s %s count_tokens: custody %d, llama.cpp %d", l.model, c.name, mine.InputTokens, theirs.InputTokens)
		}
	}

	// The official SDK, unchanged.
	ctx := context.Background()
	c := anthropic.NewClient(aoption.WithBaseURL(s.URL), aoption.WithAPIKey("sk-acme"), aoption.WithMaxRetries(0))
	ask := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the capital of Peru? ¿Lima?"))}
	sys := []anthropic.TextBlockParam{{Text: "You are a guide"}, {Text: "answer briefly"}}
	var (
		hr  *http.Response
		msg *anthropic.Message
		err error
	)
	for range 5 {
		msg, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(l.model), MaxTokens: 1, Messages: ask, System: sys}, aoption.WithResponseInto(&hr))
		if !ty.sdkEngineFailed("messages", err) {
			break
		}
	}
	if err != nil {
		ty.alarm("messages", fmt.Sprintf("%s SDK create: %v", l.model, err))
		return
	}
	ty.judge(t, s, "messages", l.model+" SDK create", engineResult{status: hr.StatusCode, verdict: hr.Header.Get("Custody-Verdict"), checks: hr.Header.Get("Custody-Checks"), id: hr.Header.Get("Custody-Request-Id")})
	count, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: anthropic.Model(l.model), Messages: ask,
		System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: sys}})
	if err != nil {
		t.Errorf("SDK count_tokens: %v", err)
	} else if in := msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens; count.InputTokens != in {
		// input_tokens leaves out what the prompt cache served.
		t.Errorf("%s SDK: count_tokens %d, the answer's input_tokens + cache_read_input_tokens %d", l.model, count.InputTokens, in)
	}
	for range 5 {
		stream := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: anthropic.Model(l.model), MaxTokens: 1, Messages: ask, System: sys}, aoption.WithResponseInto(&hr))
		var acc anthropic.Message
		for stream.Next() {
			if err := acc.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err = stream.Err(); !ty.sdkEngineFailed("messages", err) {
			break
		}
	}
	if err != nil {
		ty.alarm("messages", fmt.Sprintf("%s SDK stream: %v", l.model, err))
		return
	}
	ty.judge(t, s, "messages", l.model+" SDK stream", engineResult{status: hr.StatusCode, verdict: hr.Trailer.Get("Custody-Verdict"), checks: hr.Trailer.Get("Custody-Checks"), id: hr.Header.Get("Custody-Request-Id")})
}

// engineResponses: /v1/responses translated to chat, through the OpenAI
// Go SDK and plain HTTP, plain and streamed.
func engineResponses(t *testing.T, s *server, l *llama, ty *tally) {
	m := fmt.Sprintf("%q", l.model)
	tools := `[{"type":"function","name":"locate","description":"Find a place.","parameters":` + driftSchema + `}]`
	cases := []struct{ name, body string }{
		{"instructions", `{"model":` + m + `,"max_output_tokens":16,"instructions":"You are terse.","input":"Name a river. Ελληνικά."}`},
		{"tools", `{"model":` + m + `,"max_output_tokens":16,"tool_choice":"none","tools":` + tools + `,"input":"Where is the Louvre?"}`},
		{"function call history", `{"model":` + m + `,"max_output_tokens":16,"tool_choice":"none","tools":` + tools + `,"input":[` +
			`{"role":"user","content":"Where is the Louvre?"},` +
			`{"type":"function_call","call_id":"call_1","name":"locate","arguments":"` + driftArgs + `"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"found"}]}`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s responses %s stream=%v", l.model, c.name, stream)
			ty.judge(t, s, "responses", name, ty.sendServed(t, s, "responses", "/v1/responses", c.body, stream))
		}
	}
	ctx := context.Background()
	c := openai.NewClient(ooption.WithBaseURL(s.URL+"/v1"), ooption.WithAPIKey("sk-acme"), ooption.WithMaxRetries(0))
	var (
		hr  *http.Response
		err error
	)
	for range 5 {
		_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: l.model, MaxOutputTokens: openai.Int(16),
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the capital of Peru?")}}, ooption.WithResponseInto(&hr))
		if !ty.sdkEngineFailed("responses", err) {
			break
		}
	}
	if err != nil {
		ty.alarm("responses", fmt.Sprintf("%s SDK create: %v", l.model, err))
		return
	}
	ty.judge(t, s, "responses", l.model+" SDK create", engineResult{status: hr.StatusCode, verdict: hr.Header.Get("Custody-Verdict"), checks: hr.Header.Get("Custody-Checks"), id: hr.Header.Get("Custody-Request-Id")})
	for range 5 {
		st := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: l.model, MaxOutputTokens: openai.Int(16),
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the capital of Peru?")}}, ooption.WithResponseInto(&hr))
		for st.Next() {
		}
		if err = st.Err(); !ty.sdkEngineFailed("responses", err) {
			break
		}
	}
	if err != nil {
		ty.alarm("responses", fmt.Sprintf("%s SDK stream: %v", l.model, err))
		return
	}
	ty.judge(t, s, "responses", l.model+" SDK stream", engineResult{status: hr.StatusCode, verdict: hr.Trailer.Get("Custody-Verdict"), checks: hr.Trailer.Get("Custody-Checks"), id: hr.Header.Get("Custody-Request-Id")})
}

// sdkEngineFailed reports (and counts) an SDK call's error that is
// llama.cpp's own failure passed on by custody (see engineFailed).
func (ty *tally) sdkEngineFailed(dialect string, err error) bool {
	if err == nil {
		return false
	}
	raw := err.Error()
	var ae *anthropic.Error
	var oe *openai.Error
	switch {
	case errors.As(err, &ae):
		raw += ae.RawJSON()
	case errors.As(err, &oe):
		raw += oe.RawJSON()
	}
	if !engineFailed(engineResult{body: raw}) {
		return false
	}
	ty.mu.Lock()
	ty.engineFailures[dialect]++
	ty.mu.Unlock()
	return true
}
