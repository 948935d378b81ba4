// Package sim is custody's reference upstream: an OpenAI-compatible server
// (chat completions, completions, embeddings, models; Anthropic Messages,
// count_tokens and OpenAI Responses on the same stack, dialects.go) with a
// deterministic
// toy model behind a small but honest imitation of a disaggregated serving
// stack, so that every integrity failure custody defends against can be
// reproduced on demand and custody's checks proven against it.
//
// The serving stack, in the order a request meets it:
//
//   - admission: the prompt is counted with o200k_base exactly as OpenAI
//     bills it (tokenize.Chat for chat, Count for completions); a prompt over
//     Config.Capacity gets an honest 400 context_length_exceeded.
//   - prefix cache (cache.go): a chat prompt's rendered words, in blocks of
//     a KV page, are looked up under the request's cache_salt (vLLM's
//     field; absent is ""); the blocks found are reported in
//     usage.prompt_tokens_details.cached_tokens and their prefill is
//     skipped, so the time to first token is Config.PrefillDelay per
//     uncached token. cache_prompt: false (llama.cpp's field) bypasses it.
//     Bounded by Config.CacheBlocks, least recently used evicted first.
//     The faults shared-cache (the salt ignored) and shared-cache-timing
//     (ignored for the prefill time only, cached_tokens honest-looking)
//     break it.
//   - prefill: the prompt's words are written into pages of a shared paged
//     KV pool (kv.go). Freed pages go back to the pool without being zeroed,
//     as in real stacks.
//   - decode: the answer is generated only from what the pages hold (model.go):
//     nonce-like words found in the pages are echoed, then words are chosen by
//     logits hashed from the page contents. A decode that reads another
//     request's stale pages therefore produces text carrying that request's
//     words, exactly the production incident.
//
// With Config.OwnershipTags every page written by prefill carries
// (request, tenant, generation) and decode refuses, with a 500, to read a
// page it does not own: the fix that makes stale-KV fail closed.
//
// Faults (faults.go) break one layer each, on every request (Config.Faults)
// or per request (header X-Sim-Fault, when Config.AllowFaultHeader). Each is
// caught by a named custody check; clean traffic is caught by none.
//
// Request headers the simulator reads:
//
//	X-Request-Id   echoed back in the response header X-Request-Id (as vLLM
//	               does with --enable-request-id-headers); generated if absent.
//	X-Tenant       the tenant written into page ownership tags; "anonymous"
//	               if absent.
//	X-Sim-Fault    name[,name]: faults for this request (AllowFaultHeader only).
package sim
