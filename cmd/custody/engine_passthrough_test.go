package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestEnginePassThrough runs custody in front of real llama-servers
// (Qwen3 and Llama-3 tiny models) on the two wires passed through:
// Messages to a kind: anthropic provider (llama.cpp serves /v1/messages
// itself) and Responses to a provider with responses: true (it serves
// /v1/responses too). The requests ask what the contract holds an answer
// to: tools with every tool_choice, small max_tokens, stop_sequences,
// plain and streamed. For every answer the engine served, the contract's
// outcome is counted by code; a rejected outcome is a false alarm (the
// engine is honest: gibberish, but gibberish its own parser produced).
// llama.cpp's own failures (its tool-call parser refusing the model's
// gibberish) are retried and counted apart, as TestEngineDialects does.
func TestEnginePassThrough(t *testing.T) {
	t.Parallel() // its own llama-servers, data dir and ports
	if testing.Short() {
		t.Skip("starts llama-server")
	}
	var servers []*llama
	for _, fam := range engineFamilies {
		servers = append(servers, startLlama(t, fam, 4096))
	}
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, enginePassThroughConfig(t, servers...)))
	pt := &passTally{outcomes: map[string]map[string]int{}, sent: map[string]int{}, served: map[string]int{},
		verified: map[string]int{}, engineFailures: map[string]int{},
		finishes: map[string]map[string]int{}, calls: map[string]int{}}
	for _, l := range servers {
		for _, c := range enginePassThroughCases(l.model) {
			for _, stream := range []bool{false, true} {
				for rep := range c.reps {
					name := fmt.Sprintf("%s %s %s stream=%v #%d", l.model, c.wire, c.name, stream, rep)
					pt.send(t, s, c, name, stream)
				}
			}
		}
	}
	pt.report(t)
}

// enginePassThroughConfig routes a-FAMILY to a kind: anthropic provider
// and r-FAMILY to a responses: true one, both on the family's server.
func enginePassThroughConfig(t *testing.T, servers ...*llama) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tenants:\n  - {id: acme, api_keys: [sk-acme]}\nproviders:\n")
	// The breakers stay shut, as in engineConfig: five of llama.cpp's
	// own failures in a row (a tool case's retries) would open one and
	// refuse every later request upstream_unavailable.
	for i, l := range servers {
		fmt.Fprintf(&b, "  - {name: anth%d, kind: anthropic, engine: llamacpp, base_url: %q, timeout: 120s, breaker_threshold: 1000000}\n", i, l.URL+"/v1")
		fmt.Fprintf(&b, "  - {name: resp%d, kind: openai, engine: llamacpp, responses: true, base_url: %q, timeout: 120s, breaker_threshold: 1000000}\n", i, l.URL+"/v1")
	}
	b.WriteString("models:\n")
	for i, l := range servers {
		tok := "file:" + engineTokenizer(t, l.model)
		fmt.Fprintf(&b, "  - {name: a-%s, context_window: %d, tokenizer: %q, routes: [{provider: anth%d, model: %s}]}\n", l.model, l.NCtx, tok, i, l.model)
		fmt.Fprintf(&b, "  - {name: r-%s, context_window: %d, tokenizer: %q, routes: [{provider: resp%d, model: %s}]}\n", l.model, l.NCtx, tok, i, l.model)
	}
	return b.String()
}

type passCase struct {
	wire, name, path, body string
	reps                   int
	// ignored is the contract code an answer to this case may rightly
	// be refused with, because llama.cpp ignores what the request asks:
	// its server reads a tool_choice object through a string-typed
	// json_value, so a Responses named choice becomes "auto", and its
	// Messages converter turns {"type":"tool"} into "required" (any tool);
	// its Responses converter does not carry text.format to the
	// response_format its chat parameters read, so a json_object answer
	// that ends before max_output_tokens is whatever the model said; and
	// its stop-string search looks only at the last token and the stop's
	// length (server-context.cpp, find_stopping_strings), skipping tokens
	// that end inside a UTF-8 character, so a stop in a token before one
	// that completes a character is missed and the text holds it.
	ignored string
}

