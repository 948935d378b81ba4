package template

import (
	"fmt"
	"strings"
)

// Engine names how an upstream preprocesses and renders a chat request
// before it counts the prompt: the `providers[].engine` config value.
type Engine string

const (
	// EngineLlamaCpp is llama.cpp's llama-server.
	EngineLlamaCpp Engine = "llamacpp"
	// EngineVLLM is vLLM's OpenAI server.
	EngineVLLM Engine = "vllm"
	// EngineSGLang is SGLang, which renders through transformers as vLLM
	// does.
	EngineSGLang Engine = "sglang"
	// EngineOpenAI is an upstream with no template custody can see
	// (OpenAI itself and its proxies): counted by OpenAI's framing.
	EngineOpenAI Engine = "openai"
	// EngineAuto is an unnamed engine: the band spans every engine's
	// rendering.
	EngineAuto Engine = "auto"
)

// Engines are the engines Render reproduces exactly.
var Engines = []Engine{EngineLlamaCpp, EngineVLLM}

// llama.cpp's server has rendered chat templates on two Jinja engines
// whose tojson prints numbers differently; EngineLlamaCpp is either, and
// custody counts a request both ways where they differ on it. These two
// are not config values: serve's start-up probe and custody doctor tell
// which one an upstream runs (DetectLlamaCpp).
const (
	// EngineLlamaCppShortest prints a float in its shortest exact form
	// (48.8606111, 2.5e+10) and an integer as written: the builds the
	// shared chat-template fixtures were recorded from. It is how
	// EngineLlamaCpp renders when asked for one rendering.
	EngineLlamaCppShortest Engine = "llamacpp-shortest"
	// EngineLlamaCppStream is llama.cpp's own Jinja engine (common/jinja;
	// commit 80fb11a, shipped by node-llama-cpp 3.21.1): tojson prints a
	// float as a C++ stream does (%g: 48.8606, 1.23457e+06), a bare float
	// as std::to_string does ("48.860611"), and wraps an integer past
	// int64 (18446744073709551615 is -1).
	EngineLlamaCppStream Engine = "llamacpp-stream"
)

// LlamaCppRendering reports whether e is one of llama.cpp's renderings.
func (e Engine) LlamaCppRendering() bool {
	return e == EngineLlamaCppShortest || e == EngineLlamaCppStream
}

// ParseEngine checks a config value; "" is EngineAuto.
func ParseEngine(s string) (Engine, error) {
	switch e := Engine(s); e {
	case "":
		return EngineAuto, nil
	case EngineLlamaCpp, EngineVLLM, EngineSGLang, EngineOpenAI, EngineAuto:
		return e, nil
	}
	return "", fmt.Errorf("unknown engine %q (want llamacpp, vllm, sglang, openai or auto)", s)
}

// renders reports whether e renders through a chat template in a way
// Render reproduces (sglang as vllm).
func (e Engine) renderAs() (Engine, bool) {
	switch e {
	case EngineLlamaCpp, EngineVLLM, EngineLlamaCppStream:
		return e, true
	case EngineLlamaCppShortest:
		return EngineLlamaCpp, true
	case EngineSGLang:
		return EngineVLLM, true
	}
	return "", false
}

// LlamaCppProbe is a chat request whose rendering by a llama.cpp server
// (POST /apply-template) tells its two template engines apart: a tool
// schema's 0.1234567 and a tool call's 7.654329 print so in the shortest
// form, as 0.123457 and 7.65433 on llama.cpp's own Jinja engine.
const LlamaCppProbe = `{"messages":[{"role":"user","content":"probe"},` +
	`{"role":"assistant","content":"","tool_calls":[{"id":"call_probe","type":"function","function":{"name":"probe","arguments":"{\"v\": 7.654329}"}}]},` +
	`{"role":"tool","tool_call_id":"call_probe","content":"ok"},{"role":"user","content":"probe"}],` +
	`"tools":[{"type":"function","function":{"name":"probe","description":"probe","parameters":{"type":"object","properties":{"v":{"type":"number","default":0.1234567}}}}}]}`

// ClassifyLlamaCpp reads a llama.cpp server's rendering of
// LlamaCppProbe: EngineLlamaCppStream, EngineLlamaCppShortest, or
// EngineLlamaCpp when its template prints neither number through
// tojson (the two renderings are then alike for this template).
func ClassifyLlamaCpp(rendered string) Engine {
	switch {
	case strings.Contains(rendered, "0.123457") || strings.Contains(rendered, "7.65433"):
		return EngineLlamaCppStream
	case strings.Contains(rendered, "0.1234567"):
		return EngineLlamaCppShortest
	}
	return EngineLlamaCpp
}
