//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// evalSuite is a two-case suite: the honest simulator passes both; the
// snapshot that snapshot-drift serves lists the codes last first, and
// fails the first.
const evalSuite = `{"id": "codes-in-order", "prompt": "Repeat the codes in order: alpha1111 bravo2222 charlie3333", "max_tokens": 8, "temperature": 0, "assert": {"regex": "^alpha1111 bravo2222 charlie3333"}}
{"id": "greeting", "prompt": "Say hello and quote zulu9999", "assert": {"contains": "zulu9999", "max_latency": "30s"}}
`

// switchable is an upstream whose backend the test flips, as an alias
// that moves to a new snapshot behind the same URL: a true path change.
type switchable struct {
	target atomic.Pointer[url.URL]
	srv    *httptest.Server
}

func newSwitchable(t *testing.T, to string) *switchable {
	s := &switchable{}
	s.to(t, to)
	s.srv = httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(s.target.Load())
		r.Out.URL.Path = strings.TrimSuffix(s.target.Load().Path, "/v1") + r.In.URL.Path
	}})
	t.Cleanup(s.srv.Close)
	return s
}

func (s *switchable) to(t *testing.T, base string) {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	s.target.Store(u)
}

func evalConfig(upstream, suite string) string {
	return `
admin_keys: [adm-test]
tenants:
  - {id: acme, api_keys: [sk-acme], policy: default, use_cases: {code: strict, locked: locked}}
providers:
  - {name: up, kind: openai, base_url: "` + upstream + `"}
  - {name: backup, kind: sim, sim: {models: [sim-1-0827]}}
models:
  - name: sim-1
    context_window: 32768
    routes:
      - {provider: up, model: sim-1-0827, accept: [sim-1-0827, sim-1-0901]}
      - {provider: backup, model: sim-1-0827}
policies:
  - {name: default, fallback: allow}
  - {name: strict, fallback: allow, require_evals: [support]}
  - {name: locked, fallback: deny, require_evals: [support]}
evals:
  - {name: support, file: "` + suite + `", rate: 20}
`
}

