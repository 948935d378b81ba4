// Package contamination catches a response that carries another request's
// data: the stale-KV-cache and cross-tenant leakage of SPEC §6
// (cross_request_contamination). It has two mechanisms behind one Detector.
//
// Fingerprints. Every admitted prompt is normalised (see normalize.go), cut
// into word k-grams, each k-gram hashed with SipHash-2-4 under a key drawn
// from crypto/rand at New (so the fingerprints are useless without the
// process's key and no prompt text is kept), and winnowed (window Window) to
// a small set of fingerprints. The Detector remembers the fingerprints of the
// last MaxPrompts prompts younger than TTL. A Scanner hashes every k-gram of a
// response as it streams and looks it up: a response is contaminated when it
// carries a run of at least MinRun distinct fingerprints that all belong to
// one other remembered request and that are absent from the request's own
// prompt. Fingerprints remembered for more than MaxSharedBy requests are
// "popular" (boilerplate, common phrases) and neither count nor break a run.
//
// Secrets. Synthetic canary tenants register secret strings (AddSecret). A
// Scanner runs an Aho-Corasick automaton over the normalised response; a
// secret found there is contamination unless the request's own prompt held
// it (the canary's own request). The automaton is rebuilt on every change and
// swapped in atomically, so scans never take a lock for it.
//
// Both mechanisms work over the same normalised byte stream, chunk by chunk:
// a k-gram or secret split across chunks is found exactly as in one piece.
package contamination
