package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custody-gateway/custody"
)

// The oversized tests: an upstream whose answer carries an id, a model or
// a system_fingerprint of 70 KiB. The leaf holds a transaction in at most
// 64 KiB, so such a string once made the transaction unrecordable: the
// rejection was "not recorded", its receipt link pointed at nothing, and
// a stream had already sent its first chunks when ledger_unavailable ended
// it.

// oversizedRE is the prompt's instruction to bigUpstream: put a string of
// SIZE bytes in FIELD, for request N.
var oversizedRE = regexp.MustCompile(`case:big:([a-z_]+):([0-9]+):([0-9]+)`)

// bigValue is the string bigUpstream puts in field for request n: size
// bytes, multi-byte runes included, distinct per request (a repeated id
// is a replay).
func bigValue(field string, size, n int) string {
	s := fmt.Sprintf("%s-%d-", field, n)
	for len(s) < size {
		s += "ab€"
	}
	for len(s) > size || !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// bigUpstream serves the simulator's answers with one identity member
// replaced as the prompt's case says: top level in a chat body and in
// every chat chunk; top level in a Messages body and in message_start's
// message in a Messages stream.
func bigUpstream(t *testing.T) string {
	t.Helper()
	s := toySim(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		if m := oversizedRE.FindSubmatch(body); m != nil && rec.Code == 200 {
			size, _ := strconv.Atoi(string(m[2]))
			n, _ := strconv.Atoi(string(m[3]))
			field, v := string(m[1]), bigValue(string(m[1]), size, n)
			set := func(obj map[string]any) {
				if inner, ok := obj["message"].(map[string]any); ok && obj["type"] == "message_start" {
					obj = inner
				}
				if _, ok := obj["choices"]; ok || obj["type"] == "message" {
					obj[field] = v
				}
			}
			if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
				var evs []string
				for _, e := range sseEvents(out) {
					if d, obj := eventData(e); obj != nil {
						set(obj)
						e = strings.Replace(e, "data: "+d, "data: "+string(jsonOf(obj)), 1)
					}
					evs = append(evs, e)
				}
				out = joinEvents(evs)
			} else {
				var obj map[string]any
				json.Unmarshal(out, &obj)
				set(obj)
				out = jsonOf(obj)
			}
		}
		writeRecorded(w, rec, out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// oversizedLeaf fetches request id's receipt and returns its leaf.
func oversizedLeaf(t *testing.T, s *server, key, id string) ([]byte, *custody.Transaction) {
	t.Helper()
	leaf, tx, err := receiptTx(t, s, key, id)
	if err != nil {
		t.Fatal(err)
	}
	return leaf, tx
}

// leafStrings are the strings of a leaf that an upstream or a client can
// set, by name.
func leafStrings(tx *custody.Transaction) map[string]string {
	m := map[string]string{"requested_model": tx.RequestedModel, "response_model": tx.ResponseModel,
		"system_fingerprint": tx.Fingerprint, "response_id": tx.ResponseID}
	for i, o := range tx.Outcomes {
		m[fmt.Sprintf("checks[%d].detail", i)] = o.Detail
	}
	return m
}

// wantBounded fails unless every leaf string is at most 256 bytes and,
// where the leaf holds the bounded form of the oversized value v, it is
// v's prefix and SHA-256: an auditor holding v can match it.
func wantBounded(t *testing.T, tx *custody.Transaction, v string) {
	t.Helper()
	sum := sha256.Sum256([]byte(v))
	digest := "...sha256:" + hex.EncodeToString(sum[:])
	for name, s := range leafStrings(tx) {
		if len(s) > 256 {
			t.Errorf("leaf %s is %d bytes: %.80q...", name, len(s), s)
		}
		if strings.HasSuffix(s, digest) {
			if p := strings.TrimSuffix(s, digest); !strings.HasPrefix(v, p) || len(p) == 0 {
				t.Errorf("leaf %s = %q: not a prefix of the value", name, s)
			}
		}
	}
}

// TestOversizedIdentityRecorded: an upstream answering with a 70 KiB id,
// model or system_fingerprint, plain and streamed, on the chat wire
// (chat front, and the Messages front translated to it) and passed
// through from a Messages upstream, is refused as the upstream's fault
// (502 upstream_error_as_success) before any byte of the answer reaches
// the client; the refusal is in the ledger, its receipt resolves, and the
// leaf holds the value as a bounded prefix and digest, never the 70 KiB.
func TestOversizedIdentityRecorded(t *testing.T) {
	t.Parallel() // its own data dir and ports
	up := bigUpstream(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`checks: {contamination_warmup: -1}
canaries: {ignore_path_changes: true}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: chatwire, kind: openai, base_url: %[1]q, timeout: 20s}
  - {name: claude, kind: anthropic, base_url: %[1]q, timeout: 20s}
models:
  - {name: m-chat, tokenizer: o200k_base, chat_template: builtin:chatml, context_window: 32768, routes: [{provider: chatwire, model: sim-1}]}
  - {name: m-claude, tokenizer: o200k_base, context_window: 32768, routes: [{provider: claude, model: sim-1}]}
`, up)
	s := startServe(t, dir, "--config", writeConfig(t, dir, cfg))
	const size = 70 << 10
	type tc struct {
		path, model, field string
		stream             bool
	}
	var cases []tc
	for _, stream := range []bool{false, true} {
		for _, f := range []string{"id", "model", "system_fingerprint"} {
			cases = append(cases, tc{"/v1/chat/completions", "m-chat", f, stream})
		}
		cases = append(cases, tc{"/v1/messages", "m-chat", "model", stream}, tc{"/v1/messages", "m-claude", "id", stream})
	}
	for n, c := range cases {
		name := fmt.Sprintf("%s/%s/%s/stream=%v", c.path, c.model, c.field, c.stream)
		t.Run(name, func(t *testing.T) {
			t.Parallel() // its own request and leaf on the shared server
			body := attackBody(c.path, c.model, fmt.Sprintf("big:%s:%d", c.field, size), n, c.stream)
			status, out, checks, hdr := exchangeAt(t, s.URL, c.path, "sk-acme", body)
			if status != 502 || !strings.Contains(checks, "shape=upstream_error_as_success") {
				t.Errorf("status %d, checks %q: want 502 shape=upstream_error_as_success; %.300s", status, checks, out)
			}
			if strings.Contains(out, "data:") || strings.Contains(out, "event:") || strings.Contains(out, "sim-1") || len(out) > 2048 {
				t.Errorf("the client read the answer (or the value) before the refusal: %d bytes: %.300s", len(out), out)
			}
			if c.path == "/v1/messages" {
				if !strings.Contains(out, `"type":"error"`) {
					t.Errorf("not the Messages error shape: %.300s", out)
				}
			} else if !strings.Contains(out, `"code":"upstream_error_as_success"`) {
				t.Errorf("not the chat error shape with its code: %.300s", out)
			}
			for k, vs := range hdr {
				for _, v := range vs {
					if len(v) > 512 {
						t.Errorf("header %s is %d bytes", k, len(v))
					}
				}
			}
			id := hdr.Get("Custody-Request-Id")
			if hdr.Get("Custody-Receipt") == "" {
				t.Errorf("no Custody-Receipt: the refusal was not recorded")
			}
			leaf, tx := oversizedLeaf(t, s, "sk-acme", id)
			v := bigValue(c.field, size, n)
			t.Logf("refused, recorded: leaf %d bytes, %s %q", len(leaf), c.field, map[string]string{"id": tx.ResponseID, "model": tx.ResponseModel, "system_fingerprint": tx.Fingerprint}[c.field])
			if bytes.Contains(leaf, []byte(v[len(v)-300:])) || len(leaf) > 16<<10 {
				t.Errorf("the leaf (%d bytes) holds the oversized value", len(leaf))
			}
			if tx.Code != custody.CodeUpstreamErrorAsSuccess || tx.Verdict != custody.Rejected || tx.Status != 502 {
				t.Errorf("the leaf says %s %s %d, outcomes %+v", tx.Verdict, tx.Code, tx.Status, tx.Outcomes)
			}
			wantBounded(t, tx, v)
			got := map[string]string{"id": tx.ResponseID, "model": tx.ResponseModel, "system_fingerprint": tx.Fingerprint}[c.field]
			sum := sha256.Sum256([]byte(v))
			if !strings.HasSuffix(got, "...sha256:"+hex.EncodeToString(sum[:])) {
				t.Errorf("leaf %s = %q: want the value's prefix and digest", c.field, got)
			}
		})
	}

	// At the limit an identity string is served and recorded as it came;
	// a model mismatch whose detail would run past the limit is recorded
	// with its detail bounded.
	t.Run("edge", func(t *testing.T) {
		t.Parallel() // its own request and leaf on the shared server
		n := len(cases)
		body := attackBody("/v1/chat/completions", "m-chat", "big:id:256", n, false)
		status, out, checks, hdr := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", body)
		if status != 200 || hdr.Get("Custody-Verdict") != "verified" {
			t.Fatalf("a 256-byte id: %d %s %.300s", status, checks, out)
		}
		_, tx := oversizedLeaf(t, s, "sk-acme", hdr.Get("Custody-Request-Id"))
		if v := bigValue("id", 256, n); tx.ResponseID != v {
			t.Errorf("leaf response_id = %q, want %q", tx.ResponseID, v)
		}
		n++
		body = attackBody("/v1/chat/completions", "m-chat", "big:model:250", n, false)
		status, out, checks, hdr = exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", body)
		if status != 502 || !strings.Contains(checks, "model=model_mismatch") {
			t.Fatalf("a 250-byte foreign model: %d %s %.300s", status, checks, out)
		}
		_, tx = oversizedLeaf(t, s, "sk-acme", hdr.Get("Custody-Request-Id"))
		v := bigValue("model", 250, n)
		if tx.ResponseModel != v {
			t.Errorf("leaf response_model = %q, want %q", tx.ResponseModel, v)
		}
		wantBounded(t, tx, "")
		for _, o := range tx.Outcomes {
			if o.Check == custody.CheckModel && !strings.Contains(o.Detail, "...sha256:") {
				t.Errorf("model_mismatch detail not bounded: %q", o.Detail)
			}
		}
	})

	// A client's own requested model of 70 KiB is refused and recorded,
	// bounded.
	t.Run("requested", func(t *testing.T) {
		t.Parallel() // its own request and leaf on the shared server
		model := bigValue("requested", size, 0)
		status, out, _, hdr := exchangeAt(t, s.URL, "/v1/chat/completions", "sk-acme", attackBody("/v1/chat/completions", model, "none", 0, false))
		if status < 400 || status >= 500 || len(out) > 2048 {
			t.Fatalf("a 70 KiB requested model: %d %d bytes %.300s", status, len(out), out)
		}
		leaf, tx := oversizedLeaf(t, s, "sk-acme", hdr.Get("Custody-Request-Id"))
		if len(leaf) > 16<<10 {
			t.Errorf("the leaf is %d bytes", len(leaf))
		}
		wantBounded(t, tx, model)
		sum := sha256.Sum256([]byte(model))
		if !strings.HasSuffix(tx.RequestedModel, "...sha256:"+hex.EncodeToString(sum[:])) {
			t.Errorf("leaf requested_model = %q, want the model's prefix and digest", tx.RequestedModel)
		}
	})
}
