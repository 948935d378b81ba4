//go:build unix

package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/contractwatch"
	"github.com/custody-gateway/custody/index"
)

// contractEvents puts the drops and recoveries of the routes' contract
// pass rates (contractwatch) on the timeline and sends them to the
// webhooks, as canaryEvent does a canary's: the watcher sees each
// transaction on the request's goroutine, after its durable append
// (recorder.Config.OnRecord), and the events go out from one goroutine of
// their own, in the order they happened, never on the request path.
type contractEvents struct {
	watch  *contractwatch.Watcher // built once; reconfigured on reload
	queue  chan custody.Event
	stop   chan struct{}
	done   chan struct{}
	logger *slog.Logger
}

// contractEventsQueue bounds the events waiting for the index: a drop or
// a recovery is one per crossing, so a full queue means the index is
// stuck, and the event is logged and dropped rather than the request held.
const contractEventsQueue = 256

func contractWatchConfig(cfg *config.Config) contractwatch.Config {
	c := contractwatch.Config{Window: cfg.Checks.ContractWindow, MinSamples: cfg.Checks.ContractMinSamples}
	if r := cfg.Checks.ContractMinRate; r != nil {
		c.MinRate = *r
	}
	return c
}

// startContractEvents starts the goroutine that records the events with
// index and hands them to notify.
func startContractEvents(cfg *config.Config, idx index.Index, notify func(index.Event), logger *slog.Logger) *contractEvents {
	c := &contractEvents{watch: contractwatch.New(contractWatchConfig(cfg)), queue: make(chan custody.Event, contractEventsQueue),
		stop: make(chan struct{}), done: make(chan struct{}), logger: logger}
	record := func(e custody.Event) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := idx.AddEvents(ctx, e); err != nil {
			logger.Error("recording a contract event", "err", err)
		}
		cancel()
		notify(e)
		logger.Warn("contract pass rate", "route", e.Route, "detail", e.Detail)
	}
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				for { // what was queued before the close still goes out
					select {
					case e := <-c.queue:
						record(e)
					default:
						return
					}
				}
			case e := <-c.queue:
				record(e)
			}
		}
	}()
	return c
}

// observe is the recorder's OnRecord part: cheap, safe for concurrent use.
func (c *contractEvents) observe(tx *custody.Transaction) {
	e, ok := c.watch.Observe(tx)
	if !ok {
		return
	}
	select {
	case c.queue <- e:
	default:
		c.logger.Error("contract event dropped: the queue to the index is full", "route", e.Route, "detail", e.Detail)
	}
}

// close stops the goroutine once the events already queued are recorded.
func (c *contractEvents) close() {
	close(c.stop)
	<-c.done
}
