package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOverviewOnlyConfiguredModels: requests naming models that do not
// exist add no card to the overview (a tenant could otherwise add cards
// without end); they are counted in one line.
func TestOverviewOnlyConfiguredModels(t *testing.T) {
	e := newEnv(t, false)
	for i := range 5 {
		body, _ := json.Marshal(map[string]any{"model": fmt.Sprintf("ghost-%d", i),
			"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		if resp, b := e.do("POST", "/v1/chat/completions", "sk-acme", body); resp.StatusCode != 400 {
			t.Fatalf("unknown model: %d %s", resp.StatusCode, b)
		}
	}
	o := e.operator()
	o.login()
	var page string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, page = o.get("/ui/")
		if strings.Contains(page, `id="unconfigured">5 more`) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(page, `id="unconfigured">5 more`) {
		t.Errorf("the unknown models' requests are not counted")
	}
	if strings.Contains(page, `id="model-ghost-`) {
		t.Errorf("an unknown model got a card")
	}
	if !strings.Contains(page, `id="model-sim-1"`) {
		t.Errorf("a configured model lost its card")
	}
}
