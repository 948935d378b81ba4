package canary

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// answer is the part of a chat completion the probes read.
type answer struct {
	Model       string
	Fingerprint string
	Text        string
	Tokens      []tokenLogprob // nil when the upstream gave no logprobs
	// PromptTokens is usage.prompt_tokens; CachedTokens is
	// usage.prompt_tokens_details.cached_tokens, HasCached whether the
	// upstream reported it (0 when not).
	PromptTokens int
	CachedTokens int
	HasCached    bool
}

// tokenLogprob is one generated token with its logprob and alternatives.
type tokenLogprob struct {
	Token   string
	Logprob float64
	Top     []altLogprob
}

type altLogprob struct {
	Token   string
	Logprob float64
}

type wireResponse struct {
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				Token       string  `json:"token"`
				Logprob     float64 `json:"logprob"`
				TopLogprobs []struct {
					Token   string  `json:"token"`
					Logprob float64 `json:"logprob"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// errNoAnswer is a 200 body that holds no answer.
var errNoAnswer = errors.New("response holds no answer")

// maxTokensParsed bounds the logprob entries read from one answer.
const maxTokensParsed = 4096

// parseAnswer reads a chat completion body (untrusted upstream bytes).
func parseAnswer(body []byte) (answer, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return answer{}, fmt.Errorf("decoding chat completion: %w", err)
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil || w.Choices[0].Message.Content == nil {
		return answer{}, errNoAnswer
	}
	c := w.Choices[0]
	a := answer{Model: w.Model, Fingerprint: w.SystemFingerprint, Text: *c.Message.Content}
	if u := w.Usage; u != nil {
		a.PromptTokens = max(u.PromptTokens, 0)
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
			a.CachedTokens, a.HasCached = max(*d.CachedTokens, 0), true
		}
	}
	if c.Logprobs != nil && len(c.Logprobs.Content) > 0 {
		n := min(len(c.Logprobs.Content), maxTokensParsed)
		a.Tokens = make([]tokenLogprob, n)
		for i, t := range c.Logprobs.Content[:n] {
			if !finiteLogprob(t.Logprob) {
				return answer{}, fmt.Errorf("token %d: logprob %v out of range", i, t.Logprob)
			}
			tl := tokenLogprob{Token: t.Token, Logprob: t.Logprob}
			for _, alt := range t.TopLogprobs[:min(len(t.TopLogprobs), 20)] {
				if !finiteLogprob(alt.Logprob) {
					return answer{}, fmt.Errorf("token %d: alternative logprob %v out of range", i, alt.Logprob)
				}
				tl.Top = append(tl.Top, altLogprob{Token: alt.Token, Logprob: alt.Logprob})
			}
			a.Tokens[i] = tl
		}
	}
	return a, nil
}

func finiteLogprob(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v <= 0 && v > -1e4 }

// words are the answer's tokens for comparison: the logprob tokens when
// given (exactly what the model emitted), else whitespace-split text.
func (a answer) words() []string {
	if len(a.Tokens) > 0 {
		out := make([]string, len(a.Tokens))
		for i, t := range a.Tokens {
			out[i] = t.Token
		}
		return out
	}
	return strings.Fields(a.Text)
}