// enginePassThroughCases are the requests, per wire. Tool cases are sent
// several times: each answer is a new sample of the model's gibberish.
func enginePassThroughCases(model string) []passCase {
	am, rm := fmt.Sprintf("%q", "a-"+model), fmt.Sprintf("%q", "r-"+model)
	schema := `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`
	aTools := `[{"name":"weather","description":"Forecast for a city.","input_schema":` + schema + `},` +
		`{"name":"noop","input_schema":{"type":"object","properties":{}}}]`
	rTools := `[{"type":"function","name":"weather","description":"Forecast for a city.","parameters":` + schema + `},` +
		`{"type":"function","name":"noop","parameters":{"type":"object","properties":{}}}]`
	ask := `"messages":[{"role":"user","content":"What is the weather in Lima for three days?"}]`
	var cs []passCase
	msg := func(name string, reps int, members string) {
		cs = append(cs, passCase{wire: "messages", name: name, path: "/v1/messages", body: `{"model":` + am + `,` + members + `,` + ask + `}`, reps: reps})
	}
	msg("plain", 2, `"max_tokens":24,"system":"You are terse."`)
	msg("max_tokens 1", 2, `"max_tokens":1`)
	msg("max_tokens 3", 2, `"max_tokens":3`)
	msg("stop_sequences", 3, `"max_tokens":32,"stop_sequences":["e","a"," "]`)
	cs[len(cs)-1].ignored = "contract_stop_ignored"
	msg("tools auto", 4, `"max_tokens":48,"tools":`+aTools)
	msg("tools auto small", 2, `"max_tokens":4,"tools":`+aTools+`,"tool_choice":{"type":"auto"}`)
	msg("tools any", 4, `"max_tokens":48,"tools":`+aTools+`,"tool_choice":{"type":"any"}`)
	msg("tools any one", 3, `"max_tokens":48,"tools":`+aTools+`,"tool_choice":{"type":"any","disable_parallel_tool_use":true}`)
	msg("tools named", 4, `"max_tokens":48,"tools":`+aTools+`,"tool_choice":{"type":"tool","name":"weather"}`)
	cs[len(cs)-1].ignored = "contract_tool_choice_ignored"
	msg("tools none", 3, `"max_tokens":24,"tools":`+aTools+`,"tool_choice":{"type":"none"}`)
	msg("tools stop_sequences", 2, `"max_tokens":32,"stop_sequences":["e"],"tools":`+aTools)
	cs[len(cs)-1].ignored = "contract_stop_ignored"
	in := `"input":"What is the weather in Lima for three days?"`
	resp := func(name string, reps int, members string) {
		cs = append(cs, passCase{wire: "responses", name: name, path: "/v1/responses", body: `{"model":` + rm + `,` + members + `,` + in + `}`, reps: reps})
	}
	resp("plain", 2, `"max_output_tokens":24,"instructions":"You are terse."`)
	resp("max_output_tokens 1", 2, `"max_output_tokens":1`)
	resp("max_output_tokens 3", 2, `"max_output_tokens":3`)
	resp("tools auto", 4, `"max_output_tokens":48,"tools":`+rTools)
	resp("tools auto small", 2, `"max_output_tokens":4,"tools":`+rTools+`,"tool_choice":"auto"`)
	resp("tools required", 4, `"max_output_tokens":48,"tools":`+rTools+`,"tool_choice":"required"`)
	resp("tools required one", 3, `"max_output_tokens":48,"tools":`+rTools+`,"tool_choice":"required","parallel_tool_calls":false`)
	resp("tools named", 4, `"max_output_tokens":48,"tools":`+rTools+`,"tool_choice":{"type":"function","name":"weather"}`)
	cs[len(cs)-1].ignored = "contract_tool_choice_ignored"
	resp("tools none", 3, `"max_output_tokens":24,"tools":`+rTools+`,"tool_choice":"none"`)
	resp("json_object", 2, `"max_output_tokens":48,"text":{"format":{"type":"json_object"}}`)
	cs[len(cs)-1].ignored = "contract_format_invalid"
	return cs
}

