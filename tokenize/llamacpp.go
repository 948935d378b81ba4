package tokenize

// llama.cpp converts a tokenizer.json into its own vocabulary (GGUF) and
// tokenizes with its own code. For the families in the chat-template
// corpus, it differs from the tokenizers library in three ways, which the
// LlamaCpp variant reproduces:
//
//   - It applies no Unicode normalization: Qwen2's NFC is dropped, so
//     decomposed accents and combining marks cost their own bytes.
//   - It matches special tokens in the raw text, longest token first
//     (not leftmost first: see splitLongestFirst), and besides the added
//     tokens (control or user-defined in GGUF) it treats as control
//     tokens the vocabulary tokens whose text looks like an end of turn or
//     a fill-in-the-middle marker (llama_vocab::load, "control-looking
//     token"). Qwen2's vocabulary has an ordinary "</s>", which thus counts
//     as 1 token instead of 3.
//   - Its BOS comes from tokenizer_config.json's add_bos_token, else from
//     the post-processor, else from its default for the pre-tokenizer:
//     true for Llama-3's and for SentencePiece-style vocabularies.

// controlLooking are the token texts llama.cpp makes control tokens
// whatever their type in the vocabulary: its end-of-generation, end-of-turn
// and end-of-message spellings, and its fill-in-the-middle ones.
var controlLooking = []string{
	"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
	"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "<|code_prefix|>", "<|prefix|>",
	"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "<|code_suffix|>", "<|suffix|>",
	"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "<|code_middle|>", "<|middle|>",
	"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
	"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
	"<|file_sep|>",
}

// LlamaCpp returns the variant of t that counts as llama.cpp does with the
// same vocabulary converted to GGUF (see llamacpp.go for how they differ).
// It shares t's tables; the LlamaCpp of the variant is itself.
func (t *HFTokenizer) LlamaCpp() *HFTokenizer { return t.llamaCpp }

// newLlamaCpp builds the llama.cpp variant of t from what ParseHFTokenizer
// read: all added tokens, the vocabulary, the config (or nil), and the
// post-processor's prefix.
func (t *HFTokenizer) newLlamaCpp(added []addedToken, vocab map[string]int64, cfg *hfConfig, post int) *HFTokenizer {
	v := *t
	v.normalizers = nil
	for _, n := range t.normalizers {
		if _, unicode := n.(unicodeNorm); !unicode {
			v.normalizers = append(v.normalizers, n)
		}
	}
	// GGUF keeps no lstrip, rstrip or single_word, nor normalized: every
	// special token is matched as is in the raw text.
	var specials []addedToken
	have := map[string]bool{}
	for _, a := range added {
		specials = append(specials, addedToken{ID: a.ID, Content: a.Content})
		have[a.Content] = true
	}
	_, toolResponse := vocab["<|tool_response>"]
	for _, s := range controlLooking {
		id, ok := vocab[s]
		if !ok || have[s] || (s == "</s>" && toolResponse) { // llama.cpp's Gemma-4 exception
			continue
		}
		specials = append(specials, addedToken{ID: uint32(id), Content: s})
	}
	v.rawAdded, v.normAdded = newAddedSet(specials), nil
	if v.rawAdded != nil {
		v.rawAdded.longestFirst = true
	}

	switch {
	case cfg != nil && cfg.AddBOS != nil:
		v.prefix = 0
		if *cfg.AddBOS && cfg.hasBOS() {
			v.prefix = 1
		}
	case post > 0:
		v.prefix = post
	case !t.model.byteLevel || t.llama3PreTokenizer():
		v.prefix = 1
	default:
		v.prefix = 0
	}
	v.llamaCpp = &v
	return &v
}

// llama3PreTokenizer reports whether t pre-tokenizes as Llama-3 does, which
// llama.cpp recognises (its "llama-bpe" pre-tokenizer) and gives a BOS by
// default: Llama-3's Split regex, then ByteLevel, with ignore_merges.
func (t *HFTokenizer) llama3PreTokenizer() bool {
	if !t.model.byteLevel || !t.model.ignoreMerges || len(t.pre) != 2 {
		return false
	}
	st, ok := t.pre[0].(splitStep)
	return ok && st.sp == splitter(patCL100k)
}
