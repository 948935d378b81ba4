package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The fault matrix of the Messages and Responses fronts: every simulator
// fault that applies to a dialect, through the real binary, plain and
// streamed, on each path a request of that dialect can take:
//
//   - messages:   Messages front -> kind sim, translated to chat
//   - messages>a: Messages front -> kind anthropic (a `custody sim`
//     process), passed through
//   - responses:  Responses front -> kind sim, translated to chat
//   - responses>r: Responses front -> kind sim with responses: true,
//     passed through
//
// Each is caught with the same code as in chat (matrix_test.go).

// dialectMatrix is the chat matrix: the same faults, the same codes.
var dialectMatrix = matrix

// startSimProcess runs `custody sim` with faults and returns its base URL.
func startSimProcess(t *testing.T, faults ...string) string {
	t.Helper()
	args := []string{"sim", "--listen", "127.0.0.1:0", "--model", "sim-1-0827"}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	cmd := exec.Command(binary, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	re := regexp.MustCompile(`on (http://[0-9.:]+/v1)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case <-done:
			t.Fatalf("custody sim exited: %s", out)
		default:
		}
	}
	t.Fatalf("custody sim did not start: %s", out)
	return ""
}

// dialectMatrixConfig: for each fault f (and clean), models m-f and q-f
// (kind sim: Messages and Responses translated, each path its own
// simulator, whose memory the replay faults draw on), r-f (kind sim,
// responses: true) and a-f (kind anthropic, at its own `custody sim`).
func dialectMatrixConfig(t *testing.T) string {
	var b strings.Builder
	b.WriteString("canaries: {ignore_path_changes: true}\ntenants:\n  - {id: acme, api_keys: [sk-acme]}\n  - {id: beta, api_keys: [sk-beta]}\nproviders:\n")
	names := []string{"clean"}
	seen := map[string]bool{}
	for _, c := range dialectMatrix {
		if !seen[c.fault] {
			seen[c.fault] = true
			names = append(names, c.fault)
		}
	}
	for _, f := range names {
		simCfg, faults := "", []string{}
		if f != "clean" {
			simCfg, faults = fmt.Sprintf(", sim: {faults: [%q]}", f), []string{f}
		}
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, request_id_echo: x-request-id%s}\n", "p-"+f, simCfg)
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, request_id_echo: x-request-id%s}\n", "q-"+f, simCfg)
		fmt.Fprintf(&b, "  - {name: %q, kind: sim, responses: true, request_id_echo: x-request-id%s}\n", "r-"+f, simCfg)
		// engine: the simulator renders as llama.cpp, so custody counts
		// its prompts exactly (a Claude upstream's are not counted).
		fmt.Fprintf(&b, "  - {name: %q, kind: anthropic, engine: llamacpp, base_url: %q, request_id_echo: x-request-id}\n", "a-"+f, startSimProcess(t, faults...))
	}
	b.WriteString("models:\n")
	for _, f := range names {
		for _, p := range []string{"m", "q", "r", "a"} {
			prov := map[string]string{"m": "p-", "q": "q-", "r": "r-", "a": "a-"}[p] + f
			fmt.Fprintf(&b, "  - {name: %q, context_window: 32768, routes: [{provider: %q, model: sim-1-0827}]}\n", p+"-"+f, prov)
		}
	}
	return b.String()
}

func messagesReq(model, content string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"max_tokens":32,"stream":%v,"messages":[{"role":"user","content":%q}]}`, model, stream, content)
}

func responsesReq(model, content string, stream bool) string {
	return fmt.Sprintf(`{"model":%q,"max_output_tokens":32,"stream":%v,"input":%q}`, model, stream, content)
}

var anthropicCode = regexp.MustCompile(`"message":"([a-z_]+): `)

// dialectOutcome is custody's code in a Messages or Responses answer
// (error body, or the error event that ended a stream); "" when served.
func dialectOutcome(status int, body string) string {
	served := status == 200 && !strings.Contains(body, "event: error") &&
		(!strings.Contains(body, "event: ") || strings.Contains(body, "event: message_stop") ||
			strings.Contains(body, "event: response.completed") || strings.Contains(body, "event: response.incomplete"))
	if served {
		return ""
	}
	if m := anthropicCode.FindStringSubmatch(body); m != nil && !strings.Contains(body, `"object":"response"`) {
		return m[1]
	}
	if i := strings.Index(body, `"code":"`); i >= 0 {
		rest := body[i+len(`"code":"`):]
		return rest[:strings.IndexByte(rest, '"')]
	}
	return "?"
}

// TestDialectDetectionMatrix: the matrix for both fronts on every path.
func TestDialectDetectionMatrix(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("starts one simulator process per fault")
	}
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, dialectMatrixConfig(t)))
	paths := []struct {
		name, path, prefix string
		req                func(model, content string, stream bool) string
	}{
		{"messages", "/v1/messages", "m-", messagesReq},
		{"messages>anthropic", "/v1/messages", "a-", messagesReq},
		{"responses", "/v1/responses", "q-", responsesReq},
		{"responses>responses", "/v1/responses", "r-", responsesReq},
	}
	for g, p := range paths {
		for i, c := range dialectMatrix {
			i := g*100 + i // each path's prompts its own: the contamination detector learns what is common
			name := p.name + "/" + c.fault
			if c.stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				model := p.prefix + c.fault
				if c.warmup {
					wr, _ := post(t, s.URL+p.path, "sk-beta",
						p.req(model, fmt.Sprintf("beta's private note z%dQ7vK2pLx9 about the merger with Northwind and its secret terms", i), c.stream))
					t.Logf("warm-up: %d %s", wr.StatusCode, wr.Header.Get("Custody-Checks"))
				}
				prompt := c.prompt
				if prompt == "" {
					prompt = fmt.Sprintf("acme asks: summarise a%dB4nR8wT1c for the board", i)
				}
				resp, body := post(t, s.URL+p.path, "sk-acme", p.req(model, prompt, c.stream))
				if got := dialectOutcome(resp.StatusCode, body); got != c.code {
					t.Fatalf("fault %s: got code %q (status %d, checks %s), want %q\n%.800s", c.fault, got, resp.StatusCode, resp.Header.Get("Custody-Checks"), c.code, body)
				}
				if !c.stream && resp.Header.Get("Custody-Verdict") != "rejected" {
					t.Errorf("verdict header %q", resp.Header.Get("Custody-Verdict"))
				}
				if resp.Header.Get("Custody-Request-Id") == "" {
					t.Error("no Custody-Request-Id")
				}
			})
		}
		t.Run(p.name+"/clean", func(t *testing.T) {
			for i, stream := range []bool{false, true, false, true} {
				key := []string{"sk-acme", "sk-beta"}[i%2]
				resp, body := post(t, s.URL+p.path, key, p.req(p.prefix+"clean", fmt.Sprintf("clean request %d c%dX7mQ2rT9", i, i), stream))
				if resp.StatusCode != 200 || dialectOutcome(resp.StatusCode, body) != "" {
					t.Errorf("clean: %d %.600s", resp.StatusCode, body)
				}
				if !stream && resp.Header.Get("Custody-Verdict") != "verified" {
					t.Errorf("clean verdict %q checks %q", resp.Header.Get("Custody-Verdict"), resp.Header.Get("Custody-Checks"))
				}
				if stream && !strings.Contains(body, ": custody-verdict verified") {
					t.Errorf("clean stream not verified: %.600s", body)
				}
			}
		})
	}
}
