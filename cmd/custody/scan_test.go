package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/tokenize"
)

// The scan tests: a malicious upstream (the simulator behind tamper,
// which rewrites its answers) puts another tenant's prompt text into
// each field a client reads; the real binary must refuse every one.

// tamper serves the simulator's answers, rewritten for a request whose
// prompt says "case:MODE:N": leak N (set by the test) is put where MODE
// says. Other requests pass as the simulator answered. It records the
// bodies it was sent.
type tamper struct {
	sim http.Handler
	mu  sync.Mutex
	// leaks by case number; bodies received, by path.
	leaks  map[int]string
	bodies map[string][][]byte
	// noID strips the id of chat stream chunks; replay holds the first
	// id-less stream served, served again to every later "case:replay".
	noID   bool
	replay []byte
}

var caseRE = regexp.MustCompile(`case:([a-z_]+):([0-9]+)`)

// toySim is the simulator serving sim-1, counted with o200k_base, for
// the tests' tampering upstreams to put in front of.
func toySim(t *testing.T) *sim.Server {
	t.Helper()
	counter, err := tokenize.Lookup("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(sim.Config{Models: []string{"sim-1"}, Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTamper(t *testing.T) (*tamper, string) {
	t.Helper()
	tp := &tamper{sim: toySim(t), leaks: map[int]string{}, bodies: map[string][][]byte{}}
	srv := httptest.NewServer(tp)
	t.Cleanup(srv.Close)
	return tp, srv.URL + "/v1"
}

func (tp *tamper) leak(n int, text string) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.leaks[n] = text
}

func (tp *tamper) received(path string) [][]byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([][]byte(nil), tp.bodies[path]...)
}

func (tp *tamper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tp.mu.Lock()
	tp.bodies[r.URL.Path] = append(tp.bodies[r.URL.Path], body)
	tp.mu.Unlock()
	forward := body
	if bytes.Contains(body, []byte("case:deep:")) {
		// The simulator's renderer has custody's depth limit: it is
		// sent the schema 10 levels shallower, and counts about what an
		// engine without the limit counts for the whole.
		level := `{"type":"object","properties":{"x":`
		forward = bytes.Replace(forward, []byte(level), nil, 10)
		forward = bytes.Replace(forward, []byte(`{"type":"string"}`+strings.Repeat("}}", 10)), []byte(`{"type":"string"}`), 1)
	}
	r.Body = io.NopCloser(bytes.NewReader(forward))
	r.ContentLength = int64(len(forward))
	rec := httptest.NewRecorder()
	tp.sim.ServeHTTP(rec, r)
	out := rec.Body.Bytes()
	mode, leak := "", ""
	if m := caseRE.FindSubmatch(body); m != nil {
		n, _ := strconv.Atoi(string(m[2]))
		tp.mu.Lock()
		mode, leak = string(m[1]), tp.leaks[n]
		tp.mu.Unlock()
	}
	stream := strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream")
	if rec.Code == 200 {
		switch {
		case mode == "replay" && stream:
			tp.mu.Lock()
			if tp.replay == nil {
				tp.replay = stripStreamIDs(out)
			}
			out = tp.replay
			tp.mu.Unlock()
		case mode == "":
		case r.URL.Path == "/v1/chat/completions" && stream:
			out = tamperChatStream(out, mode, leak)
		case r.URL.Path == "/v1/chat/completions":
			out = tamperChat(out, mode, leak)
		case r.URL.Path == "/v1/messages" && stream:
			out = tamperMessagesStream(out, mode, leak)
		case r.URL.Path == "/v1/messages":
			out = tamperMessages(out, mode, leak)
		case r.URL.Path == "/v1/responses" && stream:
			out = tamperResponsesStream(out, mode, leak)
		case r.URL.Path == "/v1/responses":
			out = tamperResponses(out, mode, leak)
		}
	}
	writeRecorded(w, rec, out)
}

// writeRecorded writes the answer an upstream double recorded in rec
// with out as its body (rewritten, so without rec's Content-Length).
func writeRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder, out []byte) {
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(rec.Code)
	w.Write(out)
}

