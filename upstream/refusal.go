package upstream

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Refusal is what custody reads from an upstream's non-2xx answer: whether
// it refused the prompt as longer than its context (in any engine's
// dialect), with the figures it gave, and a message safe to show the
// client.
type Refusal struct {
	// ContextOverflow: the upstream refused the prompt as too long.
	ContextOverflow bool
	// PromptTokens and ContextTokens are the upstream's figures, when it
	// gave them (0 otherwise).
	PromptTokens, ContextTokens int
	// Message is the upstream's own message, sanitised (Sanitize): no
	// credentials, no markup, at most maxRefusalMessage bytes; "" when it
	// gave none worth passing on.
	Message string
}

// maxRefusalMessage bounds the upstream message passed to a client.
const maxRefusalMessage = 300

// The dialects of context overflow. OpenAI says code
// "context_length_exceeded"; llama.cpp type "exceed_context_size_error"
// with n_prompt_tokens and n_ctx; vLLM (and OpenAI's message) "maximum
// context length is N tokens. However, you requested M tokens"; SGLang
// "The input (M tokens) is longer than the model's context length (N
// tokens)"; TGI "must be <= N. Given: M `inputs` tokens".
var (
	vllmOverflowRe   = regexp.MustCompile(`(?i)maximum context length is (\d+) tokens.*?(?:requested|resulted in) (\d+) tokens`)
	sglangOverflowRe = regexp.MustCompile(`(?i)input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)`)
	tgiOverflowRe    = regexp.MustCompile("(?i)must be <= (\\d+)\\. Given: (\\d+) `inputs` tokens")
)

// ReadRefusal reads a non-2xx upstream body. secrets (the provider's API
// key) are never part of the message, whatever the upstream echoed.
func ReadRefusal(status int, body []byte, secrets ...string) Refusal {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"` // vLLM's and SGLang's {"object":"error",...}
	}
	var inner struct {
		Message       string          `json:"message"`
		Type          string          `json:"type"`
		Code          json.RawMessage `json:"code"`
		NPromptTokens int             `json:"n_prompt_tokens"`
		NCtx          int             `json:"n_ctx"`
	}
	var r Refusal
	msg := ""
	if json.Unmarshal(body, &env) == nil {
		msg = env.Message
		if len(env.Error) > 0 && env.Error[0] == '{' && json.Unmarshal(env.Error, &inner) == nil {
			msg = inner.Message
		} else if len(env.Error) > 0 && env.Error[0] == '"' {
			json.Unmarshal(env.Error, &msg)
		}
	} else if t := bytes.TrimSpace(body); len(t) > 0 && t[0] != '<' && utf8.Valid(t) {
		// Plain text (a proxy's or a server's own words), never markup.
		line, _, _ := bytes.Cut(t, []byte{'\n'})
		msg = string(line)
	}
	code, _ := strconv.Unquote(string(inner.Code))
	switch {
	case code == "context_length_exceeded":
		r.ContextOverflow = true
	case inner.Type == "exceed_context_size_error":
		r.ContextOverflow = true
		r.PromptTokens, r.ContextTokens = inner.NPromptTokens, inner.NCtx
	}
	if status/100 == 4 {
		if m := vllmOverflowRe.FindStringSubmatch(msg); m != nil {
			r.ContextOverflow = true
			r.ContextTokens, r.PromptTokens = atoi(m[1]), atoi(m[2])
		} else if m := sglangOverflowRe.FindStringSubmatch(msg); m != nil {
			r.ContextOverflow = true
			r.PromptTokens, r.ContextTokens = atoi(m[1]), atoi(m[2])
		} else if m := tgiOverflowRe.FindStringSubmatch(msg); m != nil {
			r.ContextOverflow = true
			r.ContextTokens, r.PromptTokens = atoi(m[1]), atoi(m[2])
		}
	}
	r.Message = Sanitize(msg, secrets...)
	return r
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// What looks like a credential in an upstream's message.
var credentials = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]*@`), "${1}[redacted]@"}, // URL userinfo
	{regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]+`), "$1 [redacted]"},
	{regexp.MustCompile(`(?i)\b([a-z_-]*(?:key|token|secret|password|passwd|credential|auth)[a-z_-]*)(\s*["']?\s*[=:]\s*["']?)[^\s"'&,;]+`), "$1$2[redacted]"},
	{regexp.MustCompile(`\b(?:sk|pk|rk|xox[a-z])-[A-Za-z0-9_-]{6,}`), "[redacted]"},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*)*`), "[redacted]"}, // JWT
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), "[redacted]"},
	{regexp.MustCompile(`[A-Za-z0-9_+/=-]{40,}`), "[redacted]"}, // any long opaque token
}

// Sanitize makes an upstream's message safe to show a client: secrets
// and anything that looks like a credential (bearer tokens, keys, URLs
// with userinfo, key=value pairs) are redacted, control characters
// dropped, and the result capped at maxRefusalMessage bytes.
func Sanitize(msg string, secrets ...string) string {
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "?")
	}
	redactSecrets := func(s string) string {
		for _, k := range secrets {
			if k != "" {
				s = strings.ReplaceAll(s, k, "[redacted]")
			}
		}
		return s
	}
	msg = redactSecrets(msg)
	for _, c := range credentials {
		msg = c.re.ReplaceAllString(msg, c.with)
	}
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	msg = strings.TrimSpace(redactSecrets(msg))
	if len(msg) > maxRefusalMessage {
		cut := maxRefusalMessage - len("…")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
