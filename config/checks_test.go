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
