package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// TestClientDisconnectCancelsUpstream: a client that goes away mid-stream
// cancels the upstream call (its connection is closed, never reused), and
// the transaction is still recorded, as client_closed.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	h := newHarness(t, testConfig)
	cancelled := make(chan struct{})
	h.primary.stream = func(w io.Writer, id string, usage int) {
		for i := 0; ; i++ {
			_, err := fmt.Fprintf(w, "data: {\"id\":%q,\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"}}]}\n\n", id, i)
			w.(http.Flusher).Flush()
			if err != nil {
				close(cancelled)
				return
			}
			select {
			case <-h.primary.last.Load().Context().Done():
				close(cancelled)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "go on forever", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q", line)
	}
	resp.Body.Close() // the client goes away
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream call was not cancelled when the client left")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.rec.mu.Lock()
		n := len(h.rec.txs)
		h.rec.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the abandoned stream was not recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tx := h.rec.last(t); tx.Code != custody.CodeClientClosed || tx.Verdict != custody.Rejected {
		t.Errorf("recorded %s %s", tx.Verdict, tx.Code)
	}
}
