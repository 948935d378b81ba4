package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/doctor"
	"github.com/custody-gateway/custody/internal/refused"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// templatedUpstream is an OpenAI-compatible upstream that counts prompts
// with a chat template of its own (not the simulator's), as a real engine
// with a different model would.
func templatedUpstream(t *testing.T, model string) string {
	t.Helper()
	tmpl, err := template.Parse(`{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}`, template.Special{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tokenize.Default()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
		if !strings.HasPrefix(r.URL.Path, "/v1/") {
			http.NotFound(w, r)
			return
		}
		if r.Method == "GET" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","max_model_len":32768}]}`, model)
			return
		}
		body, _ := io.ReadAll(r.Body)
		p, err := tmpl.Render(template.EngineLlamaCpp, body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}`,
			model, c.Count(p.Text), c.Count(p.Text)+1)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDoctor runs `custody doctor` against the simulator configured
// right (exit 0) and wrong in each way it checks (exit 1, naming the
// fix), and against an upstream that counts with another template.
func TestDoctor(t *testing.T) {
	t.Parallel() // its own data dir and ports
	closed := refused.Addr(t)
	other := templatedUpstream(t, "other-1")
	model := func(provider, upstreamModel string) string {
		return fmt.Sprintf("models:\n  - {name: m, context_window: 32768, routes: [{provider: %s, model: %s}]}\n", provider, upstreamModel)
	}
	cases := []struct {
		name, config string
		exit         int
		want         []string // in the output
	}{
		{"defaults", "", 0, []string{"accounting", "equals the upstream's on all 4 probes", "echoes X-Request-Id", "ledger_disk", "a journal commit (write + fdatasync) in "}},
		{"data_dir under a file", "data_dir: custody.yaml/data\n", 1, []string{"ledger_disk", "serve cannot keep its ledger under data_dir", "not a directory", "set data_dir to a writable directory"}},
		{"model not served", "providers:\n  - {name: s, kind: sim, request_id_echo: x-request-id, sim: {models: [sim-2]}}\n" + model("s", "sim-1"),
			1, []string{`does not list "sim-1" (it lists: sim-2)`}},
		{"capacity over the upstream's", "providers:\n  - {name: s, kind: sim, request_id_echo: x-request-id, sim: {capacity: 16384}}\n" + model("s", "sim-1"),
			1, []string{"the upstream serves a context of 16384", "set verified_capacity: 16384"}},
		{"echo header wrong", "providers:\n  - {name: s, kind: sim, request_id_echo: x-trace-id}\n" + model("s", "sim-1"),
			1, []string{"request_id_echo is x-trace-id", "set request_id_echo: x-request-id"}},
		{"echo not configured", "providers:\n  - {name: s, kind: sim}\n" + model("s", "sim-1"),
			0, []string{"but custody does not check it", "set request_id_echo: x-request-id"}},
		{"unreachable", "providers:\n  - {name: p, kind: openai, base_url: \"http://" + closed + "/v1\"}\n" + model("p", "x"),
			1, []string{"reachable", "problem", "check providers[].base_url"}},
		{"base url without /v1", "providers:\n  - {name: p, kind: openai, base_url: \"" + other + "/nope\"}\n" + model("p", "other-1"),
			1, []string{"does not end in /v1", "usually ending in /v1"}},
		{"another template", "providers:\n  - {name: p, kind: openai, engine: llamacpp, base_url: \"" + other + "/v1\", request_id_echo: x-request-id}\n" +
			"models:\n  - {name: m, context_window: 32768, chat_template: builtin:chatml, routes: [{provider: p, model: other-1}]}\n",
			1, []string{"off by", "outside", "give the model its own tokenizer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"doctor"}
			if tc.config != "" {
				args = append(args, "--config", writeConfig(t, dir, "tenants:\n  - {id: a, api_keys: [k]}\n"+tc.config))
			}
			code, out, errOut := runCmd(t, dir, args...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.exit, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		code, out, _ := runCmd(t, t.TempDir(), "doctor", "--json")
		var fs []doctor.Finding
		if code != 0 || json.Unmarshal([]byte(out), &fs) != nil || len(fs) < 5 {
			t.Fatalf("exit %d: %s", code, out)
		}
		for _, f := range fs {
			// A slow disk under the test's data_dir is the machine's,
			// and only a warning: the exit status stays 0.
			if f.Status != doctor.OK && !(f.Check == doctor.CheckDisk && f.Status == doctor.Warn) {
				t.Errorf("%+v", f)
			}
		}
	})
}

// TestServePrintsDoctorWarnings: serve starts listening at once and then
// logs, at WARN, what doctor finds wrong with a real upstream (here one
// that counts prompts with another chat template), with the fix.
func TestServePrintsDoctorWarnings(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	other := templatedUpstream(t, "other-1")
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
tenants: [{id: acme, api_keys: [sk-acme]}]
providers:
  - {name: p, kind: openai, engine: llamacpp, base_url: "`+other+`/v1", request_id_echo: x-request-id}
models:
  - {name: m, context_window: 32768, chat_template: builtin:chatml, routes: [{provider: p, model: other-1}]}
`))
	if r, _ := get(t, s.URL+"/healthz", ""); r.StatusCode != 200 {
		t.Fatalf("healthz %d", r.StatusCode)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		for _, l := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(l, `"level":"WARN"`) && strings.Contains(l, `"msg":"doctor: `) && strings.Contains(l, `"check":"accounting"`) && strings.Contains(l, `"fix":"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no doctor warning in serve's log:\n%s", s.stderr.String())
		}
	}
}
