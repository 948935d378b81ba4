package sim

import (
	"strings"
	"testing"
)

// TestDriftedSnapshotsListCodesLastFirst: the snapshots that
// snapshot-drift and model-lie serve repeat a prompt's codes in reverse
// order, so that one answer shows the change to an evaluation that asks
// for them in order; the honest model keeps their order.
func TestDriftedSnapshotsListCodesLastFirst(t *testing.T) {
	ts := newTestServer(t, Config{AllowFaultHeader: true})
	const codes = "Repeat the codes in order: alpha1111 bravo2222 charlie3333"
	ask := func(fault string) string {
		var h []string
		if fault != "" {
			h = []string{"X-Sim-Fault", fault}
		}
		r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, codes), h...)
		if r.status != 200 {
			t.Fatalf("%s: status %d", fault, r.status)
		}
		return r.resp.text()
	}
	if got := ask(""); !strings.HasPrefix(got, "alpha1111 bravo2222 charlie3333") {
		t.Errorf("honest answer %q does not list the codes in order", got)
	}
	for _, f := range []string{"snapshot-drift", "model-lie"} {
		if got := ask(f); !strings.HasPrefix(got, "charlie3333 bravo2222 alpha1111") {
			t.Errorf("%s: answer %q does not list the codes last first", f, got)
		}
	}
}
