package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Start serves s on a new listener at addr ("127.0.0.1:0" picks a free
// port) until ctx ends, then shuts down gracefully. It returns once the
// listener is open, with the base URL clients use (e.g.
// "http://127.0.0.1:41234/v1") and a channel that receives the serving
// error (nil after a clean shutdown) and is then closed.
func (s *Server) Start(ctx context.Context, addr string) (baseURL string, done <-chan error, err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("sim: listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	ch := make(chan error, 1)
	go func() {
		defer close(ch)
		err := srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		ch <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return "http://" + l.Addr().String() + "/v1", ch, nil
}

// Run serves s at addr until ctx ends (what `custody sim` does).
func (s *Server) Run(ctx context.Context, addr string) error {
	_, done, err := s.Start(ctx, addr)
	if err != nil {
		return err
	}
	return <-done
}
