//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index/postgres/pgtest"
	"github.com/custody-gateway/custody/verify"
)

// outcomesConfig serves one model per way of failing.
const outcomesConfig = `
admin_keys: [adm-test]
canaries: {ignore_path_changes: true}
limits: {max_body_bytes: 65536, max_concurrent_per_tenant: 1}
tenants:
  - {id: acme, api_keys: [sk-acme]}
  - {id: beta, api_keys: [sk-beta]}
  - {id: strict, api_keys: [sk-strict], policy: deny}
policies:
  - {name: deny, fallback: deny}
providers:
  - {name: clean, kind: sim, request_id_echo: x-request-id}
  - {name: truncate, kind: sim, sim: {faults: [truncate]}}
  - {name: fallback, kind: sim, sim: {faults: [silent-fallback]}}
  - {name: echo, kind: sim, request_id_echo: x-request-id, sim: {faults: [id-echo-mismatch]}}
  - {name: dupid, kind: sim, sim: {faults: [duplicate-id]}}
  - {name: interleave, kind: sim, sim: {faults: [stream-interleave]}}
  - {name: cut, kind: sim, sim: {faults: [stream-cut]}}
  - {name: ambiguous, kind: sim, sim: {faults: [ambiguous-model]}}
  - {name: errbody, kind: sim, sim: {faults: ["error-as-200:error-body"]}}
  - {name: stale, kind: sim, sim: {faults: [stale-kv]}}
  - {name: shared, kind: sim, cache_isolation: tenant, sim: {faults: [shared-cache]}}
  - {name: dead, kind: openai, base_url: "http://127.0.0.1:1/v1", timeout: 2s}
  - {name: slow, kind: sim, timeout: 300ms, sim: {prefill_delay: 200ms}}
  - {name: held, kind: sim, timeout: 10s, sim: {prefill_delay: 80ms}}      # per prompt token: about 1.5 s
  - {name: picky, kind: sim, sim: {models: [sim-1]}}
  - {name: c-undeclared, kind: sim, sim: {faults: [tool-undeclared]}}
  - {name: c-args, kind: sim, sim: {faults: [tool-arguments-invalid]}}
  - {name: c-choice, kind: sim, sim: {faults: [tool-choice-ignored]}}
  - {name: c-format, kind: sim, sim: {faults: [format-ignored]}}
  - {name: c-limit, kind: sim, sim: {faults: [max-tokens-exceeded]}}
  - {name: c-finish, kind: sim, sim: {faults: [finish-tool-calls-empty]}}
  - {name: c-stop, kind: sim, sim: {faults: [stop-kept]}}
  - {name: c-choices, kind: sim, sim: {faults: [choice-misindexed]}}
  - {name: c-logprobs, kind: sim, sim: {faults: [logprobs-dropped]}}
models:
  - {name: m-small, context_window: 64, routes: [{provider: clean}]}
  - {name: m-clean, context_window: 32768, routes: [{provider: clean}]}
  - {name: m-truncate, context_window: 32768, routes: [{provider: truncate}]}
  - {name: m-fallback, context_window: 32768, routes: [{provider: fallback}]}
  - {name: m-echo, context_window: 32768, routes: [{provider: echo}]}
  - {name: m-dupid, context_window: 32768, routes: [{provider: dupid}]}
  - {name: m-interleave, context_window: 32768, routes: [{provider: interleave}]}
  - {name: m-cut, context_window: 32768, routes: [{provider: cut}]}
  - {name: m-ambiguous, context_window: 32768, routes: [{provider: ambiguous}]}
  - {name: m-errbody, context_window: 32768, routes: [{provider: errbody}]}
  - {name: m-stale, context_window: 32768, routes: [{provider: stale}]}
  - {name: m-shared, context_window: 32768, routes: [{provider: shared}]}
  - {name: m-deny, context_window: 32768, routes: [{provider: dead}, {provider: clean}]}
  - {name: m-dead, context_window: 32768, routes: [{provider: dead}]}
  - {name: m-slow, context_window: 32768, routes: [{provider: slow}]}
  - {name: m-held, context_window: 32768, routes: [{provider: held}]}
  - {name: m-rejected, context_window: 32768, routes: [{provider: picky, model: no-such-model}]}
  - {name: m-c-undeclared, context_window: 32768, routes: [{provider: c-undeclared}]}
  - {name: m-c-args, context_window: 32768, routes: [{provider: c-args}]}
  - {name: m-c-choice, context_window: 32768, routes: [{provider: c-choice}]}
  - {name: m-c-format, context_window: 32768, routes: [{provider: c-format}]}
  - {name: m-c-limit, context_window: 32768, routes: [{provider: c-limit}]}
  - {name: m-c-finish, context_window: 32768, routes: [{provider: c-finish}]}
  - {name: m-c-stop, context_window: 32768, routes: [{provider: c-stop}]}
  - {name: m-c-choices, context_window: 32768, routes: [{provider: c-choices}]}
  - {name: m-c-logprobs, context_window: 32768, routes: [{provider: c-logprobs}]}
`

