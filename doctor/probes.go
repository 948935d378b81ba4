package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody/accounting"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
	"github.com/custody-gateway/custody/upstream"
)

// probes are the calibration requests: the shapes whose rendering differs
// most between templates and engines. MODEL is the upstream's model.
var probes = []struct{ name, body string }{
	{"one message", `{"model":MODEL,"max_tokens":1,"temperature":0,"messages":[{"role":"user","content":"Name three rivers of Europe."}]}`},
	{"system and user", `{"model":MODEL,"max_tokens":1,"temperature":0,"messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"What is the capital of Peru?"}]}`},
	{"with a tool", `{"model":MODEL,"max_tokens":1,"temperature":0,"messages":[{"role":"user","content":"What is the weather in Lyon?"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`},
	{"with a name", `{"model":MODEL,"max_tokens":1,"temperature":0,"messages":[{"role":"user","name":"alice","content":"Say hello to Bob."}]}`},
}

// accountingOf sends the probes on one route and compares the upstream's
// usage.prompt_tokens with custody's count; it also reports, from the
// first probe, whether the request id was echoed.
func accountingOf(ctx context.Context, cfg *config.Config, m *config.Model, r config.Route, p *config.Provider, c *upstream.Client) ([]Finding, *Finding) {
	f := Finding{Check: CheckAccounting, Provider: p.Name, Model: m.Name}
	acct, err := modelAccounting(cfg, m)
	if err != nil {
		f.Status, f.Detail, f.Fix = Problem, err.Error(), "fix the model's tokenizer or chat_template"
		return []Finding{f}, nil
	}
	engine, _ := template.ParseEngine(p.Engine)
	q, _ := json.Marshal(r.Model)
	var (
		echo                  *Finding
		lines                 []string
		exact, inBand, misses int
		suggest               = map[template.Engine]int{}
	)
	for _, pr := range probes {
		body := []byte(strings.Replace(pr.body, "MODEL", string(q), 1))
		id := requestID()
		reported, hdr, err := send(ctx, c, body, id)
		if err != nil {
			f.Status, f.Detail = Problem, fmt.Sprintf("probe %q: %v", pr.name, err)
			return []Finding{f}, echo
		}
		if echo == nil {
			echo = echoFinding(p, hdr, id)
		}
		prompt, err := openai.ParsePrompt(openai.EndpointChat, body)
		if err != nil {
			continue // the probes are well-formed
		}
		all := []template.Engine{engine, template.EngineLlamaCpp, template.EngineVLLM, template.EngineOpenAI}
		pp, err := acct.PrepareChat(all, prompt, body)
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: the template refused it: %v", pr.name, err))
			misses++
			continue
		}
		counts := pp.Count()
		mine := counts.For(engine)
		for _, e := range template.Engines {
			if counts.For(e).Local == reported {
				suggest[e]++
			}
		}
		switch {
		case mine.Local == reported:
			exact++
		case mine.Band.Lo <= reported && reported <= mine.Band.Hi:
			inBand++
			lines = append(lines, fmt.Sprintf("%s: upstream %d, custody %d (inside %s)", pr.name, reported, mine.Local, mine.Band))
		default:
			misses++
			lines = append(lines, fmt.Sprintf("%s: upstream %d, custody %d (off by %+d, outside %s)", pr.name, reported, mine.Local, reported-mine.Local, mine.Band))
		}
	}
	detail := strings.Join(lines, "; ")
	switch {
	case misses > 0:
		f.Status, f.Detail = Problem, detail
		f.Fix = accountingFix(m, engine, suggest, len(probes))
	case exact == len(probes):
		f.Status, f.Detail = OK, fmt.Sprintf("custody's count equals the upstream's on all %d probes (engine %s)", len(probes), engine)
	default:
		f.Status, f.Detail = Warn, detail
		f.Fix = accountingFix(m, engine, suggest, len(probes))
	}
	return []Finding{f}, echo
}

