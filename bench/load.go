package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The request every mode serves: a short chat, non-streaming or
// streaming, 16 completion tokens from the simulator.
var (
	chatBody   = []byte(`{"model":"sim-1","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the benefits of a transparency log for an inference gateway in one sentence."}],"max_tokens":16}`)
	streamBody = []byte(`{"model":"sim-1","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Summarise the benefits of a transparency log for an inference gateway in one sentence."}],"max_tokens":16,"stream":true}`)
)

// loader sends requests to one target.
type loader struct {
	client *http.Client
	url    string // …/v1/chat/completions
}

func newLoader(base string) *loader {
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &loader{client: &http.Client{Transport: t, Timeout: 30 * time.Second}, url: base + "/v1/chat/completions"}
}

func (l *loader) close() { l.client.CloseIdleConnections() }

// do sends one request. With firstByte it returns when the first byte of
// the body arrived (then reads the rest); else when the whole body did.
func (l *loader) do(ctx context.Context, stream bool) (firstByte time.Time, err error) {
	body := chatBody
	if stream {
		body = streamBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return firstByte, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+benchKey)
	resp, err := l.client.Do(req)
	if err != nil {
		return firstByte, err
	}
	defer resp.Body.Close()
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
		return firstByte, fmt.Errorf("reading the first byte: %w", err)
	}
	firstByte = time.Now()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return firstByte, err
	}
	if resp.StatusCode != http.StatusOK {
		return firstByte, fmt.Errorf("status %d", resp.StatusCode)
	}
	return firstByte, nil
}

// closedResult is a closed-loop run: as fast as conc workers go.
type closedResult struct {
	N, Errors int64
	Elapsed   time.Duration
	FirstErr  error
}

func (r closedResult) rps() float64 { return float64(r.N) / r.Elapsed.Seconds() }

// closedLoop runs conc workers back to back for d (or until n requests
// if n > 0).
func (l *loader) closedLoop(ctx context.Context, conc int, d time.Duration, n int64) closedResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ok, bad, issued atomic.Int64
	var firstErr atomic.Pointer[error]
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if n > 0 && issued.Add(1) > n {
					return
				}
				if n <= 0 && time.Now().After(deadline) {
					return
				}
				if _, err := l.do(ctx, false); err != nil {
					bad.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	r := closedResult{N: ok.Load(), Errors: bad.Load(), Elapsed: time.Since(start)}
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	return r
}

// openResult is an open-loop run: latencies measured from each request's
// intended send time, so a stall delays the requests scheduled behind it
// in the measurement too (no coordinated omission).
type openResult struct {
	Lat      []time.Duration
	Errors   int64
	Late     time.Duration // the latest any send started after its intended time
	FirstErr error
}

// openLoop sends n requests at rate per second, each in its own
// goroutine started at its intended time; stream measures time to first
// byte, else time to the whole response.
func (l *loader) openLoop(ctx context.Context, rate float64, n int, stream bool) openResult {
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, n)
	okv := make([]bool, n)
	var bad atomic.Int64
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	var late time.Duration
	start := time.Now().Add(5 * time.Millisecond)
	for i := range n {
		intended := start.Add(time.Duration(i) * interval)
		if d := time.Until(intended); d > 0 {
			time.Sleep(d)
		} else if -d > late {
			late = -d
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fb, err := l.do(ctx, stream)
			if err != nil {
				bad.Add(1)
				firstErr.CompareAndSwap(nil, &err)
				return
			}
			end := time.Now()
			if stream {
				end = fb
			}
			lat[i], okv[i] = end.Sub(intended), true
		}()
	}
	wg.Wait()
	r := openResult{Errors: bad.Load(), Late: late}
	for i, ok := range okv {
		if ok {
			r.Lat = append(r.Lat, lat[i])
		}
	}
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	return r
}
