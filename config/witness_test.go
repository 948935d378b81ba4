package config

import (
	"strings"
	"testing"
)

func TestWitnessConfig(t *testing.T) {
	const vkey = "w1.example+cb9862db+BP9dDCy9UjCUwzoZOW6lA7suEfeBM02QxbNJOsljVu52"
	const base = "tenants: [{id: t, api_keys: [k]}]\nproviders: [{name: sim, kind: sim}]\nmodels: [{name: m, context_window: 1024, routes: [{provider: sim}]}]\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"good", "ledger:\n  witnesses:\n    - {name: w1.example, vkey: \"" + vkey + "\", url: \"http://127.0.0.1:7380/\"}\n  witness_policy: {quorum: 1}\n", ""},
		{"bad key", "ledger:\n  witnesses:\n    - {name: w1.example, vkey: nonsense, url: \"http://h/\"}\n", "ledger.witnesses[0].vkey"},
		{"name differs", "ledger:\n  witnesses:\n    - {name: w2.example, vkey: \"" + vkey + "\", url: \"http://h/\"}\n", "the key is named \"w1.example\""},
		{"bad url", "ledger:\n  witnesses:\n    - {name: w1.example, vkey: \"" + vkey + "\", url: \"ftp://h/\"}\n", "ledger.witnesses[0].url"},
		{"quorum too big", "ledger:\n  witnesses:\n    - {name: w1.example, vkey: \"" + vkey + "\", url: \"http://h/\"}\n  witness_policy: {quorum: 2}\n", "ledger.witness_policy.quorum"},
		{"quorum without witnesses", "ledger:\n  witness_policy: {quorum: 1}\n", "ledger.witness_policy.quorum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("custody.yaml", []byte(base+tc.yaml), func(string) (string, bool) { return "", false })
			if tc.want == "" {
				if err != nil || len(c.Ledger.Witnesses) != 1 || c.Ledger.WitnessPolicy.Quorum != 1 {
					t.Fatalf("%+v: %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
