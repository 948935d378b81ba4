package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/internal/openapi"
)

// adminConfig has client traffic's routes and a route whose upstream
// lies about its model: its canaries fail, and it is quarantined. Two
// evaluation suites cover sim-1/up: smoke passes (and a policy requires
// it), picky fails its case "never".
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
policies:
  - {name: summaries, require_evals: [smoke]}
evals:
  - {name: smoke, file: SMOKE, routes: [sim-1/up], rate: 50}
  - {name: picky, file: PICKY, routes: [sim-1/up], rate: 50}
`

const (
	smokeSuite = `{"id": "greeting", "prompt": "Say hello and quote zulu9999", "assert": {"contains": "zulu9999"}}
`
	pickySuite = `{"id": "never", "prompt": "Say hello", "assert": {"equals": "a sentence no simulator says"}}
`
)

// TestAdminAPIMatchesOpenAPI calls every admin endpoint of the real
// binary, after client traffic, canary runs and a quarantine, and
// validates each answer (and its errors) against the document the
// gateway serves at /v1/custody/openapi.json. Every documented path must
// be called.
func TestAdminAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	smoke, picky := filepath.Join(dir, "smoke.jsonl"), filepath.Join(dir, "picky.jsonl")
	os.WriteFile(smoke, []byte(smokeSuite), 0o600)
	os.WriteFile(picky, []byte(pickySuite), 0o600)
	s := startServe(t, dir, "--config", writeConfig(t, dir, strings.NewReplacer("SMOKE", smoke, "PICKY", picky).Replace(adminConfig)))
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
	// Wait for the liar's route to be quarantined, the traffic indexed
	// and both suites' start-up runs on the timeline.
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
		_, evals := get(t, s.URL+"/v1/custody/events?type=eval", "adm-test")
		if quarantined && strings.Contains(recs, ids[0]) && strings.Count(evals, `"type":"eval"`) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no quarantine with its event, traffic not indexed, or no eval runs:\n%s\n%s\n%s", b, recs, evals)
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
	check("GET", "/v1/custody/contract", "adm-test", "", 200)
	check("GET", "/v1/custody/contract?buckets=6", "adm-test", "", 200)
	check("GET", "/v1/custody/log", "adm-test", "", 200)
	check("GET", "/v1/custody/canaries", "adm-test", "", 200)
	check("POST", "/v1/custody/canaries/reenroll", "adm-test", `{"route":"sim-1/up"}`, 200)
	check("GET", "/v1/custody/events?type=eval", "adm-test", "", 200)
	evalState := check("GET", "/v1/custody/evals", "adm-test", "", 200)
	run := check("POST", "/v1/custody/evals/run", "adm-test", `{"suite":"picky","route":"sim-1/up"}`, 200)
	check("POST", "/v1/custody/evals/run", "adm-test", `{"suite":"smoke","pin":true}`, 200)
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
	check("GET", "/v1/custody/evals", "", "", 401)
	check("GET", "/v1/custody/evals", "sk-acme", "", 403)
	check("POST", "/v1/custody/evals/run", "", `{}`, 401)
	check("POST", "/v1/custody/evals/run", "adm-test", `{"suite":`, 400)
	check("POST", "/v1/custody/evals/run", "adm-test", `{"suite":"nope"}`, 404)
	for _, p := range doc.Paths() {
		if !called[p] {
			t.Errorf("documented path %s was not called with success", p)
		}
	}
	// Every admin path mounted anywhere in the module (the gateway, serve's
	// mounts), and every one the console reads, is in the document (and
	// so, by the loop above, called).
	for _, p := range custodyPaths(t, "../..") {
		if !documented(doc.Paths(), p) {
			t.Errorf("%s is in the sources (mounted or read) but not in adminapi/openapi.json", p)
		}
	}
	// The evals' answers say what the console's panel shows: the pass
	// state, the policies requiring a suite, a failing run's case by id
	// with the assertion that failed.
	var st struct {
		Data []struct {
			Route  string `json:"route"`
			Suites []struct {
				Suite      string   `json:"suite"`
				Passed     bool     `json:"passed"`
				RequiredBy []string `json:"required_by"`
				Last       *struct {
					OK      bool     `json:"ok"`
					Failing []string `json:"failing"`
					Cases   []struct{ ID, Reason string }
				} `json:"last"`
			} `json:"suites"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(evalState), &st)
	got := map[string]string{}
	for _, r := range st.Data {
		for _, su := range r.Suites {
			if su.Last == nil {
				t.Errorf("%s on %s has no last run: %s", su.Suite, r.Route, evalState)
				continue
			}
			got[r.Route+" "+su.Suite] = fmt.Sprintf("passed=%v ok=%v required_by=%v failing=%v", su.Passed, su.Last.OK, su.RequiredBy, su.Last.Failing)
			if !su.Last.OK && (len(su.Last.Cases) != 1 || su.Last.Cases[0].Reason == "") {
				t.Errorf("a failing case without its reason: %+v", su.Last.Cases)
			}
		}
	}
	want := map[string]string{
		"sim-1/up smoke": "passed=true ok=true required_by=[summaries] failing=[]",
		"sim-1/up picky": "passed=false ok=false required_by=[] failing=[never]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GET /v1/custody/evals: got %v, want %v", got, want)
	}
	if !strings.Contains(run, `"trigger":"demand"`) || !strings.Contains(run, `"failing":["never"]`) {
		t.Errorf("POST /v1/custody/evals/run: %s", run)
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

// custodyPaths are the /v1/custody/ paths written in the Go sources
// under root (tests and testdata excluded): string literals that start
// with one, a pattern's method ("GET ") dropped. A literal ending in "/"
// is a prefix (of a path with a parameter).
func custodyPaths(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if _, p, ok := strings.Cut(v, " "); ok && strings.HasPrefix(p, "/") {
				v = p
			}
			if strings.HasPrefix(v, "/v1/custody/") && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
			return true
		})
	}
	if len(out) < 8 {
		t.Fatalf("found only %v in the sources: the scan is broken", out)
	}
	return out
}

// documented reports whether the source path p (see custodyPaths) is one
// of the document's paths.
func documented(paths []string, p string) bool {
	norm := func(s string) string {
		segs := strings.Split(s, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
				segs[i] = "{}"
			}
		}
		return strings.Join(segs, "/")
	}
	for _, d := range paths {
		if norm(d) == norm(p) || strings.HasSuffix(p, "/") && strings.HasPrefix(norm(d), p+"{}") && strings.Count(d, "/") == strings.Count(p, "/") {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