// answer is what the client saw of one outcome (nothing, for a client
// that went away).
type answer struct {
	status  int
	body    string
	checks  string // Custody-Checks, the trailer's for a stream
	id      string // Custody-Request-Id
	key     string // the tenant's key, for its receipt
	flagged bool   // served, flagged: no error body
}

// TestEveryOutcome drives every code of the outcome table through the
// real binary and finds the same word in the error body (the stream's
// error event), Custody-Checks (header, or trailer of a stream) as
// check=code with the check the table names, the ledger leaf (through the
// receipt), custody_check_failures_total{code} and docs/checks.md.
//
// Where a place cannot hold it, the test says so: unauthorized has no
// tenant, so no leaf; ledger_unavailable is the ledger failing, so no
// leaf; client_closed has no client to read a body or a header (its
// record is found by code in the index); not_found, method_not_allowed
// and forbidden answer custody's own endpoints, not an exchange (no
// Custody-Checks or leaf; the metric counts them); internal_error is a bug, which no
// input may cause (TestUsageHelp and the fuzzers look for those), so only
// its row is checked.
func TestEveryOutcome(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("starts two gateways and drives every code")
	}
	doc, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[custody.Code]bool{custody.CodeInternal: true}
	check := func(t *testing.T, s *server, code custody.Code, a answer) {
		t.Helper()
		seen[code] = true
		word, pair := string(code), code.Check()+"="+string(code)
		if !strings.Contains(string(doc), fmt.Sprintf("| `%s` | `%s` |", code.Check(), code)) {
			t.Errorf("%s: not in docs/checks.md as %s", code, pair)
		}
		if a.status == 0 { // nobody listened
			return
		}
		if !a.flagged && !strings.Contains(a.body, `"code":"`+word+`"`) {
			t.Errorf("%s: not the body's code: %d %.300s", code, a.status, a.body)
		}
		if !a.flagged && a.status != 200 && a.status != code.Status() && code != custody.CodeUpstreamRejected {
			t.Errorf("%s: status %d, want %d", code, a.status, code.Status())
		}
		if !strings.Contains(a.checks, pair) {
			t.Errorf("%s: Custody-Checks %q lacks %s", code, a.checks, pair)
		}
		if _, ok := metricReaches(t, s, `custody_check_failures_total{code="`+word+`"}`, 1); !ok {
			t.Errorf("%s: custody_check_failures_total does not count it", code)
		}
		if a.id == "" {
			return // no leaf
		}
		leafHas(t, s, a.key, a.id, code)
	}
	ask := func(t *testing.T, s *server, key, model, prompt string, stream bool) answer {
		t.Helper()
		resp, body := post(t, s.URL+"/v1/chat/completions", key, chatBody(model, prompt, stream))
		a := answer{status: resp.StatusCode, body: body, checks: resp.Header.Get("Custody-Checks"), id: resp.Header.Get("Custody-Request-Id"), key: key}
		if stream && resp.StatusCode == 200 {
			a.checks = resp.Trailer.Get("Custody-Checks")
		}
		if resp.Header.Get("Custody-Receipt") == "" {
			a.id = ""
		}
		return a
	}

	// askWith is ask with members added to the chat body (the contract's).
	askWith := func(t *testing.T, s *server, model, prompt, extra string) answer {
		t.Helper()
		body := strings.TrimSuffix(chatBody(model, prompt, false), "}") + "," + extra + "}"
		resp, out := post(t, s.URL+"/v1/chat/completions", "sk-acme", body)
		a := answer{status: resp.StatusCode, body: out, checks: resp.Header.Get("Custody-Checks"), id: resp.Header.Get("Custody-Request-Id"), key: "sk-acme"}
		a.flagged = resp.Header.Get("Custody-Verdict") == "flagged"
		if resp.Header.Get("Custody-Receipt") == "" {
			a.id = ""
		}
		return a
	}
	const weather = `"tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	const strictWeather = `"tools":[{"type":"function","function":{"name":"weather","strict":true,"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, outcomesConfig))
	hello := func(i int) string { return fmt.Sprintf("acme asks: summarise o%dK7qW2xR5 for the board", i) }
	warm := func(t *testing.T, model string, stream bool) {
		ask(t, s, "sk-beta", model, "beta's private note z9Q7vK2pLx9 about the merger with Northwind and its secret terms", stream)
	}

	cases := []struct {
		code custody.Code
		run  func(t *testing.T) answer
	}{
		{custody.CodeContextLengthExceeded, func(t *testing.T) answer {
			return ask(t, s, "sk-acme", "m-small", longPrompt, false)
		}},
		{custody.CodeInvalidRequest, func(t *testing.T) answer {
			resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"m-clean","messages":[{"role":"user","content":1}]}`)
			return answer{resp.StatusCode, body, resp.Header.Get("Custody-Checks"), resp.Header.Get("Custody-Request-Id"), "sk-acme", false}
		}},
		{custody.CodeRequestTooLarge, func(t *testing.T) answer {
			return ask(t, s, "sk-acme", "m-clean", strings.Repeat("big ", 20000), false)
		}},
		{custody.CodeUnauthorized, func(t *testing.T) answer {
			a := ask(t, s, "sk-nobody", "m-clean", "hi", false)
			a.id = "" // no tenant: not recorded
			return a
		}},
		{custody.CodeRateLimited, func(t *testing.T) answer {
			held := make(chan struct{})
			go func() {
				defer close(held)
				post(t, s.URL+"/v1/chat/completions", "sk-beta", chatBody("m-held", "hold the slot", false))
			}()
			time.Sleep(500 * time.Millisecond) // beta's one slot is taken
			a := ask(t, s, "sk-beta", "m-clean", "hi", false)
			<-held
			return a
		}},
		{custody.CodePromptTokenMismatch, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-truncate", longPrompt, false) }},
		{custody.CodeModelMismatch, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-fallback", hello(1), true) }},
		{custody.CodeRequestIDMismatch, func(t *testing.T) answer {
			warm(t, "m-echo", false)
			return ask(t, s, "sk-acme", "m-echo", hello(2), false)
		}},
		{custody.CodeResponseReplayed, func(t *testing.T) answer {
			warm(t, "m-dupid", false)
			return ask(t, s, "sk-acme", "m-dupid", hello(3), false)
		}},
		{custody.CodeStreamInconsistent, func(t *testing.T) answer {
			warm(t, "m-interleave", true)
			return ask(t, s, "sk-acme", "m-interleave", hello(4), true)
		}},
		{custody.CodeStreamTruncated, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-cut", hello(5), true) }},
		{custody.CodeResponseAmbiguous, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-ambiguous", hello(6), false) }},
		{custody.CodeUpstreamErrorAsSuccess, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-errbody", hello(7), true) }},
		{custody.CodeCrossRequestContamination, func(t *testing.T) answer {
			warm(t, "m-stale", false)
			return ask(t, s, "sk-acme", "m-stale", hello(8), false)
		}},
		{custody.CodeCacheShared, func(t *testing.T) answer {
			prompt := strings.Repeat("The shared system instructions every tenant of this deployment sends first. ", 30)
			ask(t, s, "sk-acme", "m-shared", prompt+"Question acme", false)
			a := ask(t, s, "sk-beta", "m-shared", prompt+"Question beta", false)
			a.flagged = a.status == 200
			return a
		}},
		{custody.CodeContractToolUnknown, func(t *testing.T) answer { return askWith(t, s, "m-c-undeclared", hello(20), weather) }},
		{custody.CodeContractArgumentsInvalid, func(t *testing.T) answer { return askWith(t, s, "m-c-args", hello(21), weather) }},
		{custody.CodeContractSchemaInvalid, func(t *testing.T) answer { return askWith(t, s, "m-c-args", hello(22), strictWeather) }},
		{custody.CodeContractToolChoiceIgnored, func(t *testing.T) answer {
			return askWith(t, s, "m-c-choice", hello(23), weather+`,"tool_choice":"required"`)
		}},
		{custody.CodeContractFormatInvalid, func(t *testing.T) answer {
			return askWith(t, s, "m-c-format", hello(24), `"response_format":{"type":"json_object"}`)
		}},
		{custody.CodeContractLimitExceeded, func(t *testing.T) answer { return askWith(t, s, "m-c-limit", hello(25), `"max_tokens":4`) }},
		{custody.CodeContractFinishInvalid, func(t *testing.T) answer { return askWith(t, s, "m-c-finish", hello(26), weather) }},
		{custody.CodeContractStopIgnored, func(t *testing.T) answer { return askWith(t, s, "m-c-stop", hello(27), `"stop":["zebra"]`) }},
		{custody.CodeContractChoicesInvalid, func(t *testing.T) answer { return askWith(t, s, "m-c-choices", hello(28), `"n":1`) }},
		{custody.CodeContractLogprobsMissing, func(t *testing.T) answer { return askWith(t, s, "m-c-logprobs", hello(29), `"logprobs":true`) }},
		{custody.CodeFallbackNotPermitted, func(t *testing.T) answer { return ask(t, s, "sk-strict", "m-deny", hello(9), false) }},
		{custody.CodeUpstreamUnavailable, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-dead", hello(10), false) }},
		{custody.CodeUpstreamTimeout, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-slow", hello(11), false) }},
		{custody.CodeUpstreamRejected, func(t *testing.T) answer { return ask(t, s, "sk-acme", "m-rejected", hello(12), false) }},
		{custody.CodeClientClosed, func(t *testing.T) answer {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/v1/chat/completions", strings.NewReader(chatBody("m-held", "a client that gives up", false)))
			req.Header.Set("Authorization", "Bearer sk-acme")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the request was answered: %d", resp.StatusCode)
			}
			// Nobody saw its answer: its record is found by its code.
			id := recordWithCode(t, s, custody.CodeClientClosed)
			leafHas(t, s, "sk-acme", id, custody.CodeClientClosed)
			return answer{}
		}},
	}
	for _, c := range cases {
		t.Run(string(c.code), func(t *testing.T) { check(t, s, c.code, c.run(t)) })
	}
	t.Run("custody's own endpoints", func(t *testing.T) {
		for _, c := range []struct {
			code              custody.Code
			method, path, key string
		}{
			{custody.CodeNotFound, "GET", "/v1/nothing-here", "sk-acme"},
			{custody.CodeMethodNotAllowed, "GET", "/v1/chat/completions", "sk-acme"},
			{custody.CodeForbidden, "GET", "/v1/custody/records", "sk-acme"},
		} {
			resp, body := do(t, c.method, s.URL+c.path, c.key, nil)
			seen[c.code] = true
			if resp.StatusCode != c.code.Status() || !strings.Contains(body, `"code":"`+string(c.code)+`"`) || !strings.Contains(body, `"type":"`+c.code.Type()+`"`) {
				t.Errorf("%s %s: %d %s, want %s", c.method, c.path, resp.StatusCode, body, c.code)
			}
			if !strings.Contains(string(doc), fmt.Sprintf("| `%s` | `%s` |", c.code.Check(), c.code)) {
				t.Errorf("%s: not in docs/checks.md", c.code)
			}
			if _, ok := metricReaches(t, s, `custody_check_failures_total{code="`+string(c.code)+`"}`, 1); !ok {
				t.Errorf("%s: custody_check_failures_total does not count it", c.code)
			}
		}
	})
	// A third gateway with small memory bounds, in front of an upstream
	// whose plain answer is over limits.max_response_bytes and whose
	// stream holds the in-flight budget while the test asks again.
	t.Run("memory bounds", func(t *testing.T) {
		held, release := make(chan struct{}, 1), make(chan struct{})
		var once sync.Once
		defer once.Do(func() { close(release) })
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			chunk := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n"
			if strings.Contains(string(body), `"stream":true`) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chunk)
				w.(http.Flusher).Flush()
				held <- struct{}{}
				<-release
				io.WriteString(w, "data: [DONE]\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"c2","object":"chat.completion","created":1,"model":"up-1","choices":[{"index":0,"message":{"role":"assistant","content":"`+
				strings.Repeat("big ", 40000)+`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`)
		}))
		defer up.Close()
		dir := t.TempDir()
		s3 := startServe(t, dir, "--config", writeConfig(t, dir, fmt.Sprintf(`
admin_keys: [adm-test]
canaries: {ignore_path_changes: true}
limits: {max_response_bytes: 65536, max_event_bytes: 65536, max_inflight_bytes: 100000}
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: up, kind: openai, base_url: %q, engine: openai}]
models: [{name: m-up, context_window: 32768, routes: [{provider: up, model: up-1}]}]
`, up.URL+"/v1")))
		check(t, s3, custody.CodeResponseTooLarge, ask(t, s3, "sk-acme", "m-up", hello(16), false))
		streamed := make(chan struct{})
		go func() {
			defer close(streamed)
			ask(t, s3, "sk-acme", "m-up", hello(17), true)
		}()
		<-held // the stream holds 64 KiB of the 100,000 bytes: no room for another
		check(t, s3, custody.CodeOverloaded, ask(t, s3, "sk-acme", "m-up", hello(18), false))
		once.Do(func() { close(release) })
		<-streamed
	})

	// Last on this server: the ledger stops taking writes (the file size
	// limit of the running process drops to one byte: as root, a
	// read-only directory would not stop it).
	t.Run(string(custody.CodeLedgerUnavailable), func(t *testing.T) {
		setFileSizeLimit(t, s.cmd.Process.Pid, 1)
		defer setFileSizeLimit(t, s.cmd.Process.Pid, ^uint64(0))
		a := ask(t, s, "sk-acme", "m-clean", hello(13), false)
		a.id = "" // the ledger is what failed: no leaf
		check(t, s, custody.CodeLedgerUnavailable, a)
	})

	// A second gateway, on a postgres index the test can cut, with
	// canaries that quarantine a faulty route.
	t.Run("canaries and a shared index", func(t *testing.T) {
		proxy, dsn := pgtest.NewProxy(t, pgtest.Schema(t))
		dir := t.TempDir()
		s2 := startServe(t, dir, "--config", writeConfig(t, dir, fmt.Sprintf(`
admin_keys: [adm-test]
index: {backend: postgres, dsn: %q}
checks: {on_index_unavailable: reject}
canaries: {interval: 300ms, probes: [needle]}
tenants: [{id: acme, api_keys: [sk-acme]}]
providers:
  - {name: good, kind: sim}
  - {name: bad, kind: sim, sim: {faults: [placeholder-substitution]}}
models:
  - {name: m-ok, context_window: 8192, routes: [{provider: good}]}
  - {name: m-bad, context_window: 8192, routes: [{provider: bad}]}
`, dsn)))
		var a answer
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if a = ask(t, s2, "sk-acme", "m-bad", hello(14), false); strings.Contains(a.body, string(custody.CodeRouteQuarantined)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the faulty route was never quarantined: %d %s", a.status, a.body)
			}
		}
		check(t, s2, custody.CodeRouteQuarantined, a)
		proxy.Cut()
		a = ask(t, s2, "sk-acme", "m-ok", hello(15), false)
		check(t, s2, custody.CodeIndexUnavailable, a)
	})

	for _, r := range custody.Outcomes() {
		if !seen[r.Code] {
			t.Errorf("%s was not driven", r.Code)
		}
	}
}