// jsonOf is v as JSON bytes.
func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// wordTokens is leak as tokens a client joins back into it.
func wordTokens(leak string) []string {
	ws := strings.Fields(leak)
	for i := range ws {
		if i > 0 {
			ws[i] = " " + ws[i]
		}
	}
	return ws
}

// chatDelta is what mode puts in a chat message or delta, and the
// choice's logprobs.
func chatDelta(mode, leak string) (msg map[string]any, logprobs any) {
	msg = map[string]any{}
	switch mode {
	case "content":
		msg["content"] = "Sure. " + leak + " "
	case "lastword":
		msg["content"] = "Here it is: " + leak
	case "reasoning_content", "reasoning", "refusal":
		msg[mode] = leak
	case "tool_name":
		msg["tool_calls"] = []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": leak, "arguments": "{}"}}}
	case "tool_args":
		msg["tool_calls"] = []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": "note", "arguments": string(jsonOf(map[string]string{"note": leak}))}}}
	case "logprob", "top_logprob":
		var toks []any
		for _, w := range wordTokens(leak) {
			if mode == "logprob" {
				toks = append(toks, map[string]any{"token": w, "logprob": -0.1, "top_logprobs": []any{}})
			} else {
				toks = append(toks, map[string]any{"token": " ok", "logprob": -0.1, "top_logprobs": []any{
					map[string]any{"token": " ok", "logprob": -0.1}, map[string]any{"token": w, "logprob": -2.5}}})
			}
		}
		logprobs = map[string]any{"content": toks}
	}
	return msg, logprobs
}

func tamperChat(out []byte, mode, leak string) []byte {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return out
	}
	choice := m["choices"].([]any)[0].(map[string]any)
	usage, _ := m["usage"].(map[string]any)
	switch mode { // upstream faults
	case "two_choices":
		second := map[string]any{}
		for k, v := range choice {
			second[k] = v
		}
		second["index"] = 1
		m["choices"] = []any{choice, second}
		return jsonOf(m)
	case "null_finish":
		choice["finish_reason"] = nil
		return jsonOf(m)
	case "unknown_finish":
		choice["finish_reason"] = "sideways"
		return jsonOf(m)
	case "no_message":
		delete(choice, "message")
		return jsonOf(m)
	case "neg_tokens":
		usage["completion_tokens"] = -100
		return jsonOf(m)
	case "huge_tokens":
		return bytes.Replace(jsonOf(m), []byte(`"completion_tokens":`), []byte(`"completion_tokens":9223372036854775807,"x":`), 1)
	}
	message := choice["message"].(map[string]any)
	add, lp := chatDelta(mode, leak)
	for k, v := range add {
		if k == "content" {
			v = fmt.Sprint(message["content"]) + " " + v.(string)
			if mode == "lastword" {
				v = add[k]
			}
		}
		message[k] = v
	}
	if lp != nil {
		choice["logprobs"] = lp
	}
	return jsonOf(m)
}

// sseEvents splits a stream into its events (without the blank line).
func sseEvents(b []byte) []string {
	var out []string
	for _, e := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(e) != "" {
			out = append(out, e)
		}
	}
	return out
}

func joinEvents(evs []string) []byte { return []byte(strings.Join(evs, "\n\n") + "\n\n") }

func eventData(e string) (string, map[string]any) {
	for _, l := range strings.Split(e, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			var m map[string]any
			json.Unmarshal([]byte(d), &m)
			return d, m
		}
	}
	return "", nil
}

