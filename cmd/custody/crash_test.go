package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrashLosesNoAcknowledgedTransaction kills the real binary with
// SIGKILL under concurrent load, restarts it on the same data, and proves
// that every transaction a client saw succeed is in the log and the index,
// and that the log audits clean.
func TestCrashLosesNoAcknowledgedTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test runs the load for seconds")
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, twoTenants)
	s := startServe(t, dir, "--config", cfg)

	var (
		mu    sync.Mutex
		acked []string
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := chatBody("sim-1", fmt.Sprintf("crash test worker %d request %d", w, i), i%4 == 0)
				req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer sk-acme")
				resp, err := client.Do(req)
				if err != nil {
					continue // the crash
				}
				b := make([]byte, 64<<10)
				n, _ := readFull(resp, b)
				resp.Body.Close()
				// Acknowledged: a 200 whose body ended (a stream with [DONE]).
				if resp.StatusCode == 200 && (!strings.Contains(body, `"stream":true`) || strings.Contains(string(b[:n]), "data: [DONE]")) {
					mu.Lock()
					acked = append(acked, resp.Header.Get("Custody-Request-Id"))
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	s.kill()
	close(stop)
	wg.Wait()
	if len(acked) < 50 {
		t.Fatalf("only %d acknowledged before the crash; load too light to prove anything", len(acked))
	}
	t.Logf("%d transactions acknowledged before SIGKILL", len(acked))

	s2 := startServe(t, dir, "--config", cfg)
	for _, id := range acked {
		resp, body := get(t, s2.URL+"/v1/custody/records?request_id="+id, "adm-test")
		if resp.StatusCode != 200 || !strings.Contains(body, id) {
			t.Fatalf("acknowledged %s is not in the index after restart: %d %s", id, resp.StatusCode, body)
		}
		if r, _ := get(t, s2.URL+"/v1/custody/receipts/"+id, "sk-acme"); r.StatusCode != 200 {
			t.Fatalf("acknowledged %s has no receipt after restart: %d", id, r.StatusCode)
		}
	}
	s2.stop()
	if code, out, errOut := runCmd(t, dir, "audit", "--log", dir+"/custody-data/ledger/log"); code != 0 {
		t.Fatalf("audit after crash: %d %s %s", code, out, errOut)
	}
}

func readFull(resp *http.Response, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := resp.Body.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
