package template

import "fmt"

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
	case EngineLlamaCpp, EngineVLLM:
		return e, true
	case EngineSGLang:
		return EngineVLLM, true
	}
	return "", false
}
