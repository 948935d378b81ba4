package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The contract faults of the simulator, each caught with its code in
// every dialect (chat; Messages and Responses translated to chat), plain
// and streamed, through the real binary; the same requests to a clean
// simulator stay verified (no false alarm).

const contractParams = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`

// contractAsk is what a case's request asks for, written per dialect.
type contractAsk struct {
	tools     bool // declare the weather tool
	required  bool // tool_choice required (Messages: any)
	json      bool // response_format json_object (Responses: text.format)
	maxTokens int
	stop      string
}

type contractCase struct {
	fault string
	ask   contractAsk
	code  string
	// rejects: the default policy rejects it (else it is served flagged);
	// per dialect where they differ.
	rejects map[string]bool
	// dialects the clause exists in (nil: all three).
	dialects []string
}

var allDialects = []string{"chat", "messages", "responses"}

var contractMatrix = []contractCase{
	{fault: "tool-undeclared", ask: contractAsk{tools: true}, code: "contract_tool_unknown", rejects: all(true)},
	// Arguments that are not JSON are the model's mistake (flagged), but
	// no Messages tool_use can carry them: rejected there.
	{fault: "tool-arguments-invalid", ask: contractAsk{tools: true}, code: "contract_arguments_invalid",
		rejects: map[string]bool{"chat": false, "messages": true, "responses": false}},
	{fault: "tool-choice-ignored", ask: contractAsk{tools: true, required: true}, code: "contract_tool_choice_ignored", rejects: all(true)},
	// Messages has no response_format.
	{fault: "format-ignored", ask: contractAsk{json: true}, code: "contract_format_invalid", rejects: all(true), dialects: []string{"chat", "responses"}},
	{fault: "max-tokens-exceeded", ask: contractAsk{maxTokens: 16}, code: "contract_limit_exceeded", rejects: all(true)},
	// Responses has no stop.
	{fault: "stop-kept", ask: contractAsk{stop: "zebra"}, code: "contract_stop_ignored", rejects: all(true), dialects: []string{"chat", "messages"}},
	{fault: "finish-tool-calls-empty", ask: contractAsk{tools: true}, code: "contract_finish_invalid", rejects: all(true)},
}

func all(v bool) map[string]bool {
	return map[string]bool{"chat": v, "messages": v, "responses": v}
}

// contractRequest is the path and body of a case's request in dialect d.
func contractRequest(d, model, prompt string, stream bool, a contractAsk) (string, string) {
	var m []string
	add := func(f string, args ...any) { m = append(m, fmt.Sprintf(f, args...)) }
	add(`"model":%q,"stream":%v`, model, stream)
	switch d {
	case "chat":
		add(`"messages":[{"role":"user","content":%q}]`, prompt)
		if a.tools {
			add(`"tools":[{"type":"function","function":{"name":"weather","parameters":%s}}]`, contractParams)
		}
		if a.required {
			add(`"tool_choice":"required"`)
		}
		if a.json {
			add(`"response_format":{"type":"json_object"}`)
		}
		if a.maxTokens > 0 {
			add(`"max_tokens":%d`, a.maxTokens)
		}
		if a.stop != "" {
			add(`"stop":[%q]`, a.stop)
		}
		return "/v1/chat/completions", "{" + strings.Join(m, ",") + "}"
	case "messages":
		add(`"messages":[{"role":"user","content":%q}]`, prompt)
		add(`"max_tokens":%d`, max(a.maxTokens, 256))
		if a.maxTokens > 0 {
			m[len(m)-1] = fmt.Sprintf(`"max_tokens":%d`, a.maxTokens)
		}
		if a.tools {
			add(`"tools":[{"name":"weather","input_schema":%s}]`, contractParams)
		}
		if a.required {
			add(`"tool_choice":{"type":"any"}`)
		}
		if a.stop != "" {
			add(`"stop_sequences":[%q]`, a.stop)
		}
		return "/v1/messages", "{" + strings.Join(m, ",") + "}"
	default:
		add(`"input":%q`, prompt)
		if a.tools {
			add(`"tools":[{"type":"function","name":"weather","parameters":%s}]`, contractParams)
		}
		if a.required {
			add(`"tool_choice":"required"`)
		}
		if a.json {
			add(`"text":{"format":{"type":"json_object"}}`)
		}
		if a.maxTokens > 0 {
			add(`"max_output_tokens":%d`, a.maxTokens)
		}
		return "/v1/responses", "{" + strings.Join(m, ",") + "}"
	}
}

func contractConfig() string {
	var b strings.Builder
	b.WriteString("admin_keys: [adm-test]\ncanaries: {ignore_path_changes: true}\ntenants:\n  - {id: acme, api_keys: [sk-acme]}\nproviders:\n")
	names := []string{"clean"}
	for _, c := range contractMatrix {
		names = append(names, c.fault)
	}
	for _, f := range names {
		simCfg := ""
		if f != "clean" {
			simCfg = fmt.Sprintf(", sim: {faults: [%q]}", f)
		}
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, request_id_echo: x-request-id%s}\n", "p-"+f, simCfg)
	}
	b.WriteString("models:\n")
	for _, f := range names {
		fmt.Fprintf(&b, "  - {name: %q, context_window: 32768, routes: [{provider: %q, model: sim-1-0827}]}\n", "m-"+f, "p-"+f)
	}
	return b.String()
}

// verdictOf is the verdict and checks custody gave: the headers of a
// plain answer, the verdict comment of a stream.
func verdictOf(hdrVerdict, hdrChecks, body string) (string, string) {
	if i := strings.LastIndex(body, ": custody-verdict "); i >= 0 {
		line := body[i+len(": custody-verdict "):]
		line = line[:strings.IndexAny(line+"\n", "\r\n")]
		verdict, checks, _ := strings.Cut(line, " checks=")
		return verdict, checks
	}
	return hdrVerdict, hdrChecks
}

func TestContractMatrix(t *testing.T) {
	t.Parallel() // its own data dir and ports
	s := testContractMatrix(t)
	// Per route (after the matrix, whose requests it counts): the clean
	// simulator's answers all passed; each faulty one's broke its clause,
	// counted under its code.
	{
		want := 0
		for _, c := range contractMatrix {
			n := 2 * len(allDialects)
			if c.dialects != nil {
				n = 2 * len(c.dialects)
			}
			want += n
		}
		var rates struct {
			Data []struct {
				Route    string         `json:"route"`
				Checked  int            `json:"checked"`
				Passed   int            `json:"passed"`
				PassRate float64        `json:"pass_rate"`
				Broken   map[string]int `json:"broken"`
			} `json:"data"`
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			resp, body := get(t, s.URL+"/v1/custody/contract", "adm-test")
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			rates.Data = nil
			if err := json.Unmarshal([]byte(body), &rates); err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, r := range rates.Data {
				total += r.Checked
			}
			if total >= 2*want || time.Now().After(deadline) {
				break // every request of the matrix is in the index
			}
		}
		byRoute := map[string]int{}
		for i, r := range rates.Data {
			byRoute[r.Route] = i
		}
		clean := rates.Data[byRoute["m-clean/p-clean"]]
		if clean.Checked != want || clean.Passed != want || clean.PassRate != 1 {
			t.Errorf("clean route: %+v, want %d checked and passed", clean, want)
		}
		for _, c := range contractMatrix {
			i, ok := byRoute["m-"+c.fault+"/p-"+c.fault]
			if !ok {
				t.Errorf("%s: no rate", c.fault)
				continue
			}
			r := rates.Data[i]
			if r.Passed != 0 || r.Checked == 0 || r.Broken[c.code] != r.Checked {
				t.Errorf("%s: %+v, want every answer broken as %s", c.fault, r, c.code)
			}
		}
	}
}

func testContractMatrix(t *testing.T) *server {
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, contractConfig()))
	for i, c := range contractMatrix {
		dialects := c.dialects
		if dialects == nil {
			dialects = allDialects
		}
		for _, d := range dialects {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/stream=%v", c.fault, d, stream)
				t.Run(name, func(t *testing.T) {
					prompt := fmt.Sprintf("acme asks %d: what is the weather in the harbour town today", i)
					path, body := contractRequest(d, "m-"+c.fault, prompt, stream, c.ask)
					want := "flagged"
					if c.rejects[d] {
						want = "rejected"
					}
					wantContract(t, s, path, body, want, c.code)
				})
				// The same request to the clean simulator: verified, the
				// contract check run and passed.
				t.Run(name+"/clean", func(t *testing.T) {
					prompt := fmt.Sprintf("acme asks %d: what is the weather in the harbour town today", i)
					path, body := contractRequest(d, "m-clean", prompt, stream, c.ask)
					wantContract(t, s, path, body, "verified", "ok")
				})
			}
		}
	}
	return s
}

// wantContract posts body to path as acme and holds the answer to its
// contract outcome: verdict want with contract=code in Custody-Checks; a
// rejection's error names the code, a flagged answer is served 200, and
// a verified one (code ok) is a 200 whose contract check ran and passed.
func wantContract(t *testing.T, s *server, path, body, want, code string) {
	t.Helper()
	resp, out := post(t, s.URL+path, "sk-acme", body)
	verdict, checks := verdictOf(resp.Header.Get("Custody-Verdict"), resp.Header.Get("Custody-Checks"), out)
	if verdict != want || !strings.Contains(checks, "contract="+code) {
		t.Fatalf("status %d verdict %q checks %q, want %s with contract=%s\n%.800s", resp.StatusCode, verdict, checks, want, code, out)
	}
	if want == "rejected" && !strings.Contains(out, code) {
		t.Errorf("the error does not name %s:\n%.600s", code, out)
	}
	if want != "rejected" && resp.StatusCode != 200 {
		t.Errorf("a %s answer with status %d", want, resp.StatusCode)
	}
}
