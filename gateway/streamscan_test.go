package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// slowDetector's Admit blocks until released, as fingerprinting a huge
// prompt would; its scanner finds any text containing "LEAK".
type slowDetector struct{ release chan struct{} }

func (d *slowDetector) Admit(id, tenant, prompt string) Scanner {
	<-d.release
	return &markScanner{}
}

type markScanner struct {
	mu   sync.Mutex
	seen strings.Builder
}

func (s *markScanner) Write(t Text) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen.WriteString(t.S)
}
func (s *markScanner) End()       {}
func (s *markScanner) Close(bool) {}
func (s *markScanner) Finding() (Finding, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Finding{Detail: "marker"}, strings.Contains(s.seen.String(), "LEAK")
}

// TestStreamNeverWaitsForTheScanner: a stream is relayed while the
// prompt's fingerprints are still being computed; the text it carried is
// scanned once they are, and contamination found then still ends the
// stream before its [DONE].
func TestStreamNeverWaitsForTheScanner(t *testing.T) {
	h := newHarness(t, testConfig)
	det := &slowDetector{release: make(chan struct{})}
	h.gw.contam = det
	h.primary.stream = func(w io.Writer, id string, usage int) {
		for _, word := range []string{"fine ", "LEAK ", "more "} {
			fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", id, word)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":3}}\n\n", id, usage)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "hi", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	got := make(chan string, 1)
	go func() { l, _ := br.ReadString('\n'); got <- l }()
	select {
	case l := <-got:
		if !strings.Contains(l, "fine") {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		close(det.release)
		t.Fatal("the stream waited for the contamination scanner")
	}
	close(det.release)
	rest, _ := io.ReadAll(br)
	if strings.Contains(string(rest), "[DONE]") || !strings.Contains(string(rest), `"code":"cross_request_contamination"`) {
		t.Fatalf("held text was not scanned before the end:\n%s", rest)
	}
	if tx := h.rec.last(t); tx.Code != custody.CodeCrossRequestContamination {
		t.Errorf("recorded %s", tx.Code)
	}
}
