package eval

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
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

// saveBaseline writes the baseline durably (internal/durable): before, a
// fixed temporary name and no fsync could lose or tear it on a crash.
func saveBaseline(dir string, bl *baseline) error {
	path := baselineFile(dir, bl.Suite, bl.Route)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing eval baseline: %w", err)
	}
	b, err := json.MarshalIndent(bl, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(path, append(b, '\n'), 0o600); err != nil {
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

// compare sets the report's baseline, regressions and changed cases, and
// records a new baseline when pinned or when none exists for this suite
// version and the run passed.
func (r *Runner) compare(rep *Report, pin bool) {
	var bl *baseline
	if r.cfg.Dir != "" {
		var err error
		if bl, err = loadBaseline(r.cfg.Dir, rep.Suite, rep.Route); err != nil {
			bl = nil // unreadable: as if none; a passing run replaces it
		}
	}
	if bl != nil && bl.SuiteDigest != rep.SuiteDigest {
		bl = nil // the suite changed since: its outcomes do not compare
	}
	if bl == nil {
		if mem := r.memBaseline(rep); mem != nil && mem.SuiteDigest == rep.SuiteDigest {
			bl = mem
		}
	}
	if bl != nil && !pin {
		rep.Baseline = &BaselineRef{Time: bl.Time, Path: bl.Path, Pinned: bl.Pinned}
		was := map[string]baselineCase{}
		for _, c := range bl.Cases {
			was[c.ID] = c
		}
		for _, c := range rep.Cases {
			b, ok := was[c.ID]
			switch {
			case !ok:
			case b.Pass && !c.Pass:
				rep.Regressions = append(rep.Regressions, c.ID)
				rep.Changed = append(rep.Changed, c.ID)
			case b.Digest != c.Digest:
				rep.Changed = append(rep.Changed, c.ID)
			}
		}
		return
	}
	if !pin && !rep.OK {
		return
	}
	nb := &baseline{Suite: rep.Suite, SuiteDigest: rep.SuiteDigest, Route: rep.Route, Path: rep.Path, Time: rep.Time, Pinned: pin}
	for _, c := range rep.Cases {
		nb.Cases = append(nb.Cases, baselineCase{ID: c.ID, Pass: c.Pass, Digest: c.Digest})
	}
	rep.Baseline = &BaselineRef{Time: nb.Time, Path: nb.Path, Pinned: pin, Recorded: true}
	if r.cfg.Dir != "" {
		if err := saveBaseline(r.cfg.Dir, nb); err == nil {
			return
		}
	}
	r.setMemBaseline(nb)
}

// memBaseline is the baseline kept in memory, for a Runner without Dir
// (or whose Dir cannot be written).
func (r *Runner) memBaseline(rep *Report) *baseline {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mem[rep.Suite+"\x00"+rep.Route]
}

func (r *Runner) setMemBaseline(b *baseline) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		r.mem = map[string]*baseline{}
	}
	r.mem[b.Suite+"\x00"+b.Route] = b
}
