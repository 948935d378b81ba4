package config

import (
	"strings"
	"testing"
)

func TestChecksOnIndexUnavailable(t *testing.T) {
	base := "tenants: [{id: a, anonymous_loopback: true}]\n"
	c, err := Parse("f.yaml", []byte(base), env(nil))
	if err != nil || c.Checks.OnIndexUnavailable != "flag" {
		t.Fatalf("checks.on_index_unavailable default %q, want flag: %v", c.Checks.OnIndexUnavailable, err)
	}
	c, err = Parse("f.yaml", []byte(base+"checks: {on_index_unavailable: reject}\n"), env(nil))
	if err != nil || c.Checks.OnIndexUnavailable != "reject" {
		t.Fatalf("reject: %q %v", c.Checks.OnIndexUnavailable, err)
	}
	_, err = Parse("f.yaml", []byte(base+"checks: {on_index_unavailable: ignore}\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), `checks.on_index_unavailable: "ignore" is not flag or reject`) {
		t.Errorf("ignore: %v", err)
	}
}

// TestChecksContractWatch: the contract pass-rate watch's keys, their
// defaults (window 200, 50 answers, 0.9), 0 turning the events off, and
// each bad value refused under its key.
func TestChecksContractWatch(t *testing.T) {
	base := "tenants: [{id: a, anonymous_loopback: true}]\n"
	c, err := Parse("f.yaml", []byte(base), env(nil))
	if err != nil || c.Checks.ContractWindow != 200 || c.Checks.ContractMinSamples != 50 || c.Checks.ContractMinRate == nil || *c.Checks.ContractMinRate != 0.9 {
		t.Fatalf("defaults: %+v %v", c.Checks, err)
	}
	c, err = Parse("f.yaml", []byte(base+"checks: {contract_window: 20, contract_min_rate: 0}\n"), env(nil))
	if err != nil || c.Checks.ContractWindow != 20 || c.Checks.ContractMinSamples != 20 || *c.Checks.ContractMinRate != 0 {
		t.Fatalf("a window of 20, events off: %+v %v", c.Checks, err)
	}
	_, err = Parse("f.yaml", []byte(base+"checks: {contract_window: -1, contract_min_rate: 1.5}\n"), env(nil))
	for _, want := range []string{"checks.contract_window: must not be negative", "checks.contract_min_rate: 1.5 is not between 0 and 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	_, err = Parse("f.yaml", []byte(base+"checks: {contract_window: 10, contract_min_samples: 11}\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "checks.contract_min_samples: 11 is not between 1 and contract_window (10)") {
		t.Errorf("min samples over the window: %v", err)
	}
}