// routeEval is the suite's state on route (MODEL/PROVIDER) per the admin API.
func routeEval(t *testing.T, s *server, route string) (passed bool, last map[string]any) {
	t.Helper()
	resp, body := get(t, s.URL+"/v1/custody/evals", "adm-test")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/custody/evals: %d %s", resp.StatusCode, body)
	}
	var st struct {
		Data []struct {
			Route  string `json:"route"`
			Suites []struct {
				Passed bool           `json:"passed"`
				Last   map[string]any `json:"last"`
			} `json:"suites"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Data {
		if r.Route == route && len(r.Suites) == 1 {
			return r.Suites[0].Passed, r.Suites[0].Last
		}
	}
	t.Fatalf("no suite on route %s: %s", route, body)
	return false, nil
}

// TestEvalSuiteFollowsThePath is issue 20's integration test, on the real
// binary: the suite passes on the honest upstream and is pinned; the
// upstream moves to the snapshot-drift snapshot behind the same URL; the
// first request on the new path triggers a re-run within seconds, which
// fails; the policy that requires the suite falls back (or, forbidden to,
// refuses 503 route_quarantined naming the suite) while the policy that
// does not keeps serving from the drifted route; both runs are in the
// ledger and on the timeline; custody eval exits 0 on the honest upstream
// and 1 on the drifted one.
func TestEvalSuiteFollowsThePath(t *testing.T) {
	t.Parallel() // its own data dir and ports
	honest := startSim(t, "--model", "sim-1-0827")
	drifted := startSim(t, "--model", "sim-1-0827", "--fault", "snapshot-drift")
	up := newSwitchable(t, honest)
	dir := t.TempDir()
	suite := filepath.Join(dir, "support.jsonl")
	if err := os.WriteFile(suite, []byte(evalSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, evalConfig(up.srv.URL+"/v1", suite))

	// custody eval on the honest upstream: a table, exit 0; --pin records
	// the baseline that serve then compares with.
	code, out, errOut := runCmd(t, dir, "eval", "--config", cfg, "--route", "sim-1/up", "--pin")
	if code != 0 || !strings.Contains(out, "support  sim-1/up  PASS    2/2") || !strings.Contains(out, "pinned now") {
		t.Fatalf("custody eval on the honest upstream: exit %d\n%s\n%s", code, out, errOut)
	}

	s := startServe(t, dir, "--config", cfg)
	ask := func(useCase string) (*http.Response, string) {
		return post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "summarise the meeting", false), "Custody-Use-Case", useCase)
	}
	// Until the start-up run passes, the policies that require the suite
	// do not use the routes; then every policy is served by the primary.
	deadline := time.Now().Add(30 * time.Second)
	for {
		upOK, _ := routeEval(t, s, "sim-1/up")
		backupOK, _ := routeEval(t, s, "sim-1/backup")
		if upOK && backupOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the suite never passed on the honest routes\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, last := routeEval(t, s, "sim-1/up")
	if b, _ := last["baseline"].(map[string]any); last["trigger"] != "start" || b == nil || b["pinned"] != true || len(last["regressions"].([]any)) != 0 {
		t.Errorf("the start-up run does not compare with the pinned baseline: %v", last)
	}
	passedLeaf, _ := last["ledger_id"].(string)
	for _, uc := range []string{"", "code", "locked"} {
		if resp, body := ask(uc); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "up" {
			t.Fatalf("honest path, use case %q: %d %s %.200s", uc, resp.StatusCode, resp.Header.Get("Custody-Provider"), body)
		}
	}

	// The alias moves. The first request on the new path is served (its
	// policy requires nothing) and triggers the re-run.
	up.to(t, drifted)
	moved := time.Now()
	if resp, body := ask(""); resp.StatusCode != 200 || resp.Header.Get("Custody-Model") != "sim-1-0901" {
		t.Fatalf("the first request on the new path: %d %s %.200s", resp.StatusCode, resp.Header.Get("Custody-Model"), body)
	}
	var rerun time.Duration
	for {
		_, last = routeEval(t, s, "sim-1/up")
		if last != nil && last["trigger"] == "path_change" {
			rerun = time.Since(moved)
			break
		}
		if time.Since(moved) > 20*time.Second {
			t.Fatalf("no re-run after the path change: %v\n%s", last, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("re-run finished %s after the first request on the new path", rerun)
	if rerun > 10*time.Second {
		t.Errorf("the re-run took %s", rerun)
	}
	passed, last := routeEval(t, s, "sim-1/up")
	path, _ := last["path"].(map[string]any)
	if passed || last["ok"] != false || last["passed"] != 1.0 || path["model"] != "sim-1-0901" || !strings.Contains(jsonString(last["regressions"]), "codes-in-order") {
		t.Fatalf("the drifted run: passed %v, %v", passed, last)
	}
	failedLeaf, _ := last["ledger_id"].(string)

	// The policy that does not require the suite keeps the drifted route;
	// the one that does falls back to the backup, whose path passed; the
	// one that may not fall back refuses, naming the suite.
	if resp, body := ask(""); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "up" {
		t.Errorf("default policy: %d %s %.200s", resp.StatusCode, resp.Header.Get("Custody-Provider"), body)
	}
	if resp, body := ask("code"); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "backup" || resp.Header.Get("Custody-Fallback") != "up>backup" {
		t.Errorf("strict policy: %d %s %s %.200s", resp.StatusCode, resp.Header.Get("Custody-Provider"), resp.Header.Get("Custody-Fallback"), body)
	}
	if resp, body := ask("locked"); resp.StatusCode != 503 || outcome(503, body) != "route_quarantined" || !strings.Contains(body, "evaluation suite support") {
		t.Errorf("locked policy: %d %s", resp.StatusCode, body)
	}

	// Both runs are leaves of the ledger and events of the timeline.
	for _, tc := range []struct{ id, decision string }{{passedLeaf, "passed"}, {failedLeaf, "failed"}} {
		// The index is written in the background: wait for the record.
		var resp *http.Response
		var body string
		waitFor(t, 10*time.Second, func() bool {
			resp, body = get(t, s.URL+"/v1/custody/records?request_id="+tc.id, "adm-test")
			return resp.StatusCode != 200 || strings.Contains(body, tc.id)
		}, "the "+tc.decision+" run's record in the index")
		var recs struct {
			Data []struct {
				Endpoint  string `json:"endpoint"`
				Tenant    string `json:"tenant"`
				Decision  string `json:"decision"`
				Model     string `json:"response_model"`
				LeafIndex int64
				Checks    []struct {
					Check  string `json:"check"`
					Detail string `json:"detail"`
				} `json:"checks"`
			} `json:"data"`
		}
		json.Unmarshal([]byte(body), &recs)
		if resp.StatusCode != 200 || tc.id == "" || len(recs.Data) != 1 {
			t.Fatalf("the %s run's leaf %q: %d %s", tc.decision, tc.id, resp.StatusCode, body)
		}
		r := recs.Data[0]
		if r.Endpoint != "custody.eval" || r.Tenant != "custody:eval" || r.Decision != tc.decision || r.LeafIndex < 0 || len(r.Checks) != 3 ||
			!strings.HasPrefix(r.Checks[0].Detail, "suite=support sha256=") || !strings.HasPrefix(r.Checks[1].Detail, "codes-in-order ") {
			t.Errorf("the %s run's leaf: %s", tc.decision, body)
		}
	}
	waitFor(t, 10*time.Second, func() bool {
		_, body := get(t, s.URL+"/v1/custody/events?type=eval", "adm-test")
		return strings.Contains(body, `"passed suite=support`) && strings.Contains(body, `"failed suite=support`) &&
			strings.Contains(body, "trigger=path_change") && strings.Contains(body, "failing=codes-in-order")
	}, "both runs on the timeline")
	if _, body := get(t, s.URL+"/metrics", ""); !strings.Contains(body, `custody_eval_pass_ratio{route="sim-1/up",suite="support"} 0.5`) ||
		!strings.Contains(body, `custody_eval_pass_ratio{route="sim-1/backup",suite="support"} 1`) {
		t.Errorf("custody_eval_pass_ratio:\n%s", grepLines(body, "custody_eval"))
	}

	// custody eval on the drifted upstream: the table names the failing
	// case, exit 1.
	code, out, errOut = runCmd(t, dir, "eval", "--config", cfg)
	if code != 1 || !strings.Contains(out, "sim-1/up      FAIL    1/2") || !strings.Contains(out, "sim-1/backup  PASS    2/2") ||
		!strings.Contains(out, "support sim-1/up: case codes-in-order failed: regex does not match") {
		t.Errorf("custody eval on the drifted upstream: exit %d\n%s\n%s", code, out, errOut)
	}

	// The upstream is put back on the honest snapshot: a path already
	// known, so nothing triggers; the operator re-qualifies the route
	// through the admin API, and the locked policy is served again.
	up.to(t, honest)
	if resp, body := post(t, s.URL+"/v1/custody/evals/run", "sk-acme", `{"route":"sim-1/up"}`); resp.StatusCode != 403 {
		t.Errorf("a tenant ran the suites: %d %s", resp.StatusCode, body)
	}
	resp, body := post(t, s.URL+"/v1/custody/evals/run", "adm-test", `{"route":"sim-1/up"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"trigger":"demand"`) || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("POST /v1/custody/evals/run: %d %s", resp.StatusCode, body)
	}
	if resp, body := ask("locked"); resp.StatusCode != 200 || resp.Header.Get("Custody-Provider") != "up" {
		t.Errorf("locked policy after re-qualification: %d %.200s", resp.StatusCode, body)
	}
	if resp, body := post(t, s.URL+"/v1/custody/evals/run", "adm-test", `{"suite":"nope"}`); resp.StatusCode != 404 || outcome(404, body) != "not_found" {
		t.Errorf("unknown suite: %d %s", resp.StatusCode, body)
	}
	s.stop()
	// No case or answer text anywhere at rest.
	filepath.Walk(filepath.Join(dir, "custody-data"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, text := range []string{"Repeat the codes", "alpha1111", "zulu9999", "Say hello"} {
			if strings.Contains(string(b), text) {
				t.Errorf("%s holds case text %q", p, text)
			}
		}
		return nil
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestEvalCommand: custody eval exits 0 on the honest simulator and 1 on
// the faults that serve another snapshot under the route (snapshot-drift,
// with the moved alias accepted, and model-lie, which no single-response
// check sees); usage errors exit 2; a bad suite file refuses serve at
// start, naming its key, file and line.
func TestEvalCommand(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	suite := filepath.Join(dir, "support.jsonl")
	if err := os.WriteFile(suite, []byte(evalSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(fault string) string {
		return writeConfig(t, dir, `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: up, kind: sim, sim: {models: [sim-1-0827], faults: [`+fault+`]}}]
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: up, model: sim-1-0827, accept: [sim-1-0827, sim-1-0901]}]}
evals: [{name: support, file: "`+suite+`", rate: 20}]
`)
	}
	for _, tc := range []struct {
		fault string
		code  int
	}{{"", 0}, {"snapshot-drift", 1}, {"model-lie", 1}} {
		code, out, errOut := runCmd(t, dir, "eval", "--config", config(tc.fault), "--suite", "support")
		if code != tc.code || !strings.Contains(out, "SUITE") {
			t.Errorf("fault %q: exit %d, want %d\n%s\n%s", tc.fault, code, tc.code, out, errOut)
		}
		if tc.code == 1 && !strings.Contains(out, "case codes-in-order failed") {
			t.Errorf("fault %q: the table does not name the failing case:\n%s", tc.fault, out)
		}
	}
	cfg := config("")
	if code, _, errOut := runCmd(t, dir, "eval", "--config", cfg, "--suite", "nope"); code != 2 || !strings.Contains(errOut, "suites: support") {
		t.Errorf("unknown suite: %d %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, dir, "eval", "--config", cfg, "--route", "nope/none"); code != 2 || !strings.Contains(errOut, "sim-1/up") {
		t.Errorf("unknown route: %d %s", code, errOut)
	}
	noEvals := writeConfig(t, dir, `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: up, kind: sim}]
