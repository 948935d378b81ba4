package console

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"github.com/custody-gateway/custody/adminapi"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func TestSessionTokens(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := newSessions([]byte("k1"), time.Hour, clock)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newSessions([]byte("k2"), time.Hour, clock)
	tok, exp := s.issue()
	if !exp.Equal(now.Add(time.Hour)) {
		t.Errorf("expiry %v", exp)
	}
	flip := []byte(tok)
	flip[len(flip)-2] ^= 1
	later, _ := newSessions([]byte("k1"), time.Hour, func() time.Time { return now.Add(time.Hour) })
	for _, c := range []struct {
		name string
		s    *sessions
		tok  string
		ok   bool
	}{
		{"issued", s, tok, true},
		{"tampered mac", s, string(flip), false},
		{"other key", other, tok, false},
		{"expired", later, tok, false},
		{"empty", s, "", false},
		{"no prefix", s, strings.TrimPrefix(tok, tokenPrefix), false},
		{"overlong", s, tok + strings.Repeat("A", maxToken), false},
		{"the admin key", s, "adm-1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.valid(c.tok); got != c.ok {
				t.Errorf("valid = %v", got)
			}
		})
	}
	// Base64 has spare bits in the MAC's last character: a variant that
	// decodes to the same bytes is not the token.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	variant := tok[:len(tok)-1] + string(alphabet[last^1])
	if s.valid(variant) {
		t.Errorf("accepted %q, a non-canonical variant of %q", variant, tok)
	}
	tok2, _ := s.issue()
	if tok2 == tok || s.csrf(tok) == s.csrf(tok2) {
		t.Error("two sessions share a token or a CSRF token")
	}
}

// FuzzSessionToken: no input panics, and an accepted token is exactly
// the canonical form of its payload's MAC (tokens are not malleable).
func FuzzSessionToken(f *testing.F) {
	// A fixed clock keeps the seeds in testdata (tokens of "fuzz-key"
	// expiring at 0x6B0CD89B) live.
	clock := func() time.Time { return time.Unix(0x6B0CD89B-60, 0) }
	s, _ := newSessions([]byte("fuzz-key"), time.Hour, clock)
	tok, _ := s.issue()
	f.Add(tok)
	enc := base64.RawURLEncoding
	f.Fuzz(func(t *testing.T, in string) {
		if !s.valid(in) {
			return
		}
		p, _, _ := strings.Cut(strings.TrimPrefix(in, tokenPrefix), ".")
		payload, err := enc.DecodeString(p)
		if err != nil {
			t.Fatalf("accepted %q with a bad payload", in)
		}
		if want := tokenPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac("custody-console-session", payload)); in != want {
			t.Fatalf("accepted %q, a variant of %q", in, want)
		}
	})
}

func TestSummarize(t *testing.T) {
	until := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	since := until.Add(-24 * time.Hour)
	since3 := since.Add(3 * time.Hour)
	stats := adminapi.Stats{Since: since, Until: until, Buckets: buckets, BucketMS: float64(time.Hour / time.Millisecond), Data: []adminapi.StatsRow{
		{StatsRow: index.StatsRow{Bucket: 0, RequestedModel: "m", Route: 0, Provider: "a", ResponseModel: "m-0827", Verdict: custody.Verified, Count: 1}},
		{StatsRow: index.StatsRow{Bucket: buckets - 1, RequestedModel: "m", Route: 0, Provider: "a", ResponseModel: "m-0901", Verdict: custody.Flagged, Code: custody.CodeModelMismatch, Count: 1}},
		{StatsRow: index.StatsRow{Bucket: buckets - 1, RequestedModel: "m", Route: 1, Provider: "b", ResponseModel: "m-0827", Verdict: custody.Verified, Fallback: true, Count: 3}},
		{StatsRow: index.StatsRow{Bucket: buckets - 1, RequestedModel: "m", Route: 1, Provider: "b", ResponseModel: "m-0827", Verdict: custody.Verified, Canary: true, Count: 7}},
		{StatsRow: index.StatsRow{Bucket: 3, RequestedModel: "n", Route: -1, Verdict: custody.Rejected, Code: custody.CodeRouteQuarantined, Count: 2}},
		{StatsRow: index.StatsRow{Bucket: 3, RequestedModel: "ghost", Route: -1, Verdict: custody.Rejected, Code: custody.CodeInvalidRequest, Count: 4}},
	}}
	routes := []adminapi.RouteStatus{
		{Route: "m/a", Model: "m", Provider: "a", Index: 0},
		{Route: "m/b", Model: "m", Provider: "b", Index: 1},
		{Route: "n/c", Model: "n", Provider: "c", Index: 0, Quarantined: true, OutOfService: &adminapi.OutOfService{Since: &since3, Reason: "echo: request id mismatch"}},
	}
	d := summarize(stats, routes, func(m string) bool { return m != "ghost" })
	if len(d.Models) != 2 || d.Models[0].Name != "m" || d.Models[1].Name != "n" {
		t.Fatalf("models %+v", d.Models)
	}
	m, n := d.Models[0], d.Models[1]
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"client total", d.Client.Total, 7}, {"probes total", d.Probes.Total, 7}, {"unconfigured", d.Unconfigured, 4},
		{"m client", m.Client.Total, 5}, {"m verified", m.Client.Verified, 4}, {"m flagged", m.Client.Flagged, 1}, {"m fallbacks", m.Client.Fallbacks, 3},
		{"m probes", m.Probes.Total, 7}, {"m routes", int64(len(m.Routes)), 2}, {"m route b client", m.Routes[1].Client.Total, 3},
		{"m route b probes", m.Routes[1].Probes.Total, 7}, {"m codes", int64(len(m.Codes)), 1},
		{"m first slice m-0827", m.mix[0]["m-0827"], 1}, {"m last slice m-0901", m.mix[buckets-1]["m-0901"], 1},
		{"m last slice m-0827 (no probes)", m.mix[buckets-1]["m-0827"], 3}, {"m last slice probes", m.probes[buckets-1], 7},
		{"n refused", n.Refused.Rejected, 2}, {"n none answered", n.mix[3]["none"], 1 * 2}, {"out of service", int64(len(d.OutOfService)), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if oos := d.OutOfService[0]; oos.Label != "n/c" || !oos.Since.Equal(since3) || oos.Reason != "echo: request id mismatch" || !n.Routes[0].OutOfService {
		t.Errorf("out of service %+v", oos)
	}
	if len(m.Legend) != 2 || m.Legend[0].Name != "m-0827" || m.Legend[0].Count != 4 {
		t.Errorf("legend %+v: most used first", m.Legend)
	}
	if !strings.Contains(string(m.Chart), "canary probes from") || !strings.Contains(string(m.Chart), "23:00:00Z") {
		t.Errorf("the traffic chart lacks the probes or real bucket times: %s", m.Chart)
	}
}

