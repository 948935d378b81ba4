package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// loadRun is load in progress.
type loadRun struct {
	mu    sync.Mutex
	ids   []string
	done  chan struct{}
	wg    sync.WaitGroup
	start time.Time
}

// load sends chat requests from workers goroutines, round-robin over
// targets (every fourth streamed when streams is set), until stop is
// called; stop returns the ids of the acknowledged transactions: answers
// that ended (a stream with its [DONE]), whatever their verdict, for
// custody records rejections as it records successes.
func load(targets []*server, workers int, streams bool) *loadRun {
	l := &loadRun{done: make(chan struct{}), start: time.Now()}
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			target := targets[w%len(targets)]
			for i := 0; ; i++ {
				select {
				case <-l.done:
					return
				default:
				}
				stream := streams && i%4 == 0
				req, _ := http.NewRequest("POST", target.URL+"/v1/chat/completions",
					strings.NewReader(chatBody("sim-1", fmt.Sprintf("load worker %d request %d", w, i), stream)))
				req.Header.Set("Authorization", "Bearer sk-acme")
				resp, err := client.Do(req)
				if err != nil {
					continue // the crash under test
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				id := resp.Header.Get("Custody-Request-Id")
				if err != nil || id == "" || resp.Header.Get("Custody-Verdict") == "" ||
					(stream && resp.StatusCode == 200 && !strings.Contains(string(body), "data: [DONE]")) {
					continue
				}
				l.mu.Lock()
				l.ids = append(l.ids, id)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// until waits until n transactions are acknowledged, or max has passed
// since the load began: a count, not a duration, so that a busy machine
// is not asked for more than a quiet one.
func (l *loadRun) until(n int, max time.Duration) {
	for {
		l.mu.Lock()
		acked := len(l.ids)
		l.mu.Unlock()
		if acked >= n || time.Since(l.start) >= max {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the load and returns the acknowledged transactions' ids.
func (l *loadRun) stop() []string {
	close(l.done)
	l.wg.Wait()
	return l.ids
}