func tamperChatStream(out []byte, mode, leak string) []byte {
	evs := sseEvents(out)
	var res []string
	injected := false
	for i, e := range evs {
		d, m := eventData(e)
		if m != nil && d != "[DONE]" {
			cs, _ := m["choices"].([]any)
			switch { // upstream faults
			case mode == "unknown_finish" && len(cs) > 0 && cs[0].(map[string]any)["finish_reason"] != nil:
				cs[0].(map[string]any)["finish_reason"] = "sideways"
				e = "data: " + string(jsonOf(m))
			case mode == "neg_tokens" && m["usage"] != nil:
				m["usage"].(map[string]any)["completion_tokens"] = -100
				e = "data: " + string(jsonOf(m))
			case mode == "two_choices" && i == 1:
				second := map[string]any{}
				for k, v := range cs[0].(map[string]any) {
					second[k] = v
				}
				second["index"] = 1
				m["choices"] = append(cs, second)
				e = "data: " + string(jsonOf(m))
			}
		}
		finishing := false
		if cs, ok := m["choices"].([]any); ok && len(cs) > 0 {
			finishing = cs[0].(map[string]any)["finish_reason"] != nil
		}
		// lastword: the leak is the stream's last text; the others go
		// after the first chunk.
		if !injected && m != nil && d != "[DONE]" && (mode == "lastword" && finishing || mode != "lastword" && i == 1) {
			delta, lp := chatDelta(mode, leak)
			c := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
			if lp != nil {
				c["logprobs"] = lp
			}
			inj := map[string]any{}
			for k, v := range m {
				inj[k] = v
			}
			inj["choices"] = []any{c}
			delete(inj, "usage")
			res = append(res, "data: "+string(jsonOf(inj)))
			injected = true
		}
		res = append(res, e)
	}
	return joinEvents(res)
}

func stripStreamIDs(out []byte) []byte {
	evs := sseEvents(out)
	for i, e := range evs {
		if d, m := eventData(e); m != nil && d != "[DONE]" {
			delete(m, "id")
			evs[i] = "data: " + string(jsonOf(m))
		}
	}
	return joinEvents(evs)
}

func tamperMessages(out []byte, mode, leak string) []byte {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return out
	}
	content, _ := m["content"].([]any)
	switch mode {
	case "thinking":
		content = append([]any{map[string]any{"type": "thinking", "thinking": leak, "signature": "c2ln"}}, content...)
	case "tool_input":
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_1", "name": "note", "input": map[string]any{"note": leak}})
	}
	m["content"] = content
	return jsonOf(m)
}

// anthropicEvent is one Messages stream event.
func anthropicEvent(m map[string]any) string {
	return "event: " + m["type"].(string) + "\ndata: " + string(jsonOf(m))
}

func tamperMessagesStream(out []byte, mode, leak string) []byte {
	evs := sseEvents(out)
	var res []string
	for _, e := range evs {
		_, m := eventData(e)
		if m == nil {
			res = append(res, e)
			continue
		}
		if ix, ok := m["index"].(float64); ok {
			m["index"] = ix + 1 // the injected block is block 0
			e = anthropicEvent(m)
		}
		res = append(res, e)
		if m["type"] != "message_start" {
			continue
		}
		var start, stop map[string]any
		var deltas []map[string]any
		switch mode {
		case "thinking":
			start = map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}
			for _, w := range wordTokens(leak) {
				deltas = append(deltas, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": w}})
			}
		case "tool_input":
			start = map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "note", "input": map[string]any{}}}
			js := string(jsonOf(map[string]string{"note": leak}))
			for i := 0; i < len(js); i += 7 {
				deltas = append(deltas, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": js[i:min(i+7, len(js))]}})
			}
		}
		stop = map[string]any{"type": "content_block_stop", "index": 0}
		res = append(res, anthropicEvent(start))
		for _, d := range deltas {
			res = append(res, anthropicEvent(d))
		}
		res = append(res, anthropicEvent(stop))
	}
	return joinEvents(res)
}

// responsesItem is the output item mode adds to a Response.
func responsesItem(mode, leak string) map[string]any {
	switch mode {
	case "function_call":
		return map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "note",
			"arguments": string(jsonOf(map[string]string{"note": leak})), "status": "completed"}
	case "reasoning":
		return map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text", "text": leak}}}
	}
	return nil
}

func tamperResponses(out []byte, mode, leak string) []byte {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return out
	}
	output, _ := m["output"].([]any)
	m["output"] = append(output, responsesItem(mode, leak))
	return jsonOf(m)
}

