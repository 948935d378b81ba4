package gateway

import (
	"context"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestTrafficRecordedBySender: a client's request, a canary probe and an
// eval case (the in-process route client's two kinds of traffic) and an
// eval run's record are each recorded as what they are; the synthetic ones
// are canary traffic as every leaf version has recorded them.
func TestTrafficRecordedBySender(t *testing.T) {
	h := newHarness(t, testConfig)
	route := h.gw.Routes()[0]
	body := []byte(chat(route.Model(), "hi", false))
	send := map[custody.Sender]func() error{
		custody.SenderClient: func() error {
			if resp, out := h.do("POST", "/v1/chat/completions", "sk-acme", string(body)); resp.StatusCode != 200 {
				t.Fatalf("client: %d %s", resp.StatusCode, out)
			}
			return nil
		},
		custody.SenderCanary: func() error { _, err := route.Canary(context.Background(), body, ""); return err },
		custody.SenderEval:   func() error { _, err := route.Eval(context.Background(), body); return err },
	}
	for _, want := range []custody.Sender{custody.SenderClient, custody.SenderCanary, custody.SenderEval} {
		if err := send[want](); err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		tx := h.rec.last(t)
		if tx.From() != want || tx.Canary != (want != custody.SenderClient) || (want == custody.SenderClient) != (tx.Sender == "") {
			t.Errorf("%s traffic recorded with sender %q, canary %v", want, tx.Sender, tx.Canary)
		}
	}
	run := &custody.Transaction{RequestedModel: route.Model(), Route: route.Index(), Verdict: custody.Verified, Status: 200}
	if _, err := h.gw.RecordEval(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if tx := h.rec.last(t); tx.Sender != custody.SenderEval || !tx.Canary || tx.Endpoint != EndpointEval {
		t.Errorf("an eval run recorded with sender %q, canary %v, endpoint %q", tx.Sender, tx.Canary, tx.Endpoint)
	}
}
