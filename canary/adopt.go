package canary

// Adopt takes over what old knows of the routes both runners probe (the
// same model, route index and target name): their health, so that a
// quarantine survives a config reload, their last reports and the cache
// probe's verdicts. Routes old did not probe start green. Call it before
// r serves requests or runs.
func (r *Runner) Adopt(old *Runner) {
	if old == nil {
		return
	}
	old.mu.Lock()
	defer old.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	oldQuarantined, oldShared := *old.quarantined.Load(), *old.cacheShared.Load()
	quarantined, shared := map[routeKey]bool{}, map[routeKey]bool{}
	for k, rt := range r.byKey {
		o := old.byKey[k]
		if o == nil || o.t.Name() != rt.t.Name() {
			continue
		}
		rt.health = o.health
		if o.last != nil {
			last := *o.last
			rt.last = &last
		}
		if oldQuarantined[k] {
			quarantined[k] = true
		}
		if oldShared[k] {
			shared[k] = true
		}
	}
	r.quarantined.Store(&quarantined)
	r.cacheShared.Store(&shared)
}
