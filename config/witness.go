package config

import (
	"fmt"
	"net/url"
	"strings"

	fnote "github.com/transparency-dev/formats/note"
)

// validateWitnesses checks ledger.witnesses and ledger.witness_policy.
func validateWitnesses(l *Ledger, bad func(key, format string, args ...any)) {
	seen := map[string]bool{}
	for i, w := range l.Witnesses {
		key := fmt.Sprintf("ledger.witnesses[%d]", i)
		if w.Name == "" {
			bad(key+".name", "required")
		} else if seen[w.Name] {
			bad(key+".name", "%q is listed twice", w.Name)
		}
		seen[w.Name] = true
		if v, err := fnote.NewVerifierForCosignatureV1(w.VKey); err != nil {
			bad(key+".vkey", "not a witness verifier key (name+hash+base64, as litewitness prints it): %v", err)
		} else if v.Name() != w.Name {
			bad(key+".vkey", "the key is named %q, the witness %q", v.Name(), w.Name)
		}
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(w.URL, " \t#") {
			bad(key+".url", "%q is not an http(s) URL", w.URL)
		}
	}
	q := l.WitnessPolicy.Quorum
	switch {
	case q < 0 || q > len(l.Witnesses):
		bad("ledger.witness_policy.quorum", "must be between 1 and the number of witnesses (%d), got %d", len(l.Witnesses), q)
	case q > 0 && len(l.Witnesses) == 0:
		bad("ledger.witness_policy.quorum", "no ledger.witnesses to form a quorum")
	}
	if l.WitnessPolicy.Timeout < 0 {
		bad("ledger.witness_policy.timeout", "must not be negative")
	}
}