models: [{name: sim-1, context_window: 32768, routes: [{provider: up}]}]
`)
	if code, _, errOut := runCmd(t, dir, "eval", "--config", noEvals); code != 1 || !strings.Contains(errOut, "no evals") {
		t.Errorf("no evals: %d %s", code, errOut)
	}

	if err := os.WriteFile(suite, []byte(evalSuite+`{"id": "bad", "prompt": "p", "assert": {"contians": "x"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, dir, "serve", "--config", config(""), "--listen", "127.0.0.1:0")
	if want := "evals[0].file: bad evaluation suite:\n" + suite + `:3: case bad: assert: unknown member "contians"`; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("a bad suite: exit %d, want 1 and %q in\n%s", code, want, errOut)
	}
}

// TestEvalReload: a SIGHUP that leaves a suite and its routes as they were
// keeps their pass state, so that the policy requiring the suite serves
// across the reload without a gap; a reload with a bad suite line is
// refused and the old config stays.
func TestEvalReload(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	suite := filepath.Join(dir, "support.jsonl")
	if err := os.WriteFile(suite, []byte(evalSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	const body = `
admin_keys: [adm-test]
tenants: [{id: acme, api_keys: [sk-acme], policy: locked}]
providers: [{name: up, kind: sim, sim: {models: [sim-1-0827]}}]
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: up, model: sim-1-0827}]}
policies:
  - {name: locked, fallback: deny, require_evals: [support]}
evals: [{name: support, file: "SUITE", rate: 20, interval: 300ms}]
`
	cfg := writeConfig(t, dir, strings.Replace(body, "SUITE", suite, 1))
	s := startServe(t, dir, "--config", cfg)
	waitFor(t, 30*time.Second, func() bool { ok, _ := routeEval(t, s, "sim-1/up"); return ok }, "the start-up run")
	reloads := 0
	hup := func() {
		reloads++
		s.cmd.Process.Signal(syscall.SIGHUP)
		waitFor(t, 20*time.Second, func() bool { return strings.Count(s.stderr.String(), `"msg":"config reload`) >= reloads }, "the reload")
	}
	// A new tenant, the same suite and route.
	os.WriteFile(cfg, []byte(strings.Replace(body, "SUITE", suite, 1)+"\n# reloaded\n"), 0o600)
	hup()
	if resp, b := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "hello", false)); resp.StatusCode != 200 {
		t.Errorf("right after the reload: %d %s", resp.StatusCode, b)
	}
	if !strings.Contains(s.stderr.String(), "config reloaded") || strings.Count(s.stderr.String(), `"trigger":"start"`) != 1 {
		t.Errorf("the unchanged suite ran again at the reload:\n%s", s.stderr)
	}
	os.WriteFile(suite, []byte(`{"id": "x", "prompt": "p"}`+"\n"), 0o600)
	hup()
	if !strings.Contains(s.stderr.String(), "config reload refused") || !strings.Contains(s.stderr.String(), "support.jsonl:1: case x: assert is required") {
		t.Errorf("a bad suite was not refused on reload:\n%s", s.stderr)
	}
	if resp, b := post(t, s.URL+"/v1/chat/completions", "sk-acme", chatBody("sim-1", "hello", false)); resp.StatusCode != 200 {
		t.Errorf("after a refused reload: %d %s\n%s", resp.StatusCode, b, s.stderr)
	}
	// The runner in force goes on after the refused reload: its schedule
	// still runs (a stopped runner would leave the pass state frozen).
	runs := strings.Count(s.stderr.String(), `"msg":"eval"`)
	waitFor(t, 10*time.Second, func() bool { return strings.Count(s.stderr.String(), `"msg":"eval"`) > runs+1 }, "scheduled runs after the refused reload")
}
