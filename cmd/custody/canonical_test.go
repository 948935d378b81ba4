package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/sse"
)

// tamperingUpstream is a malicious upstream: it forwards every request
// to a real simulator and rewrites its streams event by event, as the
// scenario named in the prompt ("scenario:NAME") says. tamper gets each
// event of the simulator's stream (LF-framed, blank line included) with
// its index and returns what to send instead.
func tamperingUpstream(t *testing.T, tamper map[string]func(i int, ev string) string) string {
	t.Helper()
	sim := strings.TrimSuffix(startSimProcess(t), "/v1")
	scenario := regexp.MustCompile(`scenario:([a-z-]+)`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, sim+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		var f func(int, string) string
		if m := scenario.FindSubmatch(body); m != nil {
			f = tamper[string(m[1])]
		}
		if f == nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			io.Copy(w, resp.Body)
			return
		}
		br := bufio.NewReader(resp.Body)
		var ev strings.Builder
		for i := 0; ; {
			line, err := br.ReadString('\n')
			ev.WriteString(line)
			if line == "\n" {
				io.WriteString(w, f(i, ev.String()))
				w.(http.Flusher).Flush()
				ev.Reset()
				i++
			}
			if err != nil {
				io.WriteString(w, ev.String())
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// dataOf is the data of one LF-framed event.
func dataOf(ev string) string {
	var d []string
	for _, l := range strings.Split(ev, "\n") {
		if v, ok := strings.CutPrefix(l, "data: "); ok {
			d = append(d, v)
		}
	}
	return strings.Join(d, "\n")
}

// sdkRead is what hidden.cjs reports.
type sdkRead struct {
	Text, Error, ID, Raw string
	Models               []string
	Status               int
}

// canonicalServe runs custody with the tampering upstream behind a
// kind: openai provider (model "chat") and a kind: anthropic provider
// (model "messages").
func canonicalServe(t *testing.T, upstream string) *server {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`checks: {contamination_warmup: -1}
canaries: {ignore_path_changes: true}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: evil, kind: openai, engine: llamacpp, base_url: %[1]q}
  - {name: evila, kind: anthropic, engine: llamacpp, base_url: %[1]q}
models:
  - {name: chat, context_window: 32768, routes: [{provider: evil, model: sim-1-0827}]}
  - {name: messages, context_window: 32768, routes: [{provider: evila, model: sim-1-0827}]}
`, upstream)
	return startServe(t, dir, "--config", writeConfig(t, dir, cfg))
}

// readWithSDK drives hidden.cjs: the official SDK of dialect reads one
// stream of model under scenario.
func readWithSDK(t *testing.T, s *server, dialect, model, scenario string) sdkRead {
	t.Helper()
	modules := nodeSDKs(t)
	path, _ := filepath.Abs(filepath.Join("testdata", "sdk", "hidden.cjs"))
	cmd := exec.Command("node", path)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BASE_URL="+s.URL, "DIALECT="+dialect, "MODEL="+model, "SCENARIO="+scenario)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node hidden.cjs: %v\n%s", err, out)
	}
	var r sdkRead
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("node hidden.cjs printed %q: %v", out, err)
	}
	return r
}

// relayedText reads custody's bytes as the specification reads them and
// returns the text of the events, as dialect's SDK assembles it.
func relayedText(t *testing.T, dialect string, raw []byte) string {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(raw), 1<<20)
	var text strings.Builder
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		var v struct {
			Choices []struct {
				Delta struct{ Content string }
			}
			Type  string
			Delta struct{ Type, Text string }
		}
		_ = json.Unmarshal(ev.Data, &v)
		if dialect == "openai" {
			for _, c := range v.Choices {
				text.WriteString(c.Delta.Content)
			}
		} else if v.Type == "content_block_delta" && v.Delta.Type == "text_delta" {
			text.WriteString(v.Delta.Text)
		}
	}
	return text.String()
}