func tamperResponsesStream(out []byte, mode, leak string) []byte {
	evs := sseEvents(out)
	var res []map[string]any
	items := 0
	for _, e := range evs {
		d, m := eventData(e)
		if m == nil || d == "[DONE]" {
			continue
		}
		typ, _ := m["type"].(string)
		if typ == "response.output_item.added" {
			items++
		}
		if typ == "response.completed" || typ == "response.incomplete" {
			item := responsesItem(mode, leak)
			added := map[string]any{}
			for k, v := range item {
				added[k] = v
			}
			switch mode {
			case "function_call":
				added["arguments"], added["status"] = "", "in_progress"
				res = append(res, map[string]any{"type": "response.output_item.added", "output_index": items, "item": added})
				args := item["arguments"].(string)
				for i := 0; i < len(args); i += 7 {
					res = append(res, map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": items, "delta": args[i:min(i+7, len(args))]})
				}
			case "reasoning":
				added["summary"] = []any{}
				res = append(res, map[string]any{"type": "response.output_item.added", "output_index": items, "item": added})
				for _, w := range wordTokens(leak) {
					res = append(res, map[string]any{"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": items, "summary_index": 0, "delta": w})
				}
			}
			res = append(res, map[string]any{"type": "response.output_item.done", "output_index": items, "item": item})
			r := m["response"].(map[string]any)
			output, _ := r["output"].([]any)
			r["output"] = append(output, item)
		}
		res = append(res, m)
	}
	var b []string
	for i, m := range res {
		m["sequence_number"] = i
		b = append(b, "event: "+m["type"].(string)+"\ndata: "+string(jsonOf(m)))
	}
	return joinEvents(b)
}

// scanConfig routes m-tamper (chat wire), m-direct (Responses passed
// through) and m-claude (Messages passed through) to the tamper, and
// serves tenant flagger's contamination flagged.
const scanConfig = `
checks: {contamination_warmup: -1}
canaries: {ignore_path_changes: true}
admin_keys: [adm-test]
tenants:
  - {id: acme, api_keys: [sk-acme]}
  - {id: beta, api_keys: [sk-beta]}
  - {id: gamma, api_keys: [sk-gamma]}
  - {id: flagger, api_keys: [sk-flagger], policy: flagit}
policies:
  - {name: flagit, on_contamination: flag}
providers:
  - {name: chatwire, kind: openai, base_url: "TAMPER", request_id_echo: x-request-id, timeout: 20s}
  - {name: direct, kind: openai, responses: true, base_url: "TAMPER", timeout: 20s}
  - {name: claude, kind: anthropic, engine: llamacpp, base_url: "TAMPER", timeout: 20s}
models:
  - {name: m-tamper, tokenizer: o200k_base, chat_template: builtin:chatml, context_window: 32768, routes: [{provider: chatwire, model: sim-1}]}
  - {name: m-direct, tokenizer: o200k_base, context_window: 32768, routes: [{provider: direct, model: sim-1}]}
  - {name: m-claude, tokenizer: o200k_base, context_window: 32768, routes: [{provider: claude, model: sim-1}]}
`

func startScan(t *testing.T, extra string) (*tamper, *server) {
	t.Helper()
	tp, url := newTamper(t)
	dir := t.TempDir()
	cfg := strings.ReplaceAll(scanConfig, "TAMPER", url)
	cfg = strings.Replace(cfg, "providers:\n", "providers:\n"+extra, 1)
	return tp, startServe(t, dir, "--config", writeConfig(t, dir, cfg))
}

// leakSecret has tenant beta send a prompt holding secret n (which the
// test will have the upstream leak), served verified; it returns the
// secret and beta's request id.
func leakSecret(t *testing.T, s *server, tp *tamper, n int) (string, string) {
	t.Helper()
	secret := fmt.Sprintf("the vault combination for branch %s is %d and the courier passphrase is %s osprey violet said the night manager",
		strings.Repeat(string(rune('a'+n%26)), 3+n%5), 4000+n*37, []string{"tangerine", "marmalade", "cobblestone", "periwinkle", "quartermaster"}[n%5])
	tp.leak(n, secret)
	resp, body := post(t, s.URL+"/v1/chat/completions", "sk-beta",
		string(jsonOf(map[string]any{"model": "m-tamper", "max_tokens": 8, "messages": []any{map[string]any{"role": "user", "content": "Keep this note safe: " + secret + "."}}})))
	if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
		t.Fatalf("victim's request: %d %s %s", resp.StatusCode, resp.Header.Get("Custody-Checks"), body)
	}
	return secret, resp.Header.Get("Custody-Request-Id")
}

