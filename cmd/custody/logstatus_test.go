package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody/adminapi"
	"github.com/custody-gateway/custody/internal/openapi"
	"golang.org/x/mod/sumdb/note"
)

// TestLogStatusWitnesses: GET /v1/custody/log reports the witness
// quorum's state with real witnesses (litewitness), valid against the
// served OpenAPI document: met and cosigned while both of a 2-of-2 quorum
// cosign; not met, with the reason, the silent witness down and leaves
// waiting unpublished once one stops; met again once it is back.
func TestLogStatusWitnesses(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("builds and runs litewitness; skipped with -short")
	}
	lw, ctl := litewitnessBinaries(t)
	dir := t.TempDir()
	const origin = "status.custody.test/log"
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "signing.key")
	os.WriteFile(keyFile, []byte(skey+"\n"), 0o600)
	ws := []*liteWitness{
		startLiteWitness(t, lw, ctl, "w1.custody.test", origin, vkey),
		startLiteWitness(t, lw, ctl, "w2.custody.test", origin, vkey),
	}
	var wcfg strings.Builder
	fmt.Fprintf(&wcfg, "ledger:\n  origin: %s\n  key_file: %s\n  batch_max_age: 50ms\n  witness_policy: {quorum: 2, timeout: 2s}\n  witnesses:\n", origin, keyFile)
	for _, w := range ws {
		fmt.Fprintf(&wcfg, "    - {name: %s, vkey: %q, url: %q}\n", w.name, w.vkey, w.url())
	}
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+wcfg.String()))
	_, body := get(t, s.URL+"/v1/custody/openapi.json", "")
	doc, err := openapi.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := doc.Response("GET", "/v1/custody/log", 200)
	if err != nil {
		t.Fatal(err)
	}
	type status = adminapi.LogStatus // the answer as the console decodes it
	n := 0
	// await sends a request, then reads the log status until ok says it
	// is what the test waits for; every answer must match the document.
	await := func(what string, ok func(*status) bool) *status {
		t.Helper()
		n++
		if resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", fmt.Sprintf(`{"model":"sim-1","messages":[{"role":"user","content":"status %d"}]}`, n)); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", n, resp.StatusCode, body)
		}
		var raw string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			r, b := get(t, s.URL+"/v1/custody/log", "adm-test")
			if r.StatusCode != 200 {
				t.Fatalf("log status: %d %s", r.StatusCode, b)
			}
			if err := doc.ValidateJSON(schema, []byte(b)); err != nil {
				t.Fatalf("log status does not match the document: %v\n%s", err, b)
			}
			raw = b
			var st status
			if err := json.Unmarshal([]byte(b), &st); err != nil {
				t.Fatal(err)
			}
			if st.Witnesses == nil {
				t.Fatalf("no witnesses in the log status: %s", b)
			}
			if ok(&st) {
				return &st
			}
		}
		t.Fatalf("log status never showed %s:\n%s\nserve: %s", what, raw, s.stderr)
		return nil
	}
	st := await("the quorum met and the checkpoint cosigned", func(st *status) bool {
		w := st.Witnesses
		return w.QuorumMet && w.Cosigned && st.Unpublished == 0 && len(w.Witnesses) == 2 &&
			w.Witnesses[0].LastCosigned != nil && w.Witnesses[1].LastCosigned != nil
	})
	if w := st.Witnesses; w.Quorum != 2 || w.Reason != "" || !w.Witnesses[0].Up || w.Witnesses[0].Name != "w1.custody.test" {
		t.Errorf("quorum met: %+v", w)
	}

	ws[1].stop()
	st = await("the quorum lost, w2 down and leaves unpublished", func(st *status) bool {
		w := st.Witnesses
		return !w.QuorumMet && !w.Witnesses[1].Up && w.Witnesses[1].LastError != "" && st.Unpublished > 0
	})
	if w := st.Witnesses; !strings.Contains(w.Reason, "witness quorum not met: 1 of 2 witnesses answer, 2 needed") || !w.Cosigned || !w.Witnesses[0].Up {
		t.Errorf("quorum lost: reason %q, cosigned %v (the published checkpoint still is), w1 up %v", w.Reason, w.Cosigned, w.Witnesses[0].Up)
	}

	// w2 back: the waiting leaves are published under a cosigned
	// checkpoint. (serve's shutdown also waits for a quorum it lacks.)
	ws[1].start()
	await("the quorum met again, nothing unpublished", func(st *status) bool {
		w := st.Witnesses
		return w.QuorumMet && w.Cosigned && w.Witnesses[1].Up && st.Unpublished == 0
	})
}
