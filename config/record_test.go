package config

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRecordRemovesSecretsAndTracksPolicies(t *testing.T) {
	c := &Config{
		AdminKeys: []string{"adm-SECRET1"},
		Index:     Index{Backend: "postgres", DSN: "postgres://u:SECRET2@h/db"},
		Tenants:   []Tenant{{ID: "acme", APIKeys: []string{"sk-SECRET3"}, Policy: "strict"}},
		Providers: []Provider{{Name: "p", Kind: "openai", APIKey: "SECRET4"}},
		Webhooks:  []Webhook{{URL: "http://h/", Secret: "SECRET5"}},
		Policies:  []Policy{{Name: "strict", Fallback: "deny", Regions: []string{"eu-west-1"}, RequirePinned: true}},
	}
	d1, p1, err := c.Record()
	if err != nil {
		t.Fatal(err)
	}
	all, _ := canonical(c)
	if strings.Contains(string(all)+string(p1), "SECRET") {
		t.Fatalf("a secret in the record: %s %s", all, p1)
	}
	var ps map[string]map[string]any
	if err := json.Unmarshal(p1, &ps); err != nil || ps["strict"]["fallback"] != "deny" || ps["strict"]["require_pinned"] != true {
		t.Fatalf("policies %s: %v", p1, err)
	}
	// A rotated secret is not a change of rules; a policy change is.
	c.Providers[0].APIKey = "SECRET6"
	if d2, _, _ := c.Record(); d2 != d1 {
		t.Fatal("the digest depends on a secret")
	}
	c.Policies[0].Fallback = "allow"
	d3, p3, _ := c.Record()
	if d3 == d1 || string(p3) == string(p1) {
		t.Fatal("a policy change did not change the record")
	}
}