// exchangeAt posts body to path as key and returns the status, what the
// client read (the whole stream), and the checks (trailer of a stream).
func exchangeAt(t *testing.T, url, path, key, body string) (int, string, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	checks := resp.Header.Get("Custody-Checks")
	if c := resp.Trailer.Get("Custody-Checks"); c != "" {
		checks = c
	}
	return resp.StatusCode, string(b), checks, resp.Header
}

// attackBody is a request of front dialect path asking for case mode:n.
func attackBody(path, model, mode string, n int, stream bool) string {
	prompt := fmt.Sprintf("Tell me a short story about a lighthouse. case:%s:%d", mode, n)
	switch path {
	case "/v1/messages":
		return string(jsonOf(map[string]any{"model": model, "max_tokens": 12, "stream": stream,
			"messages": []any{map[string]any{"role": "user", "content": prompt}}}))
	case "/v1/responses":
		return string(jsonOf(map[string]any{"model": model, "max_output_tokens": 12, "stream": stream, "input": prompt}))
	}
	return string(jsonOf(map[string]any{"model": model, "max_tokens": 12, "stream": stream,
		"messages": []any{map[string]any{"role": "user", "content": prompt}}}))
}

func wantCaught(t *testing.T, what string, status int, body, checks string) {
	t.Helper()
	if !strings.Contains(checks, "contamination=cross_request_contamination") || !strings.Contains(body, "cross_request_contamination") {
		t.Errorf("%s: another tenant's text reached the client unflagged: %d checks %q\n%.6000s", what, status, checks, body)
	}
}

// TestScanEveryTextField: another tenant's prompt text in each field a
// client reads, plain and streamed, on the chat wire (chat front, and
// the Messages and Responses fronts translated to it) and passed through
// to Messages and Responses upstreams, is cross_request_contamination.
// Before, only content and text were scanned: each of these was
// verified.
func TestScanEveryTextField(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("many exchanges through the binary")
	}
	tp, s := startScan(t, "")
	n := 0
	type tc struct{ path, model, mode string }
	var cases []tc
	for _, mode := range []string{"content", "reasoning_content", "reasoning", "refusal", "tool_name", "tool_args", "logprob", "top_logprob"} {
		cases = append(cases, tc{"/v1/chat/completions", "m-tamper", mode})
	}
	for _, mode := range []string{"reasoning_content", "tool_args"} {
		cases = append(cases, tc{"/v1/messages", "m-tamper", mode}, tc{"/v1/responses", "m-tamper", mode})
	}
	for _, mode := range []string{"thinking", "tool_input"} {
		cases = append(cases, tc{"/v1/messages", "m-claude", mode})
	}
	for _, mode := range []string{"function_call", "reasoning"} {
		cases = append(cases, tc{"/v1/responses", "m-direct", mode})
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s %s %s stream=%v", strings.TrimPrefix(c.path, "/v1/"), c.model, c.mode, stream)
			t.Run(name, func(t *testing.T) {
				n++
				leakSecret(t, s, tp, n)
				status, body, checks, _ := exchangeAt(t, s.URL, c.path, "sk-acme", attackBody(c.path, c.model, c.mode, n, stream))
				wantCaught(t, name, status, body, checks)
			})
		}
	}
}

// TestScanRetriedLeak: the same leak, asked for again and again by the
// same tenant, is caught every time (the detector learnt its "stock
// phrases" from the answer it had just refused: the third try passed).
func TestScanRetriedLeak(t *testing.T) {
	t.Parallel() // its own data dir and ports
	tp, s := startScan(t, "")
	leakSecret(t, s, tp, 1)
	for try := 1; try <= 4; try++ {
		status, body, checks, _ := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", attackBody("", "m-tamper", "content", 1, try%2 == 0))
		wantCaught(t, fmt.Sprint("try ", try), status, body, checks)
	}
}