var leafMu sync.Mutex // receipts are fetched one at a time

// leafHas fetches the receipt of request id and finds code in its leaf,
// as the transaction's code and as an outcome of the table's check.
func leafHas(t *testing.T, s *server, key, id string, code custody.Code) {
	t.Helper()
	leafMu.Lock()
	defer leafMu.Unlock()
	// While the index is down, a receipt is found in the log once its
	// leaf is integrated: a moment.
	_, tx, err := receiptTx(t, s, key, id)
	if err != nil {
		t.Errorf("%s: %v", code, err)
		return
	}
	found := false
	for _, o := range tx.Outcomes {
		found = found || o.Check == code.Check() && o.Code == code
	}
	if tx.Code != code || !found {
		t.Errorf("%s: the leaf says %s with outcomes %+v", code, tx.Code, tx.Outcomes)
	}
}

// receiptTx fetches request id's receipt, waiting out the moment a 503
// lasts while its leaf is integrated, and decodes its leaf; a receipt
// that does not resolve is the error.
func receiptTx(t *testing.T, s *server, key, id string) ([]byte, *custody.Transaction, error) {
	t.Helper()
	resp, body := get(t, s.URL+"/v1/custody/receipts/"+id, key)
	for deadline := time.Now().Add(10 * time.Second); resp.StatusCode == 503 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		resp, body = get(t, s.URL+"/v1/custody/receipts/"+id, key)
	}
	if resp.StatusCode != 200 {
		return nil, nil, fmt.Errorf("receipt %s does not resolve: %d %.300s", id, resp.StatusCode, body)
	}
	var r verify.Receipt
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	tx, err := verify.DecodeLeaf(r.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	return r.Leaf, tx, nil
}

// recordWithCode finds, in the index, a record with code.
func recordWithCode(t *testing.T, s *server, code custody.Code) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, body := get(t, s.URL+"/v1/custody/records?code="+string(code), "adm-test")
		var recs struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		json.Unmarshal([]byte(body), &recs)
		if len(recs.Data) > 0 {
			return recs.Data[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record with code %s: %s", code, body)
		}
	}
}

// setFileSizeLimit sets RLIMIT_FSIZE of process pid: past it, every
// write to a file fails (EFBIG; Go ignores SIGXFSZ).
func setFileSizeLimit(t *testing.T, pid int, max uint64) {
	t.Helper()
	lim := syscall.Rlimit{Cur: max, Max: ^uint64(0)}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_FSIZE), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		t.Fatalf("prlimit: %v", e)
	}
}
