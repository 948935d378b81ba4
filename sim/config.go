package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// Config configures a Server. The zero value is a clean, fast simulator
// serving "sim-1".
type Config struct {
	// SampleSeed, when not zero, makes sampling without a request seed
	// (temperature > 0, no "seed") reproducible: the k-th such request
	// with a given body samples from a seed of (SampleSeed, body, k)
	// instead of a random one. The samples stay fresh per request, and
	// the same in any order of concurrent requests: a measurement's runs
	// repeat exactly. Zero (the default): random, as a real engine.
	SampleSeed uint64
	// Models are the model names served; nil means ["sim-1"]. A response's
	// `model` is the requested name (unless a fault says otherwise).
	Models []string
	// Capacity is the number of prompt tokens prefill accepts; 0 means
	// 32768. A prompt over it gets 400 context_length_exceeded.
	Capacity int
	// Faults are applied to every request (or, with FaultRate, to a
	// share of them).
	Faults []Fault
	// FaultRate, in (0, 1), applies Faults to that share of the requests
	// served, spread evenly: the k-th request (from 1) carries them when
	// ⌊k·FaultRate⌋ > ⌊(k−1)·FaultRate⌋, so 0.25 is every fourth; 0 (and
	// 1) means every request. A route that is sometimes wrong, as a
	// provider's whose tool parser fails now and then.
	FaultRate float64
	// AllowFaultHeader honours X-Sim-Fault: name[,name] per request.
	AllowFaultHeader bool
	// OwnershipTags makes every KV page carry (request, tenant,
	// generation); a decode reading a page it does not own fails the
	// request closed with a 500.
	OwnershipTags bool
	// TokenDelay is the model time per generated token; 0 means none.
	TokenDelay time.Duration
	// PrefillDelay is the model time per prompt token prefill computes
	// (the prompt's billed tokens less those the prefix cache holds),
	// spent before the first token; 0 means none. It makes a prefix-cache
	// hit visible in the time to first token (e.g. 20µs).
	PrefillDelay time.Duration
	// Sleep spends prefill's model time; nil means the wall clock. A test
	// that must order cold and warm prompts on a loaded machine passes a
	// clock of its own (it may record d and return at once). It is called
	// for every prefill, with d 0 for a prompt the cache holds whole.
	Sleep func(ctx context.Context, d time.Duration) error
	// CacheBlocks bounds the prefix cache (cache.go), in blocks of
	// PageTokens words, least recently used evicted first; 0 means 65536.
	CacheBlocks int
	// Variant 0 is the honest model; n > 0 a close variant whose answers and
	// logprobs differ slightly (for identity tests).
	Variant int
	// PageTokens is the number of toy-model tokens (words) per KV page; 0
	// means 16. Pages is the size of the pool; 0 means 8192.
	PageTokens, Pages int
	// Counter counts prompt tokens for usage and capacity; nil means
	// o200k_base (tokenize.Lookup), which takes a moment to load: pass one
	// already loaded to start many servers quickly.
	Counter tokenize.Counter
	// Template is the chat template the simulator renders each chat
	// request with before counting it, as llama.cpp does; nil means the
	// built-in ChatML template (template.Builtin).
	Template *template.Template
	// MaxBodyBytes bounds request bodies; 0 means 64 MiB.
	MaxBodyBytes int64
	// Clock stamps each stream chunk's created (as llama.cpp does, per
	// chunk); nil means time.Now.
	Clock func() time.Time
}

const (
	defaultModel      = "sim-1"
	defaultCapacity   = 32768
	defaultPageTokens = 16
	defaultPages      = 8192
	defaultMaxBody    = 64 << 20
	defaultMaxTokens  = 32
	// maxMaxTokens bounds max_tokens as engines bound it by the
	// context; agents ask for 32000 (Claude Code) and the toy model
	// stops on its own long before (its end-of-text logit grows each
	// step).
	maxMaxTokens = 131072
)

// withDefaults returns cfg with zero fields filled, or an error naming
// every bad field.
func (cfg Config) withDefaults() (Config, error) {
	var errs []error
	if len(cfg.Models) == 0 {
		cfg.Models = []string{defaultModel}
	}
	for _, m := range cfg.Models {
		if m == "" {
			errs = append(errs, errors.New("models: empty model name"))
		}
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = defaultCapacity
	}
	if !(cfg.FaultRate >= 0 && cfg.FaultRate <= 1) {
		errs = append(errs, fmt.Errorf("fault_rate: %v is not between 0 and 1", cfg.FaultRate))
	}
	if cfg.PageTokens == 0 {
		cfg.PageTokens = defaultPageTokens
	}
	if cfg.Pages == 0 {
		cfg.Pages = defaultPages
	}
	if cfg.CacheBlocks == 0 {
		cfg.CacheBlocks = defaultCacheBlocks
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = defaultMaxBody
	}
	if cfg.Capacity < 0 {
		errs = append(errs, fmt.Errorf("capacity: %d is negative", cfg.Capacity))
	}
	if cfg.PageTokens < 0 || cfg.Pages < 0 {
		errs = append(errs, fmt.Errorf("pages: geometry %d×%d is negative", cfg.Pages, cfg.PageTokens))
	}
	if cfg.Variant < 0 {
		errs = append(errs, fmt.Errorf("variant: %d is negative", cfg.Variant))
	}
	if cfg.TokenDelay < 0 {
		errs = append(errs, fmt.Errorf("token delay: %v is negative", cfg.TokenDelay))
	}
	if cfg.PrefillDelay < 0 {
		errs = append(errs, fmt.Errorf("prefill delay: %v is negative", cfg.PrefillDelay))
	}
	if cfg.CacheBlocks < 0 {
		errs = append(errs, fmt.Errorf("cache blocks: %d is negative", cfg.CacheBlocks))
	}
	for _, f := range cfg.Faults {
		if _, err := ParseFault(string(f)); err != nil {
			errs = append(errs, fmt.Errorf("faults: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("sim config: %w", err)
	}
	return cfg, nil
}
