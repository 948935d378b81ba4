package eval

// When runs happen besides RunOnce: path changes (Trigger), the start and
// the suites' intervals (Run), and the retries of failed runs.

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Trigger is a path change on the route: every suite covering it stops
// counting as passed at once, and runs again in the background. Triggers
// coalesce as canary triggers do.
func (r *Runner) Trigger(model string, index int) {
	for _, j := range r.jobs {
		if j.rt.Model != model || j.rt.Index != index {
			continue
		}
		j.gen.Add(1)
		r.mu.Lock()
		r.publish(passKey{j.suite.Name, model, index}, false)
		r.mu.Unlock()
		r.triggerJob(j, TriggerPathChange)
	}
}

func (r *Runner) triggerJob(j *job, why Trigger) {
	j.runs.Trigger(&r.wg, func() {
		if r.ctx.Err() == nil {
			r.runLocked(r.ctx, j, why, false)
		}
	})
}

// Wait waits for triggered runs in flight.
func (r *Runner) Wait() { r.wg.Wait() }

// Run runs every suite on every route it covers at once (a route is
// ineligible for require_evals until then), then each suite on its
// interval (± 10%) and each failed run again after a backoff (RetryMin),
// until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	if r.cfg.RetryMin > 0 {
		r.retries.Store(true)
		defer r.retries.Store(false)
	}
	var wg sync.WaitGroup
	for _, j := range r.jobs {
		if !j.kept {
			r.triggerJob(j, TriggerStart)
		}
		if j.suite.Interval <= 0 {
			continue
		}
		wg.Go(func() {
			for {
				wait := time.Duration(float64(j.suite.Interval) * (0.9 + 0.2*rand.Float64()))
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				r.triggerJob(j, TriggerInterval)
			}
		})
	}
	wg.Wait()
	<-ctx.Done() // retries are armed until then
}

// scheduleRetry arms the retry of a failed run (with backoff) or, after a
// passing one, disarms it.
func (r *Runner) scheduleRetry(j *job, ok bool) {
	j.tmu.Lock()
	defer j.tmu.Unlock()
	if j.retry != nil {
		j.retry.Stop()
		j.retry = nil
	}
	if ok {
		j.fails = 0
		return
	}
	j.fails++
	if !r.retries.Load() {
		return
	}
	wait := r.cfg.RetryMax
	if iv := j.suite.Interval; iv > 0 && iv < wait {
		wait = iv
	}
	if n := j.fails - 1; n < 32 && r.cfg.RetryMin<<n < wait && r.cfg.RetryMin<<n > 0 {
		wait = r.cfg.RetryMin << n
	}
	j.retry = time.AfterFunc(wait, func() {
		if r.ctx.Err() == nil && r.retries.Load() {
			r.triggerJob(j, TriggerRetry)
		}
	})
}
