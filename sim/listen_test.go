package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestStart(t *testing.T) {
	s, err := New(Config{Counter: o200k(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	base, done, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"sim-1","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var body testResponse
	err = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || body.text() == "" {
		t.Fatalf("status %d, %v", res.StatusCode, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestUnknownRoutes(t *testing.T) {
	ts := newTestServer(t, Config{})
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/chat/completions", 405},
		{"POST", "/v1/models", 405},
		{"GET", "/v2/whatever", 404},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body testResponse
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != tc.status || err != nil || body.Error == nil {
			t.Errorf("%s %s: status %d, error %+v, %v", tc.method, tc.path, res.StatusCode, body.Error, err)
		}
	}
}