// passTally counts, per wire, the requests sent, the answers the engine
// served, how many custody verified, and the contract's outcomes by
// code ("ok", or "CODE flagged" / "CODE rejected").
type passTally struct {
	mu             sync.Mutex
	sent, served   map[string]int
	verified       map[string]int
	engineFailures map[string]int
	outcomes       map[string]map[string]int
	finishes       map[string]map[string]int // stop_reason or status -> answers
	calls          map[string]int            // answers with a call
	alarms         []string                  // rejected outcomes on served answers
	caught         map[string]int            // rightly refused: "wire case: code" -> answers
	// others are answers no contract outcome judged, or not verified
	// for another check: "wire stream=B: checks" -> count.
	others map[string]int
}

// llamaErrorEvent: llama.cpp's tool-call parser failed inside a stream,
// which it reports in OpenAI's error shape ({"code":500,"message":...,
// "type":"server_error"}): on Messages as "event: error", on Responses as
// data nested in "error" with no type. custody reads either as the
// engine's error (upstream_error_as_success, its words carried). Its
// failure, not an answer: retried like its 500s.
func llamaErrorEvent(wire string, r engineResult) bool {
	return strings.Contains(r.body, "the upstream sent an error event inside a 200 stream")
}

// llamaNoStart: llama.cpp's streams open with their first partial
// result: message_start on Messages (server-task.cpp, to_json_anthropic:
// n_decoded == 1), response.created on Responses (update: the partial
// sets oai_resp_created; the final result never sends it). process_token
// sends no partial result for a token that ends inside a UTF-8
// character, so an answer whose first token is such a byte has no
// opening event: with max_tokens 1, its Messages stream is message_delta,
// message_stop (reproduced straight from llama-server). That stream names
// no message and no model, and the SDKs refuse it too (openai's
// ResponseStream throws on any event before response.created); custody
// refuses it as stream_inconsistent. Its failure, not an answer: retried
// like its 500s.
func llamaNoStart(r engineResult) bool {
	return strings.Contains(r.body, "before message_start") ||
		strings.Contains(r.body, "does not begin with response.created")
}

// llamaFailed: any of llama.cpp's own failures above.
func llamaFailed(wire string, r engineResult) bool {
	return engineFailed(r) || llamaErrorEvent(wire, r) || llamaNoStart(r)
}

// answerFinish is a Message's stop_reason or a Response's status (the
// last in a stream); answerCall a tool_use block or function_call item.
var (
	answerFinish = regexp.MustCompile(`"(?:stop_reason|status)":"([a-z_]+)"`)
	answerCall   = regexp.MustCompile(`"type":"(?:tool_use|function_call)"`)
)

var contractOutcome = regexp.MustCompile(`(?:^|[ ,;])contract=([a-z_]+)`)

func (pt *passTally) send(t *testing.T, s *server, c passCase, name string, stream bool) {
	t.Helper()
	wire, path, body := c.wire, c.path, c.body
	var r engineResult
	for range 5 {
		pt.mu.Lock()
		pt.sent[wire]++
		pt.mu.Unlock()
		r = sendEngine(t, s, path, body, stream)
		if !llamaFailed(wire, r) {
			break
		}
		pt.mu.Lock()
		pt.engineFailures[wire]++
		pt.mu.Unlock()
	}
	verdict, checks := verdictOf(r.verdict, r.checks, r.body)
	m := contractOutcome.FindStringSubmatch(checks)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if m == nil {
		// No contract outcome: the engine's answer never reached the
		// check (its own failure, retried 5 times) or another refused.
		pt.other(wire, stream, r.status, verdict, checks, r.body, llamaFailed(wire, r))
		return
	}
	pt.served[wire]++
	if pt.outcomes[wire] == nil {
		pt.outcomes[wire] = map[string]int{}
	}
	code := m[1]
	switch {
	case code == "ok":
	case r.status == 200 && verdict != "rejected":
		code += " flagged"
	case code == c.ignored:
		if pt.caught == nil {
			pt.caught = map[string]int{}
		}
		pt.caught[wire+" "+c.name+": "+code]++
		code += " rejected (llama.cpp ignored the request)"
	default:
		code += " rejected"
		pt.alarms = append(pt.alarms, fmt.Sprintf("%s: HTTP %d verdict %q checks %q: %s", name, r.status, verdict, checks, tail(r.body, 1500)))
	}
	pt.outcomes[wire][code]++
	if pt.finishes[wire] == nil {
		pt.finishes[wire] = map[string]int{}
	}
	if m := answerFinish.FindAllStringSubmatch(r.body, -1); m != nil {
		pt.finishes[wire][m[len(m)-1][1]]++
	}
	if answerCall.MatchString(r.body) {
		pt.calls[wire]++
	}
	if verdict == "verified" && r.status == 200 {
		pt.verified[wire]++
	} else if !strings.Contains(code, "rejected") {
		pt.other(wire, stream, r.status, verdict, checks, r.body, false)
	}
}

