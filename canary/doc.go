// Package canary runs custody's canaries: synthetic requests sent through
// custody's own pipeline, one route at a time, that ask not "did the route
// answer?" but "did it answer this, and is it still the same model?".
//
// A health check passes through every incident custody exists for: a stack
// that swaps in a placeholder for a long prompt, serves a cheaper model
// under the requested name, or decodes from another request's KV pages
// still answers 200. Each probe here targets one of those failures:
//
//   - echo: a fresh random nonce must come back, and no foreign nonce or
//     live canary secret with it (stale KV shows up as the latter).
//   - needle: nonces planted at several depths of a long prompt sized to a
//     fraction of the route's verified capacity must all come back
//     (placeholder substitution loses them).
//   - oversize (opt-in): a prompt just over capacity, sent straight to the
//     upstream, must be refused with a 4xx (not answered 200).
//   - secret: a synthetic canary tenant sends a unique secret that is
//     registered with the contamination matcher, so any live response that
//     carries it is caught.
//   - identity: a two-sample permutation test between an enrolled
//     reference sample and a fresh one (outputs and logprobs on fixed
//     prompts) catches a different model behind the same name.
//   - cache (opt-in): two synthetic tenants send the same fresh prefix; the
//     second must not find it cached, by cached_tokens or by an exact
//     Mann-Whitney test of its time to first byte against a cold control
//     (cache_shared), while the first tenant's repeat must hit (else the
//     probe is inconclusive: it would be blind).
//
// A probe's outcome is ok, failed, skipped (it cannot run on the route: no
// known capacity, a capacity too small for its prompt; Runner.Plan lists
// these before any run) or inconclusive (identity: the upstream errored
// or timed out even after retries, which says nothing about the model;
// cache: the route showed no cache hit to test against, or an upstream
// error). Only failures make a route amber and red; an inconclusive run
// leaves the route's health as it was.
//
// A Runner runs the probes of every route on a schedule (and at once on
// Trigger), keeps each route's health (green, amber, red) and publishes the
// red routes as quarantined through a lock-free Quarantined. The gateway
// implements Target, the one boundary: it sends a canary request through
// custody's checks on exactly one route, with no fallback.
//
// Nothing here stores or reports prompt or response text: evidence is
// numbers and random ids, enrollment files hold token hashes and logprobs.
package canary