// TestCanonicalRelayNodeSDKs: a malicious upstream hides events behind
// lone CRs (":\r\rdata: ...\r\r" on a line of its own in front of a
// real event), which the official Node SDKs read and
// a reader that ends lines at LF only does not, and puts its own
// custody-verdict and custody-receipt comments first. Whatever it does,
// what the SDK reads is what custody checked and relayed, or the stream
// fails closed with custody's code: the bytes the client receives are
// canonical (no CR, custody's comments only, the real receipt first),
// the SDK's text is the text of those bytes as the specification reads
// them, and `custody verify --response` opens the receipt with them.
func TestCanonicalRelayNodeSDKs(t *testing.T) {
	t.Parallel() // its own data dir and ports
	hidden := func(at int, hide func(ev string) string) func(int, string) string {
		return func(i int, ev string) string {
			if i == at {
				return hide(ev) + ev
			}
			return ev
		}
	}
	upstream := tamperingUpstream(t, map[string]func(int, string) string{
		// A chunk custody never saw, with another model, before the first.
		"hidden-model": hidden(0, func(ev string) string {
			return ":\r\rdata: " + strings.Replace(dataOf(ev), `"model":"sim-1-0827"`, `"model":"evil-model"`, 1) + "\r\r\n"
		}),
		// A chunk custody never saw in the middle of the stream.
		"hidden-chunk": hidden(2, func(ev string) string {
			return ":\r\rdata: " + regexp.MustCompile(`"content":"[^"]*"`).ReplaceAllString(dataOf(ev), `"content":" HIDDEN TEXT"`) + "\r\r\n"
		}),
		// The end of the stream, hidden after the first chunks.
		"hidden-done": hidden(2, func(string) string { return ":\r\rdata: [DONE]\r\r\n" }),
		// The upstream's own verdict and receipt, first, as comment
		// lines of its first event and as events of their own.
		"fake-comments": hidden(0, func(string) string {
			return ": custody-receipt 01FAKE\n\n: custody-receipt 01FAKE\n: custody-verdict verified checks=model=ok\n"
		}),
		// A Messages delta custody never saw, before the first real one.
		"hidden-delta": func(i int, ev string) string {
			if strings.HasPrefix(ev, "event: content_block_delta") && !strings.Contains(ev, "HIDDEN") {
				d := regexp.MustCompile(`"text":"[^"]*"`).ReplaceAllString(dataOf(ev), `"text":" HIDDEN TEXT"`)
				return ":\r\revent: content_block_delta\rdata: " + d + "\r\r" + ev
			}
			return ev
		},
		// A Messages event whose name says one thing and data another.
		"renamed": func(i int, ev string) string {
			if strings.HasPrefix(ev, "event: content_block_delta") {
				return strings.Replace(ev, "event: content_block_delta", "event: ping", 1)
			}
			return ev
		},
	})
	s := canonicalServe(t, upstream)
	for _, tc := range []struct {
		dialect, model, scenario string
		codes                    []string // a fail-closed outcome is one of these
		hiddenRead               bool     // the hidden text, if served, is read by the SDK
	}{
		{"openai", "chat", "none", nil, false},
		{"openai", "chat", "hidden-model", []string{"model_mismatch", "stream_inconsistent"}, false},
		{"openai", "chat", "hidden-chunk", []string{"stream_inconsistent"}, true},
		{"openai", "chat", "hidden-done", []string{"stream_inconsistent", "stream_truncated"}, false},
		{"openai", "chat", "fake-comments", nil, false},
		{"anthropic", "messages", "none", nil, false},
		{"anthropic", "messages", "hidden-delta", []string{"stream_inconsistent"}, true},
		{"anthropic", "messages", "fake-comments", nil, false},
		{"anthropic", "messages", "renamed", []string{"stream_inconsistent"}, false},
	} {
		t.Run(tc.dialect+"/"+tc.scenario, func(t *testing.T) {
			t.Parallel() // one server, a node process and a dir of its own each
			got := readWithSDK(t, s, tc.dialect, tc.model, tc.scenario)
			raw, _ := base64.StdEncoding.DecodeString(got.Raw)
			if got.Error != "" {
				for _, c := range tc.codes {
					if strings.Contains(got.Error, c) || strings.Contains(string(raw), c) {
						t.Logf("failed closed: %s", got.Error)
						return
					}
				}
				t.Fatalf("the SDK raised %q (status %d), not one of %v\n%s", got.Error, got.Status, tc.codes, raw)
			}
			if got.Status != 200 || got.ID == "" {
				t.Fatalf("status %d id %q", got.Status, got.ID)
			}
			if bytes.IndexByte(raw, '\r') >= 0 {
				t.Fatalf("custody relayed a CR: %q", raw)
			}
			var comments []string
			for _, l := range strings.Split(string(raw), "\n") {
				if strings.HasPrefix(l, ":") {
					comments = append(comments, l)
				}
			}
			if len(comments) != 2 || comments[0] != ": custody-receipt "+got.ID ||
				!strings.HasPrefix(comments[1], ": custody-verdict verified checks=") {
				t.Fatalf("comments relayed: %q", comments)
			}
			if want := relayedText(t, tc.dialect, raw); got.Text != want || want == "" {
				t.Fatalf("the SDK read %q; custody relayed %q", got.Text, want)
			}
			if strings.Contains(got.Text, "HIDDEN") != tc.hiddenRead {
				t.Fatalf("the SDK read %q", got.Text)
			}
			for _, m := range got.Models {
				if m != "sim-1-0827" {
					t.Fatalf("the SDK read model %q", m)
				}
			}
			dir := t.TempDir()
			resp := filepath.Join(dir, "response.sse")
			receipt := filepath.Join(dir, "receipt.json")
			os.WriteFile(resp, raw, 0o600)
			os.WriteFile(receipt, []byte(fetchReceipt(t, s, "sk-acme", got.ID)), 0o600)
			if code, out, errOut := runCmd(t, dir, "verify", "--log", s.URL+"/log", "--response", resp, receipt); code != 0 {
				t.Fatalf("custody verify --response on the honest capture: %d %s %s", code, out, errOut)
			}
		})
	}
}
