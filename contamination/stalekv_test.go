package contamination

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/custody-gateway/custody/sim"
)

// TestStaleKVFirstRequest is the simulator's stale-kv fault right after a
// start: a Detector created fresh remembers one tenant's request, and the
// very next request, another tenant's, is decoded by the simulator from
// its own KV pages and the first request's freed ones. The answer quotes
// the first prompt's words (broken by the toy model's own) and must be
// caught on that first faulty response, naming the source. The toy model
// quotes only the tail page of the stale prompt, a few words; what gives it
// away is the order number there (a nonce-like word, a finding alone),
// which the warm-up of 256 responses there was used to suppress too.
func TestStaleKVFirstRequest(t *testing.T) {
	s, err := sim.New(sim.Config{AllowFaultHeader: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ask := func(tenant, prompt, fault string) string {
		body, _ := json.Marshal(map[string]any{"model": "sim-1", "max_tokens": 64, "temperature": 0,
			"messages": []map[string]string{{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": prompt}}})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Tenant", tenant)
		if fault != "" {
			req.Header.Set("X-Sim-Fault", fault)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Choices []struct {
				Message struct{ Content string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Choices) == 0 {
			t.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		return out.Choices[0].Message.Content
	}
	for _, c := range []struct{ a, b string }{
		{"Summarise the board minutes: the Harrowgate depot will close in October and its forty drivers " +
			"move to the Eastfield site under work order 7Hq2xK9mZ4.",
			"Write a limerick about a cat who is afraid of cucumbers."},
		{"My landlord kept the deposit for the flat on Quayside Row because of a stained carpet in the " +
			"back bedroom, although inventory 4kT9wQ2zL7 already lists the stain.",
			"What is the capital of Australia?"},
	} {
		d := New(Config{})
		prompt := func(p string) string { return "system: You are a helpful assistant.\nuser: " + p }
		pa := d.Fingerprint(prompt(c.a))
		d.Remember("req-a", "tenant-a", pa)
		if f, ok := d.Scan("req-a", pa, prompt(c.a), ask("tenant-a", c.a, "")); ok {
			t.Fatalf("clean answer flagged: %+v", f)
		}
		pb := d.Fingerprint(prompt(c.b))
		d.Remember("req-b", "tenant-b", pb)
		answer := ask("tenant-b", c.b, string(sim.FaultStaleKV))
		f, ok := d.Scan("req-b", pb, prompt(c.b), answer)
		if !ok || f.Kind != KindFingerprint || f.SourceRequest != "req-a" || f.SourceTenant != "tenant-a" {
			t.Errorf("stale-kv answer on the first faulty request: %+v %v", f, ok)
		}
		t.Logf("caught: %+v", f)
	}
}
