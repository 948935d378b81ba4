package tokenize

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"
)

// bpeModel is a tokenizer.json BPE model: the initial symbols of a piece
// and the merges that join them.
//
// A byte-level model (GPT-2, Llama-3, Qwen2) starts from one symbol per
// byte. A SentencePiece-style model (Gemma, Llama-2, Mistral) starts from
// one symbol per character: a character missing from the vocabulary
// becomes its UTF-8 bytes as <0xNN> tokens (byte_fallback), else the
// unknown token (consecutive ones fused into one with fuse_unk), else
// nothing, as the tokenizers library's BPE::merge_word does.
type bpeModel struct {
	byteLevel bool
	// byteID is the symbol of each byte: its byte-level rune in a
	// byte-level model, its <0xNN> token with byte_fallback.
	byteID       [256]uint32
	byteFallback bool
	asciiID      [128]int32        // one-character tokens, -1 if none (SentencePiece-style)
	charID       map[rune]uint32   // the other one-character tokens
	unk          int64             // unknown token id, or -1
	fuseUnk      bool              // consecutive unknown characters are one unk
	ignoreMerges bool              // a piece that is a whole token is that token
	whole        map[string]uint32 // piece text -> id, only with ignoreMerges
	merges       map[uint64]uint64 // left<<32|right -> rank<<32|merged id
}