// TestChartEscapes: a response model is whatever the upstream said; it
// must not become markup.
func TestChartEscapes(t *testing.T) {
	now := time.Now()
	evil := `<script>alert(1)</script>`
	d := summarize(adminapi.Stats{Since: now.Add(-time.Hour), Until: now, Buckets: buckets, BucketMS: 150000,
		Data: []adminapi.StatsRow{{StatsRow: index.StatsRow{Bucket: 3, RequestedModel: "m", ResponseModel: evil, Verdict: custody.Rejected, Count: 1}}}}, nil, func(string) bool { return true })
	svg := string(d.Models[0].Mix)
	if strings.Contains(svg, "<script") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("unescaped model name in the chart: %s", svg)
	}
}

// TestProbeStates: a skipped probe reads as skipped, not failing; a
// failed one as failed, with its evidence.
func TestProbeStates(t *testing.T) {
	c, err := New(Config{IsAdminKey: func(string) bool { return false }, API: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	var rt adminapi.RouteStatus
	if err := json.Unmarshal([]byte(`{"route":"m/p","model":"m","provider":"p","index":0,"quarantined":false,"out_of_service":null,
		"last":{"time":"2026-12-01T10:00:00Z","health":"amber","ok":false,"results":[
		{"probe":"oversize","status":"skipped","evidence":"no capacity known","code":"","duration_ms":0},
		{"probe":"echo","status":"failed","evidence":"no upstream","code":"","duration_ms":1}]}}`), &rt); err != nil {
		t.Fatal(err)
	}
	d := summarize(adminapi.Stats{Buckets: 1}, []adminapi.RouteStatus{rt}, func(string) bool { return true })
	var b bytes.Buffer
	if err := c.pages["overview"].Execute(&b, map[string]any{"Page": "overview", "Now": time.Now(), "Data": d}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<li class="st-skipped">oversize skipped: no capacity known</li>`, `<li class="st-failed">echo failed: no upstream</li>`, `<td class="state">amber</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
}

// TestEvalPanelStates: a suite not run yet, a regression against a
// pinned baseline, and a route no suite covers, as the panel shows them.
func TestEvalPanelStates(t *testing.T) {
	c, err := New(Config{IsAdminKey: func(string) bool { return false }, API: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	var evals adminapi.EvalStatusList
	if err := json.Unmarshal([]byte(`{"object":"list","data":[
		{"route":"m/p","model":"m","provider":"p","index":0,"suites":[
			{"suite":"fresh","passed":false,"required_by":["code"],"last":null},
			{"suite":"drift","passed":false,"required_by":[],"last":{"time":"2026-12-01T10:00:00Z","trigger":"path_change",
				"path":{"provider":"p","model":"m-0901","fingerprint":""},"cases":[{"id":"order","pass":false,"reason":"regex does not match"},{"id":"hello","pass":true,"reason":""}],
				"passed":1,"total":2,"threshold":1,"ok":false,"path_moved":false,"prompt_tokens":10,"completion_tokens":5,
				"baseline":{"time":"2026-11-30T09:00:00Z","path":{"provider":"p","model":"m-0827","fingerprint":"fp_1"},"pinned":true,"recorded":false},
				"regressions":["order"],"changed":["order","hello"],"failing":["order"],"ledger_id":""}}]},
		{"route":"m/q","model":"m","provider":"q","index":1,"suites":[]}]}`), &evals); err != nil {
		t.Fatal(err)
	}
	d := summarize(adminapi.Stats{Buckets: 1}, []adminapi.RouteStatus{{Route: "m/p", Model: "m", Provider: "p"}, {Route: "m/q", Model: "m", Provider: "q", Index: 1}},
		func(string) bool { return true })
	attachEvals(d, evals.Data)
	var b bytes.Buffer
	if err := c.pages["overview"].Execute(&b, map[string]any{"Page": "overview", "Now": time.Now(), "Data": d}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr id="eval-m/p-fresh" class="pending">`, `no run yet`, `<strong class="bad">not used</strong>: its current path has not passed`,
		`<tr id="eval-m/p-drift" class="fail">`, `path p / m-0901 / —`, `<code class="case">order</code> <small class="bad">regressed</small> <small>regex does not match</small>`,
		`pinned 2026-11-30 09:00:00Z on p / m-0827 / fp_1; 1 regressed, 2 changed`, `15 tokens`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
	if strings.Contains(page, `id="evals-m/q"`) || strings.Contains(page, "hello</code>") {
		t.Errorf("a panel for a route no suite covers, or a passing case listed as failing:\n%s", page)
	}
}

// The log card shows the witness quorum's state as GET /v1/custody/log
// reports it: met or not and why, whether the latest checkpoint is
// cosigned, each witness, and the leaves waiting for a checkpoint.
func TestLogCardWitnesses(t *testing.T) {
	c, err := New(Config{IsAdminKey: func(string) bool { return false }, API: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	render := func(answer string) string {
		t.Helper()
		var lg adminapi.LogStatus
		if err := json.Unmarshal([]byte(answer), &lg); err != nil {
			t.Fatal(err)
		}
		d := summarize(adminapi.Stats{Buckets: 1}, nil, func(string) bool { return true })
		d.Log = &lg
		var b bytes.Buffer
		if err := c.pages["overview"].Execute(&b, map[string]any{"Page": "overview", "Now": time.Now(), "Data": d}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	const cp = `"checkpoint":{"origin":"o","size":7,"root_hash":"h","signers":["o","w1"],"cosignatures":["w1"],"seen_at":"2026-12-01T10:00:00Z","age_ms":1000}`
	page := render(`{"object":"log","origin":"o","size":9,"unpublished":2,` + cp + `,"witnesses":{"quorum":2,"quorum_met":false,
		"reason":"witness quorum not met: 1 of 2 witnesses answer, 2 needed","cosigned":false,"witnesses":[
		{"name":"w1","up":true,"last_error":"","last_answer":"2026-12-01T10:00:00Z","last_cosigned":"2026-12-01T10:00:00Z"},
		{"name":"w2","up":false,"last_error":"unreachable (connection refused)","last_answer":null,"last_cosigned":null}]}}`)
	for _, want := range []string{
		`<td id="witness-quorum"><strong class="bad">not met</strong>: 2 of 2 must cosign;`, `latest checkpoint <strong class="bad">not cosigned</strong>`,
		`<td id="witness-reason" class="bad">witness quorum not met: 1 of 2 witnesses answer, 2 needed</td>`,
		`<tr id="witness-w1"><th>w1</th><td>up;`, `answered 2026-12-01 10:00:00Z, cosigned 2026-12-01 10:00:00Z`,
		`<tr id="witness-w2"><th>w2</th><td><strong class="bad">down</strong>: unreachable (connection refused);`, `answered —, cosigned —`,
		`<span class="bad">2 leaves</span> no published checkpoint covers yet`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("log card lacks %s", want)
		}
	}
	page = render(`{"object":"log","origin":"o","size":7,"unpublished":0,` + cp + `,"witnesses":{"quorum":1,"quorum_met":true,"reason":"","cosigned":true,"witnesses":[
		{"name":"w1","up":true,"last_error":"","last_answer":"2026-12-01T10:00:00Z","last_cosigned":"2026-12-01T10:00:00Z"}]}}`)
	for _, want := range []string{`<td id="witness-quorum">met: 1 of 1 must cosign;`, `latest checkpoint cosigned</td>`, `<td id="log-unpublished">none</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("log card lacks %s", want)
		}
	}
	if strings.Contains(page, "witness-reason") {
		t.Error("a reason shown for a met quorum")
	}
	page = render(`{"object":"log","origin":"o","size":0,"unpublished":0,"checkpoint":null,"witnesses":null}`)
	if strings.Contains(page, "witness-quorum") {
		t.Error("a witness quorum shown without witnesses")
	}
}
