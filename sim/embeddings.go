package sim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
)

const defaultEmbeddingDims = 64

// embeddings serves POST /v1/embeddings with deterministic unit vectors
// derived from each input (and the model variant). Faults that concern
// the model name, the request id, replay and error-as-200 apply; the KV
// and stream faults have no embeddings counterpart.
func (s *Server) embeddings(c *call) error {
	req, inputs, err := parseEmbedding(c.body)
	if err != nil {
		return err
	}
	if err := s.checkModel(req.Model); err != nil {
		return err
	}
	dims := defaultEmbeddingDims
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	model, variant := req.Model, s.cfg.Variant
	switch {
	case c.faults[FaultSilentFallback]:
		model, variant = "sim-fallback-1", 1000+s.cfg.Variant
	case c.faults[FaultSnapshotDrift]:
		model, variant = driftedName(req.Model), s.cfg.Variant+2
	case c.faults[FaultModelLie]:
		variant = s.cfg.Variant + 1
	}
	list := embeddingList{Object: "list", Model: model, Data: make([]embeddingItem, len(inputs))}
	for i, in := range inputs {
		vec := embed(in, variant, dims)
		item := embeddingItem{Object: "embedding", Index: i, Embedding: vec}
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(vec))
			for j, v := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(v))
			}
			item.Embedding = base64.StdEncoding.EncodeToString(buf)
		}
		list.Data[i] = item
		list.Usage.PromptTokens += s.counter.Count(in)
	}
	list.Usage.TotalTokens = list.Usage.PromptTokens
	var body []byte
	switch c.faults.errorAs200Form(digest(inputs)) {
	case "":
		if body, err = json.Marshal(list); err != nil {
			return err
		}
	case FaultErrorAs200Body:
		body = errorAs200Body()
	default:
		list.Data = []embeddingItem{}
		if body, err = json.Marshal(list); err != nil {
			return err
		}
	}
	writeBody(c.w, s.swapBody("embeddings", body, c.faults[FaultResponseSwap]))
	return nil
}

// embed is a deterministic unit vector for text: a variant perturbs it
// slightly.
func embed(text string, variant, dims int) []float32 {
	h := strHash(text)
	vec := make([]float32, dims)
	var norm float64
	for i := range vec {
		v := 2*unit(mix(h, uint64(i))) - 1
		if variant > 0 {
			v += 0.05 * (2*unit(mix(h, uint64(i), uint64(variant))) - 1)
		}
		vec[i] = float32(v)
		norm += v * v
	}
	norm = math.Sqrt(norm)
	for i := range vec {
		vec[i] = float32(float64(vec[i]) / norm)
	}
	return vec
}