type hfModel struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	UnkToken                *string         `json:"unk_token"`
	FuseUnk                 bool            `json:"fuse_unk"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  hfMerges        `json:"merges"`
}

// newBPEModel builds the model; byteLevel says the pre-tokenizer ends with
// ByteLevel. It returns the vocabulary too, for the callers that look
// tokens up by text.
func newBPEModel(m *hfModel, byteLevel bool) (*bpeModel, map[string]int64, error) {
	switch {
	case m.Type == "Unigram" || m.Type == "WordPiece" || m.Type == "WordLevel":
		return nil, nil, unsupported("%s model (only BPE)", m.Type)
	case m.Type != "BPE":
		return nil, nil, unsupported("model type %q (only BPE)", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, nil, unsupported("BPE dropout")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, nil, unsupported("subword prefix or suffix")
	}
	var vocab map[string]int64
	if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
		return nil, nil, fmt.Errorf("parsing vocab: %w", err)
	}
	for _, id := range vocab {
		if id < 0 || id > math.MaxInt32 {
			return nil, nil, fmt.Errorf("vocab id %d out of range", id)
		}
	}
	b := &bpeModel{byteLevel: byteLevel, byteFallback: m.ByteFallback, fuseUnk: m.FuseUnk, ignoreMerges: m.IgnoreMerges, unk: -1}
	if m.UnkToken != nil {
		id, ok := vocab[*m.UnkToken]
		if !ok {
			return nil, nil, fmt.Errorf("unk_token %q not in vocab", *m.UnkToken)
		}
		b.unk = id
	}
	var err error
	if byteLevel {
		err = b.setByteLevelVocab(vocab)
	} else {
		err = b.setCharVocab(vocab)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := b.setMerges(vocab, m.Merges); err != nil {
		return nil, nil, err
	}
	return b, vocab, nil
}

func (b *bpeModel) setByteLevelVocab(vocab map[string]int64) error {
	if b.byteFallback {
		// A byte-level vocabulary has every character, so byte_fallback
		// never applies; but the flag promises <0xNN> tokens.
		if _, err := byteFallbackIDs(vocab); err != nil {
			return err
		}
	}
	runes := byteLevelRunes()
	inverse := make(map[rune]byte, 256)
	for i, r := range runes {
		inverse[r] = byte(i)
	}
	for i, r := range runes {
		id, ok := vocab[string(r)]
		if !ok {
			return unsupported("vocab lacks the byte symbol %q for byte 0x%02x", string(r), i)
		}
		b.byteID[i] = uint32(id)
	}
	if !b.ignoreMerges {
		return nil
	}
	b.whole = make(map[string]uint32, len(vocab))
	var buf []byte
	for tok, id := range vocab {
		if raw, ok := byteLevelDecode(tok, inverse, buf); ok {
			b.whole[string(raw)] = uint32(id)
			buf = raw
		}
	}
	return nil
}

// byteFallbackIDs returns the ids of the 256 tokens <0x00> to <0xFF>.
func byteFallbackIDs(vocab map[string]int64) ([256]uint32, error) {
	var ids [256]uint32
	for i := range ids {
		id, ok := vocab[fmt.Sprintf("<0x%02X>", i)]
		if !ok {
			return ids, unsupported("byte_fallback, but the vocab lacks <0x%02X>", i)
		}
		ids[i] = uint32(id)
	}
	return ids, nil
}

func (b *bpeModel) setCharVocab(vocab map[string]int64) error {
	if b.byteFallback {
		ids, err := byteFallbackIDs(vocab)
		if err != nil {
			return err
		}
		b.byteID = ids
	}
	for i := range b.asciiID {
		b.asciiID[i] = -1
	}
	b.charID = map[rune]uint32{}
	for tok, id := range vocab {
		r, n := utf8.DecodeRuneInString(tok)
		if n != len(tok) || n == 0 || (r == utf8.RuneError && n == 1) {
			continue
		}
		if r < utf8.RuneSelf {
			b.asciiID[r] = int32(id)
		} else {
			b.charID[r] = uint32(id)
		}
	}
	if b.ignoreMerges {
		b.whole = make(map[string]uint32, len(vocab))
		for tok, id := range vocab {
			b.whole[tok] = uint32(id)
		}
	}
	return nil
}

// setMerges builds the pair table as the tokenizers library does: rank is
// the merge's index in the list, and a later duplicate pair wins.
func (b *bpeModel) setMerges(vocab map[string]int64, merges hfMerges) error {
	if len(merges) > math.MaxInt32 {
		return fmt.Errorf("too many merges")
	}
	b.merges = make(map[uint64]uint64, len(merges))
	for rank, m := range merges {
		idx, okx := vocab[m.a]
		idy, oky := vocab[m.b]
		idxy, okxy := vocab[m.a+m.b]
		if !okx || !oky || !okxy {
			return fmt.Errorf("merge %d (%q %q): token not in vocab", rank, m.a, m.b)
		}
		b.merges[uint64(idx)<<32|uint64(idy)] = uint64(rank)<<32 | uint64(idxy)
	}
	return nil
}

// hfScratch is the reusable memory of bpeModel.count.
type hfScratch struct {
	sym        []uint32 // token id of each symbol
	prev, next []int32
	ver        []uint32 // bumped when the pair at a position changes
	dead       []bool
	heap       []hfMerge
}

// hfMerge is a queued merge, ordered as the tokenizers library orders its
// BinaryHeap: lowest rank, then lowest position.
type hfMerge struct {
	key   uint64 // rank<<32 | pos
	newID uint32
	ver   uint32 // ver[pos] when queued
}

// count returns the number of tokens of one pre-tokenized piece, and
// appends their ids to *ids unless ids is nil.
func (b *bpeModel) count(piece string, sc *hfScratch, ids *[]uint32) int {
	if b.ignoreMerges && len(piece) > 1 {
		if id, ok := b.whole[piece]; ok {
			if ids != nil {
				*ids = append(*ids, id)
			}
			return 1
		}
	}
	if cap(sc.sym) < len(piece) {
		sc.sym = make([]uint32, len(piece))
		sc.prev = make([]int32, len(piece))
		sc.next = make([]int32, len(piece))
		sc.ver = make([]uint32, len(piece))
		sc.dead = make([]bool, len(piece))
	}
	sym := sc.sym[:len(piece)]
	var n int
	if b.byteLevel {
		for i := 0; i < len(piece); i++ {
			sym[i] = b.byteID[piece[i]]
		}
		n = len(piece)
	} else {
		n = b.charSymbols(piece, sym)
	}
	return b.merge(sc, n, ids)
}

// charSymbols writes the initial symbols of a SentencePiece-style piece
// into sym and returns how many there are (at most one a byte).
func (b *bpeModel) charSymbols(piece string, sym []uint32) int {
	n := 0
	unkOpen := false // sym[n-1] is an unk that the next unknown may fuse into
	for i := 0; i < len(piece); {
		c := piece[i]
		if c < utf8.RuneSelf {
			if id := b.asciiID[c]; id >= 0 {
				sym[n], n, unkOpen = uint32(id), n+1, false
				i++
				continue
			}
		}
		r, w := utf8.DecodeRuneInString(piece[i:])
		if c >= utf8.RuneSelf {
			if id, ok := b.charID[r]; ok {
				sym[n], n, unkOpen = id, n+1, false
				i += w
				continue
			}
		}
		switch {
		case b.byteFallback:
			for k := i; k < i+w; k++ {
				sym[n], n = b.byteID[piece[k]], n+1
			}
			unkOpen = false
		case b.unk >= 0:
			if !(b.fuseUnk && unkOpen) {
				sym[n], n = uint32(b.unk), n+1
			}
			unkOpen = true
		}
		i += w
	}
	return n
}

// merge is the tokenizers library's Word::merge_all on sc.sym[:n],
// counting the symbols left. A queued merge is stale, and skipped, when
// its symbol is gone, is last, or now pairs with a neighbour into another
// token.
func (b *bpeModel) merge(sc *hfScratch, n int, ids *[]uint32) int {
	sym, prev, next, ver, dead := sc.sym[:n], sc.prev[:n], sc.next[:n], sc.ver[:n], sc.dead[:n]
	if n <= 1 {
		if ids != nil && n == 1 {
			*ids = append(*ids, sym[0])
		}
		return n
	}
	if cap(sc.heap) < n {
		// At most n-1 pairs are queued at first; growing by append would
		// copy a long piece's heap several times over.
		sc.heap = make([]hfMerge, 0, n)
	}
	h := sc.heap[:0]
	for i := 0; i < n; i++ {
		prev[i], next[i], ver[i], dead[i] = int32(i-1), int32(i+1), 0, false
	}
	next[n-1] = -1
	for i := 0; i+1 < n; i++ {
		if m, ok := b.merges[uint64(sym[i])<<32|uint64(sym[i+1])]; ok {
			h = append(h, hfMerge{key: m&^0xFFFFFFFF | uint64(i), newID: uint32(m)})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		hfDown(h, i)
	}
	count := n
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		hfDown(h, 0)
		pos := int32(uint32(top.key))
		if dead[pos] || next[pos] < 0 {
			continue
		}
		right := next[pos]
		// The library looks the pair up again and merges if it still
		// makes the queued token; the pair as queued always does.
		if ver[pos] != top.ver {
			if m, ok := b.merges[uint64(sym[pos])<<32|uint64(sym[right])]; !ok || uint32(m) != top.newID {
				continue
			}
		}
		sym[pos] = top.newID
		dead[right] = true
		next[pos] = next[right]
		if nx := next[right]; nx >= 0 {
			prev[nx] = pos
		}
		count--
		ver[pos]++ // its symbol and its right neighbour changed
		if p := prev[pos]; p >= 0 {
			ver[p]++ // its right neighbour changed
			if m, ok := b.merges[uint64(sym[p])<<32|uint64(sym[pos])]; ok {
				h = hfPush(h, hfMerge{key: m&^0xFFFFFFFF | uint64(p), newID: uint32(m), ver: ver[p]})
			}
		}
		if nx := next[pos]; nx >= 0 {
			if m, ok := b.merges[uint64(sym[pos])<<32|uint64(sym[nx])]; ok {
				h = hfPush(h, hfMerge{key: m&^0xFFFFFFFF | uint64(pos), newID: uint32(m), ver: ver[pos]})
			}
		}
	}
	sc.heap = h
	if ids != nil {
		for i := int32(0); i >= 0; i = next[i] {
			*ids = append(*ids, sym[i])
		}
	}
	return count
}

func hfPush(h []hfMerge, m hfMerge) []hfMerge {
	h = append(h, m)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].key <= h[i].key {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func hfDown(h []hfMerge, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].key < h[l].key {
			m = r
		}
		if h[i].key <= h[m].key {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
