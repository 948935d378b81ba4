package contamination

import (
	"slices"
	"strings"
)

// secretEntry is one registered secret in normalised form.
type secretEntry struct {
	norm  string
	label string
}

// AddSecret registers a canary secret under label (re-adding replaces the
// label). Secrets are matched in the normalised text (see normalizer), so a
// secret is found whatever its case and punctuation in the response; a
// secret with no letters or digits matches nothing and is ignored. Canary
// secrets should be random and at least 16 characters long, so that no
// honest response carries one by chance. The secret is kept in memory (it is
// synthetic, not a tenant's data) until RemoveSecret.
func (d *Detector) AddSecret(secret, label string) {
	norm := string(normalizeString(secret))
	if norm == "" {
		return
	}
	d.secretMu.Lock()
	defer d.secretMu.Unlock()
	d.secrets[secret] = secretEntry{norm: norm, label: label}
	d.rebuildLocked()
}

// RemoveSecret unregisters a secret. Scanners already started keep matching
// it until they finish.
func (d *Detector) RemoveSecret(secret string) {
	d.secretMu.Lock()
	defer d.secretMu.Unlock()
	if _, ok := d.secrets[secret]; !ok {
		return
	}
	delete(d.secrets, secret)
	d.rebuildLocked()
}

// rebuildLocked compiles the current secrets and publishes the automaton.
// Distinct secrets with the same normalised form are one pattern; it keeps
// the smallest label so the result does not depend on map order.
func (d *Detector) rebuildLocked() {
	byNorm := make(map[string]string, len(d.secrets))
	for _, e := range d.secrets {
		if l, ok := byNorm[e.norm]; !ok || e.label < l {
			byNorm[e.norm] = e.label
		}
	}
	pats := make([]pattern, 0, len(byNorm))
	for n, l := range byNorm {
		pats = append(pats, pattern{norm: []byte(n), label: l})
	}
	slices.SortFunc(pats, func(a, b pattern) int { return strings.Compare(string(a.norm), string(b.norm)) })
	d.ac.Store(buildAutomaton(pats))
}
