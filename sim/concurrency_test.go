package sim

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var testNonce = regexp.MustCompile(`q\d\dx\d{4}`)

// TestConcurrentCleanTraffic runs 16 goroutines of mixed requests against
// a small pool (pages are reused constantly) and checks that, without
// faults, no request ever reads a foreign page: with tags none fails, and
// no answer carries another request's nonce. Run with -race.
func TestConcurrentCleanTraffic(t *testing.T) {
	for _, tags := range []bool{false, true} {
		t.Run(fmt.Sprintf("tags=%v", tags), func(t *testing.T) {
			ts := newTestServer(t, Config{OwnershipTags: tags, Pages: 96, PageTokens: 4})
			const workers, each = 16, 12
			var wg sync.WaitGroup
			errs := make(chan string, workers*each)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						nonce := fmt.Sprintf("q%02dx%04d", g, i)
						p := fmt.Sprintf("request %d of worker %d carries %s among words", i, g, nonce)
						var r reply
						var text string
						switch i % 4 {
						case 0:
							r = post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, p), "X-Tenant", fmt.Sprint("t", g%3))
							text = r.resp.text()
						case 1:
							r = post(t, ts, "/v1/chat/completions", chatBody("sim-1", true, p))
							text = r.streamText()
						case 2:
							r = post(t, ts, "/v1/completions", map[string]any{"model": "sim-1", "prompt": p})
							text = r.resp.text()
						case 3:
							r = post(t, ts, "/v1/embeddings", map[string]any{"model": "sim-1", "input": p})
							text = nonce
						}
						if r.status != 200 {
							errs <- fmt.Sprintf("worker %d req %d: status %d %s", g, i, r.status, r.body)
							continue
						}
						if !strings.Contains(text, nonce) {
							errs <- fmt.Sprintf("worker %d req %d: own nonce missing from %q", g, i, text)
						}
						for _, n := range testNonce.FindAllString(text, -1) {
							if n != nonce {
								errs <- fmt.Sprintf("worker %d req %d: foreign nonce %s", g, i, n)
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
	}
}

// TestConcurrentStaleKVFailsClosed mixes clean requests with stale-kv ones
// on a tagged pool: clean requests are always served clean, and a faulted
// one is either refused (500) or, when there was no stale page to read,
// served from its own pages only. Never a 200 with foreign data.
func TestConcurrentStaleKVFailsClosed(t *testing.T) {
	ts := newTestServer(t, Config{OwnershipTags: true, AllowFaultHeader: true, Pages: 96, PageTokens: 4})
	const workers, each = 16, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	errs := make(chan string, workers*each)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				nonce := fmt.Sprintf("q%02dx%04d", g, i)
				p := fmt.Sprintf("worker %d request %d secret %s", g, i, nonce)
				var hdr []string
				faulted := (g+i)%2 == 0
				if faulted {
					hdr = []string{"X-Sim-Fault", string(FaultStaleKV)}
				}
				r := post(t, ts, "/v1/chat/completions", chatBody("sim-1", false, p), hdr...)
				if faulted && r.status == 500 {
					mu.Lock()
					refused++
					mu.Unlock()
					continue
				}
				if r.status != 200 {
					errs <- fmt.Sprintf("worker %d req %d (faulted %v): status %d", g, i, faulted, r.status)
					continue
				}
				for _, n := range testNonce.FindAllString(r.resp.text(), -1) {
					if n != nonce {
						errs <- fmt.Sprintf("worker %d req %d (faulted %v): 200 with foreign nonce %s", g, i, faulted, n)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if refused == 0 {
		t.Error("no stale-kv request was refused: the fault never read a stale page")
	}
	t.Logf("%d of %d stale-kv requests failed closed", refused, workers*each/2)
}
