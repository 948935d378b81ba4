package canary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Enrollment is the identity probe's reference sample of one route: the
// answers of the route, when it was trusted, to fixed prompts. It holds no
// text: the prompts are regenerated from PromptSeed and the answers are
// kept as token hashes and logprobs. Settings are fixed at enrollment so
// that every later sample is taken exactly the same way.
type Enrollment struct {
	Version     int       `json:"version"`
	Route       string    `json:"route"`
	Created     time.Time `json:"created"`
	PromptSeed  uint64    `json:"prompt_seed"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"`
	Seed        *int      `json:"seed,omitempty"`
	// Logprobs: samples asked for logprobs, TopLogprobs alternatives each.
	Logprobs    bool `json:"logprobs"`
	TopLogprobs int  `json:"top_logprobs"`
	// Model and Fingerprint are what the route reported when enrolled.
	Model       string `json:"model"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// Samples[p][s] is sample s of prompt p.
	Samples [][]Sample `json:"samples"`
}

// Sample is one answer: a hash per token, and, when the upstream gives
// them, the token's logprob and its top alternatives.
type Sample struct {
	T []uint64  `json:"t"`
	L []float64 `json:"l,omitempty"`
	K [][]Alt   `json:"k,omitempty"`
}

// Alt is one top-k alternative: token hash and logprob.
type Alt struct {
	T uint64  `json:"t"`
	L float64 `json:"l"`
}

const enrollmentVersion = 1

// Bounds on an enrollment file, which is read back from disk.
const (
	maxEnrollPrompts = 64
	maxEnrollSamples = 64
	maxSampleTokens  = 1024
	maxAlts          = 20
	maxEnrollBytes   = 32 << 20
)

var errBadEnrollment = errors.New("bad enrollment")

// ParseEnrollment decodes and validates an enrollment file.
func ParseEnrollment(b []byte) (*Enrollment, error) {
	if len(b) > maxEnrollBytes {
		return nil, fmt.Errorf("%w: %d bytes is too large", errBadEnrollment, len(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e Enrollment
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadEnrollment, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", errBadEnrollment)
	}
	if err := e.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadEnrollment, err)
	}
	return &e, nil
}

func (e *Enrollment) validate() error {
	switch {
	case e.Version != enrollmentVersion:
		return fmt.Errorf("version %d (want %d)", e.Version, enrollmentVersion)
	case e.MaxTokens < 1 || e.MaxTokens > maxSampleTokens:
		return fmt.Errorf("max_tokens %d out of range", e.MaxTokens)
	case math.IsNaN(e.Temperature) || e.Temperature < 0 || e.Temperature > 2:
		return fmt.Errorf("temperature %v out of range", e.Temperature)
	case e.TopLogprobs < 0 || e.TopLogprobs > maxAlts:
		return fmt.Errorf("top_logprobs %d out of range", e.TopLogprobs)
	case len(e.Samples) < 1 || len(e.Samples) > maxEnrollPrompts:
		return fmt.Errorf("%d prompts out of range", len(e.Samples))
	}
	for p, ss := range e.Samples {
		if len(ss) < 2 || len(ss) > maxEnrollSamples {
			return fmt.Errorf("prompt %d: %d samples out of range", p, len(ss))
		}
		for i, s := range ss {
			if err := s.validate(); err != nil {
				return fmt.Errorf("prompt %d sample %d: %w", p, i, err)
			}
		}
	}
	return nil
}

func (s Sample) validate() error {
	switch {
	case len(s.T) > maxSampleTokens:
		return fmt.Errorf("%d tokens", len(s.T))
	case s.L != nil && len(s.L) != len(s.T):
		return fmt.Errorf("%d logprobs for %d tokens", len(s.L), len(s.T))
	case s.K != nil && len(s.K) != len(s.T):
		return fmt.Errorf("%d alternative lists for %d tokens", len(s.K), len(s.T))
	}
	for _, l := range s.L {
		if !finiteLogprob(l) {
			return fmt.Errorf("logprob %v out of range", l)
		}
	}
	for _, alts := range s.K {
		if len(alts) > maxAlts {
			return fmt.Errorf("%d alternatives", len(alts))
		}
		for _, a := range alts {
			if !finiteLogprob(a.L) {
				return fmt.Errorf("alternative logprob %v out of range", a.L)
			}
		}
	}
	return nil
}

// enrollmentPath is dir/<route>.json with the route name made a safe file
// name: "sim-1/sim" -> "sim-1_sim-<hash>.json" (the hash keeps two routes
// whose names differ only in replaced characters apart).
func enrollmentPath(dir, route string) string {
	var b strings.Builder
	for _, r := range route {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	h := fnv.New32a()
	h.Write([]byte(route))
	return filepath.Join(dir, fmt.Sprintf("%s-%08x.json", b.String(), h.Sum32()))
}

// loadEnrollment reads the route's enrollment from dir; (nil, nil) when
// there is none.
func loadEnrollment(dir, route string) (*Enrollment, error) {
	b, err := os.ReadFile(enrollmentPath(dir, route))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading enrollment: %w", err)
	}
	e, err := ParseEnrollment(b)
	if err != nil {
		return nil, err
	}
	if e.Route != route {
		return nil, fmt.Errorf("%w: file is for route %q", errBadEnrollment, e.Route)
	}
	return e, nil
}

// saveEnrollment writes e durably (internal/durable): a crash leaves the
// old enrollment or the new, never half.
func saveEnrollment(dir string, e *Enrollment) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving enrollment: %w", err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("saving enrollment: %w", err)
	}
	if err := durable.WriteFile(enrollmentPath(dir, e.Route), b, 0o600); err != nil {
		return fmt.Errorf("saving enrollment: %w", err)
	}
	return nil
}
