// Package inproc calls an http.Handler within the process and keeps its
// answer in memory: how the console reads the admin API, and the admin
// API reads the log's own static files, without a socket.
package inproc

import (
	"bytes"
	"context"
	"net/http"
)

// Get serves GET path (with its query) through h and returns the status
// and body of the answer.
func Get(ctx context.Context, h http.Handler, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, nil, err
	}
	w := &recorder{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.body.Bytes(), nil
}

// recorder is an in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
