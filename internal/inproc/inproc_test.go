package inproc

import (
	"context"
	"net/http"
	"testing"
)

func TestGet(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("GET /a", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("q=" + r.URL.Query().Get("q"))) })
	h.HandleFunc("GET /none", func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{{"/a?q=1", 200, "q=1"}, {"/none", 200, ""}, {"/missing", 404, "404 page not found\n"}} {
		status, body, err := Get(context.Background(), h, tc.path)
		if err != nil || status != tc.status || string(body) != tc.body {
			t.Errorf("Get(%s) = %d %q %v, want %d %q", tc.path, status, body, err, tc.status, tc.body)
		}
	}
}
