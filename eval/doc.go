// Package eval runs the team's own evaluation suites through custody's
// pipeline and keeps, per suite and route, whether the route's current
// execution path has passed them: what policies[].require_evals holds a
// route to.
//
// A suite is a JSONL file, one case a line (Parse documents the fields):
// a chat request (messages or prompt, tools, sampling settings) and the
// assertions its answer must meet (contains, not_contains, regex, equals,
// json_schema, tool_call, max_latency). A run sends every case once on one
// route, rate-limited, as custody's synthetic tenant custody:eval, and
// passes when the share of passing cases reaches the suite's threshold.
//
// Runs happen at start, on every path change of a covered route (a new
// provider/model/fingerprint tuple: Runner.Trigger), on the suite's
// interval and on demand (custody eval). A path change makes the route
// ineligible for the suites at once, until a run on the new path passes.
//
// A suite is pinned to a baseline: the first passing run on a route (or
// an explicit pin) records every case's outcome and an outcome digest;
// later runs name the cases that regressed (passed at the baseline, fail
// now) and those whose answer changed. Outcome digests are HMAC-SHA-256
// under a key kept in the data dir: equal answers compare equal across
// runs, and nobody reading the public log can test guesses of an answer.
//
// Nothing here stores or reports case or answer text: reports hold case
// ids, pass counts, reasons that name an assertion ("contains[1] missing")
// and digests.
package eval
