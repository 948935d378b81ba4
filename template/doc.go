// Package template renders a chat request into the prompt text an
// inference engine feeds its tokenizer, so that custody can count the
// prompt exactly as the engine does.
//
// A model's chat template (Jinja, from tokenizer_config.json) decides
// what reaches the tokenizer: which roles, whether names, tools and tool
// calls appear, how content is trimmed, where the generation prompt goes.
// Engines also preprocess the request differently before they render it
// (Engine): llama.cpp turns a null content into "", joins text parts with
// "\n", maps developer to system, re-serialises tools, parses tool-call
// arguments into objects and continues a final assistant message; vLLM
// passes chat_template_kwargs, dumps tools with description null and adds
// the generation prompt after a final assistant turn. Render reproduces
// one named engine; custody's prompt-token band for an unnamed engine
// (EngineAuto) is the span of every engine's rendering.
//
// Templates run on github.com/ardanlabs/jinja, a Jinja engine written for
// chat templates (namespace, loop variables, raise_exception, tojson with
// Python's separators, the string methods real templates call). The
// request is decoded into the engine's ordered values, so tojson prints
// keys in the client's order as Python's dict would.
package template