// accountingFix says what would make the count exact.
func accountingFix(m *config.Model, engine template.Engine, suggest map[template.Engine]int, n int) string {
	for _, e := range template.Engines {
		if suggest[e] == n && e != engine {
			return fmt.Sprintf("the upstream counts as %s renders: set engine: %s on the provider", e, e)
		}
	}
	if !strings.HasPrefix(m.Tokenizer, "file:") {
		return "give the model its own tokenizer (tokenizer: file:PATH/tokenizer.json, with tokenizer_config.json beside it for the chat template)"
	}
	return "check that tokenizer and chat_template are the ones the upstream serves this model with"
}

// modelAccounting builds a model's accounting as serve does.
func modelAccounting(cfg *config.Config, m *config.Model) (*accounting.Model, error) {
	c, err := tokenize.Lookup(m.Tokenizer)
	if err != nil {
		return nil, err
	}
	simOnly := true
	for _, r := range m.Routes {
		for _, p := range cfg.Providers {
			if p.Name == r.Provider && p.Kind != config.KindSim {
				simOnly = false
			}
		}
	}
	tmpl, err := accounting.LoadTemplate(m.Tokenizer, m.ChatTemplate, simOnly)
	if err != nil {
		return nil, err
	}
	return accounting.NewModel(c, tmpl, accounting.Slack{PerMessage: m.PromptTokenSlack.PerMessage, Fixed: m.PromptTokenSlack.Fixed}), nil
}

// send posts one probe and reads its usage.prompt_tokens.
func send(ctx context.Context, c *upstream.Client, body []byte, id string) (int, http.Header, error) {
	resp, err := c.Do(ctx, upstream.Call{Path: "/chat/completions", Body: body, RequestID: id})
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return 0, resp.Header, fmt.Errorf("HTTP %d: %s", resp.StatusCode, upstream.Sanitize(string(b), c.Config().APIKey))
	}
	var r struct {
		Usage *struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(b, &r) != nil || r.Usage == nil {
		return 0, resp.Header, fmt.Errorf("the answer has no usage.prompt_tokens")
	}
	return r.Usage.PromptTokens, resp.Header, nil
}

// echoFinding checks the request-id echo: present where configured, and
// suggested where the upstream echoes without being asked to.
func echoFinding(p *config.Provider, h http.Header, id string) *Finding {
	f := &Finding{Check: CheckRequestID, Provider: p.Name}
	switch {
	case p.RequestIDEcho != "" && h.Get(p.RequestIDEcho) == id:
		f.Status, f.Detail = OK, fmt.Sprintf("the upstream echoes X-Request-Id in %s", p.RequestIDEcho)
	case p.RequestIDEcho != "":
		f.Status = Problem
		f.Detail = fmt.Sprintf("request_id_echo is %s, but the upstream sent %q there, not the id custody sent", p.RequestIDEcho, h.Get(p.RequestIDEcho))
		f.Fix = "make the upstream echo the id (vLLM: --enable-request-id-headers) or remove request_id_echo"
		for name, v := range h {
			if len(v) == 1 && v[0] == id {
				f.Fix = fmt.Sprintf("the upstream echoes it in %s: set request_id_echo: %s", name, strings.ToLower(name))
			}
		}
	default:
		f.Status, f.Detail = OK, "request_id_echo is not configured"
		for name, v := range h {
			if len(v) == 1 && v[0] == id {
				f.Status = Warn
				f.Detail = fmt.Sprintf("the upstream echoes X-Request-Id in %s, but custody does not check it", name)
				f.Fix = fmt.Sprintf("set request_id_echo: %s to catch pool and queue desynchronisation", strings.ToLower(name))
			}
		}
	}
	return f
}

func requestID() string {
	var b [12]byte
	rand.Read(b[:])
	return "doctor-" + hex.EncodeToString(b[:])
}
