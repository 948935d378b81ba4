package eval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// baseline is a suite's reference outcomes on a route, as stored in
// Dir/SUITE/ROUTE.json (ROUTE path-escaped). It holds ids, booleans and
// digests only.
type baseline struct {
	Suite       string         `json:"suite"`
	SuiteDigest string         `json:"suite_digest"`
	Route       string         `json:"route"`
	Path        Path           `json:"path"`
	Time        time.Time      `json:"time"`
	Pinned      bool           `json:"pinned"`
	Cases       []baselineCase `json:"cases"`
}

type baselineCase struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Digest string `json:"digest"`
}

func baselineFile(dir, suite, route string) string {
	return filepath.Join(dir, suite, url.PathEscape(route)+".json")
}

// loadBaseline reads the baseline; nil, nil when there is none.
func loadBaseline(dir, suite, route string) (*baseline, error) {
	b, err := os.ReadFile(baselineFile(dir, suite, route))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading eval baseline: %w", err)
	}
	var bl baseline
	if err := json.Unmarshal(b, &bl); err != nil {
		return nil, fmt.Errorf("reading eval baseline %s: %w", baselineFile(dir, suite, route), err)
	}
	return &bl, nil
}

// saveBaseline writes the baseline atomically (temp file, rename).
func saveBaseline(dir string, bl *baseline) error {
	path := baselineFile(dir, bl.Suite, bl.Route)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing eval baseline: %w", err)
	}
	b, err := json.MarshalIndent(bl, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing eval baseline: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing eval baseline: %w", err)
	}
	return nil
}

// digestKey reads or creates the outcome-digest key in dir (mode 0600);
// with no dir, a fresh key lives in memory.
func digestKey(dir string) ([]byte, error) {
	key := make([]byte, 32)
	if dir == "" {
		rand.Read(key)
		return key, nil
	}
	path := filepath.Join(dir, "digest.key")
	if b, err := os.ReadFile(path); err == nil {
		k, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(k) != 32 {
			return nil, fmt.Errorf("eval digest key %s: not 64 hex digits", path)
		}
		return k, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading the eval digest key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("writing the eval digest key: %w", err)
	}
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return digestKey(dir) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("writing the eval digest key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("writing the eval digest key: %w", err)
	}
	return key, f.Sync()
}

// outcomeDigest is HMAC-SHA-256 over the suite version, the case, its
// outcome and the answer it judged (content and tool calls), truncated to
// 128 bits, in hex.
func outcomeDigest(key []byte, suiteDigest, id string, pass bool, a answer) string {
	m := hmac.New(sha256.New, key)
	field := func(s string) {
		fmt.Fprintf(m, "%d:", len(s))
		m.Write([]byte(s))
	}
	field(suiteDigest)
	field(id)
	if pass {
		field("pass")
	} else {
		field("fail")
	}
	field(a.Content)
	for _, tc := range a.ToolCalls {
		field(tc.Name)
		field(tc.Arguments)
	}
	return hex.EncodeToString(m.Sum(nil)[:16])
}
