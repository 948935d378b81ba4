package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// TestPlainAnswerSentBeforeBookkeeping: a checked, recorded answer goes
// out before custody does its own bookkeeping (the log line, metrics,
// the span). The observer, which custody tells of the transaction after
// the answer, holds on until the client has read the whole answer: with
// the answer still in custody's buffer, the client would wait for the
// observer and the observer for the client, until the observer gives up.
func TestPlainAnswerSentBeforeBookkeeping(t *testing.T) {
	obs := &holdingObserver{read: make(chan struct{}), gaveUp: make(chan bool, 1)}
	h := newHarnessWith(t, testConfig, func(o *Options) { o.Observer = obs })
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "hi", false)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(obs.read)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), `"choices"`) {
		t.Fatalf("status %d, err %v, body %s", resp.StatusCode, err, body)
	}
	if <-obs.gaveUp {
		t.Fatal("the client had the answer only after custody's bookkeeping: the answer waited in custody's buffer")
	}
}

// holdingObserver holds each transaction's report until read is closed,
// or gives up after two seconds (and says so on gaveUp).
type holdingObserver struct {
	read   chan struct{}
	gaveUp chan bool
}

func (o *holdingObserver) Transaction(*custody.Transaction) {
	select {
	case <-o.read:
		o.gaveUp <- false
	case <-time.After(2 * time.Second):
		o.gaveUp <- true
	}
}
func (*holdingObserver) Refusal(custody.Code)           {}
func (*holdingObserver) Upstream(string, time.Duration) {}
