// Package check holds custody's integrity checks, one per file, each a
// small pure unit with its own table test. A check returns nil when it
// passes and a *custody.Error carrying its code when it fails; the
// gateway decides, by policy, whether a failure rejects or flags, and
// records the outcome under the check's name (custody.Check*).
//
// What each check catches, and the incident it comes from, is in
// docs/checks.md.
package check
