package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// secretKeys are the YAML keys whose values Record removes: credentials
// custody holds (admin and tenant keys, the upstream API key, the index
// DSN with its password, webhook secrets). Key digests go too: they
// identify keys, and rotating one does not change the rules.
var secretKeys = map[string]bool{
	"admin_keys": true, "admin_key_sha256": true, "api_keys": true, "api_key_sha256": true,
	"api_key": true, "dsn": true, "secret": true,
}

// Record describes the configuration for the ledger's config leaf:
// digest is hex SHA-256 of the effective config (defaults filled) with
// every secret removed, as canonical JSON (YAML keys, sorted); policies is
// the canonical JSON of the policies in force, by name. Neither holds a
// secret, so both may go into the public log.
func (c *Config) Record() (digest string, policies json.RawMessage, err error) {
	all, err := canonical(c)
	if err != nil {
		return "", nil, fmt.Errorf("recording the config: %w", err)
	}
	sum := sha256.Sum256(all)
	byName := map[string]any{}
	for _, p := range c.Policies {
		v, err := generic(p)
		if err != nil {
			return "", nil, fmt.Errorf("recording policy %s: %w", p.Name, err)
		}
		byName[p.Name] = v
	}
	policies, err = json.Marshal(byName)
	if err != nil {
		return "", nil, fmt.Errorf("recording the policies: %w", err)
	}
	return hex.EncodeToString(sum[:]), policies, nil
}

// canonical is v through its YAML form, secrets removed, as JSON with
// sorted keys.
func canonical(v any) ([]byte, error) {
	g, err := generic(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

func generic(v any) (any, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	var g any
	if err := yaml.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return redact(g), nil
}

func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if secretKeys[k] {
				delete(t, k)
				continue
			}
			t[k] = redact(x)
		}
	case []any:
		for i, x := range t {
			t[i] = redact(x)
		}
	}
	return v
}
