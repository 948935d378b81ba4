package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/openapi"
)

// adminConfig has client traffic's routes and a route whose upstream
// lies about its model: its canaries fail, and it is quarantined.
const adminConfig = `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme]}, {id: beta, api_keys: [sk-beta]}]
canaries: {interval: 300ms, probes: [echo]}
providers:
  - {name: up, kind: sim, request_id_echo: x-request-id}
  - {name: liar, kind: sim, request_id_echo: x-request-id, sim: {faults: [id-echo-mismatch]}}
models:
  - {name: sim-1, context_window: 8192, routes: [{provider: up}]}
  - {name: lie-1, context_window: 8192, routes: [{provider: liar, model: sim-1}]}
`

// TestAdminAPIMatchesOpenAPI calls every admin endpoint of the real
// binary, after client traffic, canary runs and a quarantine, and
// validates each answer (and its errors) against the document the
// gateway serves at /v1/custody/openapi.json. Every documented path must
// be called.
func TestAdminAPIMatchesOpenAPI(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, adminConfig))
	resp, body := get(t, s.URL+"/v1/custody/openapi.json", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	doc, err := openapi.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, c := range []struct{ key, model string }{{"sk-acme", "sim-1"}, {"sk-beta", "sim-1"}, {"sk-acme", "lie-1"}, {"sk-acme", "no-such-model"}} {
		r, b := post(t, s.URL+"/v1/chat/completions", c.key, `{"model":"`+c.model+`","messages":[{"role":"user","content":"hello `+string(rune('a'+i))+`"}]}`)
		if i < 2 && r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.model, r.StatusCode, b)
		}
		ids = append(ids, r.Header.Get("Custody-Request-Id"))
	}
	// Wait for the liar's route to be quarantined and the traffic indexed.
	var canaries struct {
		Data []struct {
			Route        string
			Quarantined  bool
			OutOfService *struct{ Since *time.Time } `json:"out_of_service"`
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, b := get(t, s.URL+"/v1/custody/canaries", "adm-test")
		json.Unmarshal([]byte(b), &canaries)
		_, recs := get(t, s.URL+"/v1/custody/records?request_id="+ids[0], "adm-test")
		quarantined := false
		for _, c := range canaries.Data {
			quarantined = quarantined || (c.Route == "lie-1/liar" && c.Quarantined && c.OutOfService != nil && c.OutOfService.Since != nil)
		}
		if quarantined && strings.Contains(recs, ids[0]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no quarantine with its event, or traffic not indexed:\n%s\n%s", b, recs)
		}
	}

	called := map[string]bool{}
	check := func(method, path, key, reqBody string, wantStatus int) string {
		t.Helper()
		u := s.URL + path
		var r *http.Response
		var b string
		if method == "POST" {
			r, b = post(t, u, key, reqBody)
		} else {
			r, b = get(t, u, key)
		}
		if r.StatusCode != wantStatus {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.StatusCode, wantStatus, b)
		}
		p, _, _ := strings.Cut(path, "?")
		schema, err := doc.Response(method, p, r.StatusCode)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.ValidateJSON(schema, []byte(b)); err != nil {
			t.Errorf("%s %s (%d) does not match the OpenAPI document: %v\n%s", method, path, r.StatusCode, err, b)
		}
		if r.StatusCode == 200 {
			for _, tmpl := range doc.Paths() {
				if strings.Count(tmpl, "/") == strings.Count(p, "/") && (tmpl == p || strings.HasPrefix(tmpl, "/v1/custody/receipts/") && strings.HasPrefix(p, "/v1/custody/receipts/")) {
					called[tmpl] = true
				}
			}
		}
		return b
	}
	next := func(b string) string {
		var page struct {
			NextBefore any `json:"next_before"`
		}
		json.Unmarshal([]byte(b), &page)
		if page.NextBefore == nil {
			t.Fatalf("a full page has no next_before: %s", b)
		}
		return url.QueryEscape(strings.Trim(mustJSON(page.NextBefore), `"`))
	}
	check("GET", "/v1/custody/openapi.json", "", "", 200)
	check("GET", "/v1/custody/records", "adm-test", "", 200)
	page := check("GET", "/v1/custody/records?limit=1", "adm-test", "", 200)
	check("GET", "/v1/custody/records?limit=1&before="+next(page), "adm-test", "", 200)
	check("GET", "/v1/custody/records?verdict=rejected&code=request_id_mismatch", "adm-test", "", 200)
	check("GET", "/v1/custody/events", "adm-test", "", 200)
	page = check("GET", "/v1/custody/events?type=canary&limit=1", "adm-test", "", 200)
	check("GET", "/v1/custody/events?type=canary&limit=1&before="+next(page), "adm-test", "", 200)
	check("GET", "/v1/custody/events?route=lie-1/liar", "adm-test", "", 200)
	check("GET", "/v1/custody/stats", "adm-test", "", 200)
	check("GET", "/v1/custody/stats?buckets=6&since="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)), "adm-test", "", 200)
	for _, by := range []string{"tenant", "code", "route", "model"} {
		check("GET", "/v1/custody/breakdown?by="+by, "adm-test", "", 200)
	}
	check("GET", "/v1/custody/log", "adm-test", "", 200)
	check("GET", "/v1/custody/canaries", "adm-test", "", 200)
	check("POST", "/v1/custody/canaries/reenroll", "adm-test", `{"route":"sim-1/up"}`, 200)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if r, b := get(t, s.URL+"/v1/custody/receipts/"+ids[0], "sk-acme"); r.StatusCode == 200 && strings.Contains(b, "inclusion_proof") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no receipt with an inclusion proof")
		}
	}
	check("GET", "/v1/custody/receipts/"+ids[0], "sk-acme", "", 200)
	// Errors are documented too.
	for _, p := range []string{"/v1/custody/records", "/v1/custody/events", "/v1/custody/stats", "/v1/custody/breakdown?by=code", "/v1/custody/log", "/v1/custody/canaries"} {
		check("GET", p, "", "", 401) // the console's in-process way in is not reachable from the network
	}
	check("GET", "/v1/custody/records", "sk-acme", "", 403)
	check("GET", "/v1/custody/records?since=yesterday", "adm-test", "", 400)
	check("GET", "/v1/custody/records?before=no-such-id", "adm-test", "", 400)
	check("GET", "/v1/custody/events?before=999999", "adm-test", "", 400)
	check("GET", "/v1/custody/events?type=weather", "adm-test", "", 400)
	check("GET", "/v1/custody/breakdown?by=colour", "adm-test", "", 400)
	check("GET", "/v1/custody/stats?buckets=5000", "adm-test", "", 400)
	check("GET", "/v1/custody/receipts/"+ids[0], "sk-beta", "", 404)
	for _, p := range doc.Paths() {
		if !called[p] {
			t.Errorf("documented path %s was not called with success", p)
		}
	}
	// The quarantine's event says why, readably: the route in its own
	// column, each word once.
	evs := check("GET", "/v1/custody/events?type=canary&route=lie-1/liar", "adm-test", "", 200)
	var list struct {
		Data []struct{ Provider, Route, Detail string }
	}
	json.Unmarshal([]byte(evs), &list)
	if len(list.Data) == 0 {
		t.Fatalf("no canary events for the route: %s", evs)
	}
	for _, e := range list.Data {
		if e.Route != "lie-1/liar" || e.Provider != "liar" || strings.Contains(e.Detail, "echo echo") {
			t.Errorf("canary event %+v: want route lie-1/liar, provider liar, no repeated words", e)
		}
	}
	// A canary failure and the quarantine are logged at WARN.
	logs := s.stderr.String()
	for _, kind := range []string{"canary_failure", "canary_quarantined"} {
		found := false
		for _, l := range strings.Split(logs, "\n") {
			found = found || (strings.Contains(l, kind) && strings.Contains(l, "WARN"))
		}
		if !found {
			t.Errorf("no WARN line for %s in the log:\n%s", kind, logs)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
