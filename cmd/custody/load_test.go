package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// load sends chat requests from workers goroutines, round-robin over
// targets (every fourth streamed when streams is set), until stop is
// called; stop returns the ids of the acknowledged transactions: answers
// that ended (a stream with its [DONE]), whatever their verdict, for
// custody records rejections as it records successes.
func load(targets []*server, workers int, streams bool) (stop func() []string) {
	var (
		mu    sync.Mutex
		acked []string
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := targets[w%len(targets)]
			for i := 0; ; i++ {
				select {
				case <-done:
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
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}()
	}
	return func() []string {
		close(done)
		wg.Wait()
		return acked
	}
}