// TestScanLastWord: a leaked word that is the answer's very last one is
// scanned before the verdict (it was scanned after: "Here it is:
// <secret>" passed).
func TestScanLastWord(t *testing.T) {
	t.Parallel() // its own data dir and ports
	tp, s := startScan(t, "")
	for i, stream := range []bool{false, true} {
		key := fmt.Sprintf("Zq7Xk2Vb9Lp4Tw%d", i)
		tp.leak(100+i, key)
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-beta",
			string(jsonOf(map[string]any{"model": "m-tamper", "max_tokens": 8, "messages": []any{map[string]any{"role": "user", "content": "My deploy key is " + key + " and nobody else may see it."}}})))
		if resp.StatusCode != 200 {
			t.Fatalf("victim: %d %s", resp.StatusCode, body)
		}
		status, out, checks, _ := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", attackBody("", "m-tamper", "lastword", 100+i, stream))
		wantCaught(t, fmt.Sprint("stream=", stream), status, out, checks)
	}
}

// TestScanNoMembershipOracle: a contaminated answer served flagged
// tells its tenant that it carries another request's text, never which
// request (the leaf and receipt said "1 fingerprints of request <the
// victim's id>"); the operator's log names it.
func TestScanNoMembershipOracle(t *testing.T) {
	t.Parallel() // its own data dir and ports
	tp, s := startScan(t, "")
	_, victim := leakSecret(t, s, tp, 7)
	status, body, checks, h := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-flagger", attackBody("", "m-tamper", "content", 7, false))
	if status != 200 || !strings.Contains(checks, "contamination=cross_request_contamination") {
		t.Fatalf("not served flagged: %d %q %.300s", status, checks, body)
	}
	id := h.Get("Custody-Request-Id")
	rresp, receipt := get(t, s.URL+"/v1/custody/receipts/"+id, "sk-flagger")
	if rresp.StatusCode != 200 {
		t.Fatalf("receipt: %d %.500s", rresp.StatusCode, receipt)
	}
	var rc struct{ Leaf []byte }
	if err := json.Unmarshal([]byte(receipt), &rc); err != nil || !bytes.Contains(rc.Leaf, []byte("cross_request_contamination")) {
		t.Fatalf("receipt's leaf: %v %s", err, rc.Leaf)
	}
	for what, text := range map[string]string{"receipt": receipt, "leaf": string(rc.Leaf), "body": body, "checks": checks, "headers": fmt.Sprint(h)} {
		if strings.Contains(text, victim) {
			t.Errorf("the flagged tenant's %s names the victim's request %s", what, victim)
		}
	}
	if !strings.Contains(s.stdout.String()+s.stderr.String(), victim) {
		t.Error("the operator's log does not name the source request")
	}
}

// TestScanIDLessStreamReplay: a stream with no id, delivered to two
// tenants, is a replay the second time (it was replay=ok twice: the
// check keyed on an id there was none of). The stream's content digest
// is claimed in place of the id.
func TestScanIDLessStreamReplay(t *testing.T) {
	t.Parallel() // its own data dir and ports
	_, s := startScan(t, "")
	first := attackBody("", "m-tamper", "replay", 1, true)
	status, body, checks, _ := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", first)
	if status != 200 || !strings.Contains(checks, "replay=ok") || !strings.Contains(body, "verdict verified") {
		t.Fatalf("first: %d %q %.300s", status, checks, body)
	}
	second := strings.Replace(attackBody("", "m-tamper", "replay", 2, true), "lighthouse", "windmill", 1)
	status, body, checks, _ = exchangeAt(t, s.URL, "/v1/chat/completions", "sk-beta", second)
	if !strings.Contains(checks, "replay=response_replayed") || strings.Contains(body, "[DONE]") {
		t.Errorf("an id-less stream delivered again to another request: %d %q\n%.600s", status, checks, body)
	}
}

