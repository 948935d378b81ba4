// Package notify POSTs custody's events (fallbacks, path changes,
// violations, canary failures) to configured webhooks, signed with
// HMAC-SHA256, retried with exponential backoff, always off the request
// path: Notify never blocks, and a full queue drops its oldest event (and
// counts it) rather than slow the gateway.
//
// A receiver verifies the Custody-Signature header:
//
//	Custody-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>
//
// and should refuse a t too far from its own clock (replayed deliveries).
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody"
)

// Hook is one webhook.
type Hook struct {
	URL    string
	Secret string
	// Events are the event types sent; empty means all.
	Events []string
}

// Config configures a Notifier; zero values mean the documented defaults.
type Config struct {
	Hooks []Hook
	// Attempts per delivery; 0 means 6 (about 30 s of backoff).
	Attempts int
	// Backoff is the first retry's delay, doubled each time; 0 means 500ms.
	Backoff time.Duration
	// Queue bounds undelivered events; 0 means 1024.
	Queue  int
	Client *http.Client
	Logger *slog.Logger
	Now    func() time.Time
}

// Notifier delivers events to webhooks in the background.
type Notifier struct {
	cfg Config
	// queue holds pointers: a channel's buffer is one object that every
	// collection scans whole, and 1,024 events in place were 160 KB of it.
	queue   chan *custody.Event
	dropped atomic.Int64
	wg      sync.WaitGroup
	stop    chan struct{}
}

// New starts the delivery goroutine; Close stops it.
func New(cfg Config) *Notifier {
	if cfg.Attempts == 0 {
		cfg.Attempts = 6
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.Queue == 0 {
		cfg.Queue = 1024
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	n := &Notifier{cfg: cfg, queue: make(chan *custody.Event, cfg.Queue), stop: make(chan struct{})}
	n.wg.Add(1)
	go n.run()
	return n
}

// Notify queues an event for every hook that wants its type. It never
// blocks: when the queue is full the oldest event is dropped.
func (n *Notifier) Notify(e custody.Event) {
	if n == nil || len(n.cfg.Hooks) == 0 {
		return
	}
	for {
		select {
		case n.queue <- &e:
			return
		default:
		}
		select {
		case <-n.queue:
			n.dropped.Add(1)
		default:
		}
	}
}

// Dropped is the number of events dropped because the queue was full.
func (n *Notifier) Dropped() int64 { return n.dropped.Load() }

// Close delivers what is queued (each delivery bounded by its retries or
// ctx) and stops.
func (n *Notifier) Close(ctx context.Context) {
	close(n.stop)
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (n *Notifier) run() {
	defer n.wg.Done()
	for {
		select {
		case e := <-n.queue:
			n.deliverAll(*e)
		case <-n.stop:
			for {
				select {
				case e := <-n.queue:
					n.deliverAll(*e)
				default:
					return
				}
			}
		}
	}
}

// payload is the JSON body of a delivery.
type payload struct {
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id,omitempty"`
	Tenant    string    `json:"tenant,omitempty"`
	Model     string    `json:"model,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Code      string    `json:"code,omitempty"`
	Detail    string    `json:"detail,omitempty"`
}

func (n *Notifier) deliverAll(e custody.Event) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "primary>backup" reads as written
	enc.Encode(payload{Type: e.Type, Time: e.Time.UTC(), RequestID: e.RequestID, Tenant: e.Tenant,
		Model: e.Model, Provider: e.Provider, Code: string(e.Code), Detail: e.Detail})
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	for _, h := range n.cfg.Hooks {
		if len(h.Events) > 0 && !slices.Contains(h.Events, e.Type) {
			continue
		}
		if err := n.deliver(h, e.Type, body); err != nil {
			n.cfg.Logger.Warn("webhook delivery failed", "url", h.URL, "event", e.Type, "err", err)
		}
	}
}

// deliver POSTs body to h, retrying network errors, 5xx and 429 with
// exponential backoff.
func (n *Notifier) deliver(h Hook, typ string, body []byte) error {
	delay := n.cfg.Backoff
	var last error
	for attempt := range n.cfg.Attempts {
		if attempt > 0 {
			select {
			case <-time.After(delay):
			case <-n.stop:
				if attempt > 1 {
					return fmt.Errorf("stopping after %d attempts: %w", attempt, last)
				}
			}
			delay *= 2
		}
		req, err := http.NewRequest(http.MethodPost, h.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Custody-Event", typ)
		req.Header.Set("Custody-Signature", Sign(h.Secret, n.cfg.Now(), body))
		resp, err := n.cfg.Client.Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return nil
		}
		last = fmt.Errorf("HTTP %d", resp.StatusCode)
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return last // the receiver refuses it: retrying will not help
		}
	}
	return last
}

// Sign is the Custody-Signature header value for body at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Custody-Signature header against body, accepting
// timestamps within tolerance of now. Receivers written in Go can use it.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for _, part := range bytes.Split([]byte(header), []byte(",")) {
		k, v, _ := bytes.Cut(part, []byte("="))
		switch string(k) {
		case "t":
			ts = string(v)
		case "v1":
			sig = string(v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("notify: malformed signature header")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("notify: signature timestamp outside tolerance")
	}
	want := Sign(secret, time.Unix(sec, 0), body)
	if !hmac.Equal([]byte(want), []byte("t="+ts+",v1="+sig)) {
		return fmt.Errorf("notify: bad signature")
	}
	return nil
}
