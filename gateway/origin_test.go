package gateway

import (
	"context"
	"testing"

	"github.com/custody-gateway/custody"
)

// TestTrafficRecordedByOrigin: a client's request, a canary probe and an
// eval case (the in-process route client's two kinds of traffic) and an
// eval run's record are each recorded as what they are; the synthetic ones
// are canary traffic as every leaf version has recorded them.
func TestTrafficRecordedByOrigin(t *testing.T) {
	h := newHarness(t, testConfig)
	route := h.gw.Routes()[0]
	body := []byte(chat(route.Model(), "hi", false))
	send := map[custody.Origin]func() error{
		custody.OriginClient: func() error {
			if resp, out := h.do("POST", "/v1/chat/completions", "sk-acme", string(body)); resp.StatusCode != 200 {
				t.Fatalf("client: %d %s", resp.StatusCode, out)
			}
			return nil
		},
		custody.OriginCanary: func() error { _, err := route.Canary(context.Background(), body, ""); return err },
		custody.OriginEval:   func() error { _, err := route.Eval(context.Background(), body); return err },
	}
	for _, want := range []custody.Origin{custody.OriginClient, custody.OriginCanary, custody.OriginEval} {
		if err := send[want](); err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		tx := h.rec.last(t)
		if tx.From() != want || tx.Canary != (want != custody.OriginClient) || (want == custody.OriginClient) != (tx.Origin == "") {
			t.Errorf("%s traffic recorded with origin %q, canary %v", want, tx.Origin, tx.Canary)
		}
	}
	run := &custody.Transaction{RequestedModel: route.Model(), Route: route.Index(), Verdict: custody.Verified, Status: 200}
	if _, err := h.gw.RecordEval(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if tx := h.rec.last(t); tx.Origin != custody.OriginEval || !tx.Canary || tx.Endpoint != EndpointEval {
		t.Errorf("an eval run recorded with origin %q, canary %v, endpoint %q", tx.Origin, tx.Canary, tx.Endpoint)
	}
}