var errorMessage = regexp.MustCompile(`"message":"([^"]*)"`)

// other counts an answer another check refused (or that never reached
// the contract), by its checks and the error's message; engine is set
// when the refusal is llama.cpp's own failure, five times over.
func (pt *passTally) other(wire string, stream bool, status int, verdict, checks, body string, engine bool) {
	msg := ""
	if m := errorMessage.FindAllStringSubmatch(body, -1); m != nil {
		msg = m[len(m)-1][1]
	}
	if pt.others == nil {
		pt.others = map[string]int{}
	}
	o := fmt.Sprintf("%s stream=%v: HTTP %d verdict %q checks %q %q", wire, stream, status, verdict, checks, msg)
	pt.others[o]++
	// An engine's own failure that five tries did not get past is its
	// failure (a tool case's gibberish can fail its parser that often);
	// any other refusal of an honest engine's answer, by any check, is a
	// false alarm (before, every llama.cpp Responses stream was refused
	// as model_mismatch here, and only logged).
	if verdict == "rejected" && !engine {
		pt.alarms = append(pt.alarms, o)
	}
}

func (pt *passTally) report(t *testing.T) {
	t.Helper()
	for _, w := range []string{"messages", "responses"} {
		var codes []string
		for c, n := range pt.outcomes[w] {
			codes = append(codes, fmt.Sprintf("%s=%d", c, n))
		}
		sort.Strings(codes)
		flagged := 0
		for c, n := range pt.outcomes[w] {
			if strings.HasSuffix(c, " flagged") {
				flagged += n
			}
		}
		rate := 0.0
		if pt.served[w] > 0 {
			rate = 100 * float64(flagged) / float64(pt.served[w])
		}
		t.Logf("%s passed through: %d requests sent, %d answers served and judged, %d verified, %d flagged (%.1f%%); contract outcomes: %s; llama.cpp itself failed %d generations (retried)",
			w, pt.sent[w], pt.served[w], pt.verified[w], flagged, rate, strings.Join(codes, ", "), pt.engineFailures[w])
		var fins []string
		for f, n := range pt.finishes[w] {
			fins = append(fins, fmt.Sprintf("%s=%d", f, n))
		}
		sort.Strings(fins)
		t.Logf("%s: finishes %s; %d answers with a call", w, strings.Join(fins, ", "), pt.calls[w])
		if pt.served[w] == 0 {
			t.Errorf("%s: no answer served", w)
		}
	}
	var others []string
	for o, n := range pt.others {
		others = append(others, fmt.Sprintf("%d × %s", n, o))
	}
	sort.Strings(others)
	for _, o := range others {
		t.Logf("not judged by the contract, or refused by another check: %s", o)
	}
	for c, n := range pt.caught {
		t.Logf("rightly refused, llama.cpp ignoring what the request asked: %s × %d", c, n)
	}
	for _, a := range pt.alarms {
		t.Errorf("false alarm: %s", a)
	}
}