// TestScanDeepSchemaBounded: a tool schema nested past the renderer's
// depth leaves the prompt counted without its template, against a band
// hundreds of tokens wide: the check says so and the answer is flagged
// (it said prompt_tokens=ok).
func TestScanDeepSchemaBounded(t *testing.T) {
	t.Parallel() // its own data dir and ports
	_, s := startScan(t, "")
	schema := `{"type":"string"}`
	for range 70 { // two levels of JSON nesting each: past 128
		schema = `{"type":"object","properties":{"x":` + schema + `}}`
	}
	body := `{"model":"m-tamper","max_tokens":6,"messages":[{"role":"user","content":"hello there case:deep:0"}],` +
		`"tools":[{"type":"function","function":{"name":"deep","description":"d","parameters":` + schema + `}}]}`
	status, out, checks, h := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", body)
	if status != 200 {
		t.Fatalf("%d %.300s", status, out)
	}
	if strings.Contains(checks, "prompt_tokens=ok") || !strings.Contains(checks, "prompt_tokens=prompt_token_mismatch") || h.Get("Custody-Verdict") != "flagged" {
		t.Errorf("a count against the untemplated band only: verdict %q checks %q", h.Get("Custody-Verdict"), checks)
	}
	// The same request with a shallow schema is exact, and ok.
	body = `{"model":"m-tamper","max_tokens":6,"messages":[{"role":"user","content":"hello there"}],` +
		`"tools":[{"type":"function","function":{"name":"deep","description":"d","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]}`
	if _, out, checks, _ := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", body); !strings.Contains(checks, "prompt_tokens=ok") {
		t.Errorf("shallow schema: %q %.300s", checks, out)
	}
}

// TestScanUpstreamFaults: an answer that is not one (two choices where
// one was asked, a null or unknown finish_reason, no message, usage of
// -100 or 2^63-1 tokens) is upstream_error_as_success on the chat front
// and on the Messages and Responses fronts translated to chat: never a
// 500 internal_error (the translators' failure), never verified.
func TestScanUpstreamFaults(t *testing.T) {
	t.Parallel() // its own data dir and ports
	_, s := startScan(t, "")
	for _, mode := range []string{"two_choices", "null_finish", "unknown_finish", "no_message", "neg_tokens", "huge_tokens"} {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages", "/v1/responses"} {
			status, body, checks, _ := exchangeAt(t, s.URL, path, "sk-acme", attackBody(path, "m-tamper", mode, 1, false))
			if status != 502 || !strings.Contains(body, "upstream_error_as_success") || !strings.Contains(checks, "shape=upstream_error_as_success") {
				t.Errorf("%s %s: %d %q %.300s", mode, path, status, checks, body)
			}
		}
	}
	// Streamed: the event that carries the fault ends the stream with
	// the error event, no terminal event, never verified.
	for _, mode := range []string{"two_choices", "unknown_finish", "neg_tokens"} {
		for _, path := range []string{"/v1/chat/completions", "/v1/messages", "/v1/responses"} {
			_, body, checks, _ := exchangeAt(t, s.URL, path, "sk-acme", attackBody(path, "m-tamper", mode, 1, true))
			if !strings.Contains(body, "upstream_error_as_success") || !strings.Contains(checks, "shape=upstream_error_as_success") ||
				strings.Contains(body, "verdict verified") || strings.Contains(body, "internal_error") {
				t.Errorf("stream %s %s: %q %.300s", mode, path, checks, body)
			}
		}
	}
}

// TestScanResponsesCacheIsolationRefused: a provider with responses:
// true and cache_isolation: tenant started, and its Responses requests
// went out with no salt of custody's, the client's own cache_salt, and no
// cache check. The combination is now refused at start, saying which key.
func TestScanResponsesCacheIsolationRefused(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "tenants:\n  - {id: acme, api_keys: [sk-acme]}\nproviders:\n"+
		"  - {name: direct, kind: sim, responses: true, cache_isolation: tenant}\n"+
		"models:\n  - {name: m, context_window: 32768, routes: [{provider: direct, model: sim-1}]}\n")
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--config", cfg)
	cmd.Dir = dir
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(out.String(), "providers[0].cache_isolation") {
			t.Errorf("exit %v:\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("custody serve started with cache isolation it cannot apply:\n%s", out)
	}
}
