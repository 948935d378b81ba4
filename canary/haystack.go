package canary

import (
	"errors"
	"strings"

	"github.com/custody-gateway/custody/tokenize"
)

// fillerSentences is the text long prompts are made of: plain words with
// no digits, so nothing in it looks like a nonce.
var fillerSentences = [...]string{
	"The river bends twice before it reaches the old mill by the hill.",
	"Farmers in the valley plant barley in spring and oats in the autumn.",
	"A narrow road climbs through the pines toward the quiet village square.",
	"Every morning the baker opens the shutters and sets out fresh bread.",
	"The library keeps its maps in wide drawers beneath the tall windows.",
	"Clouds gathered over the bay while the fishing boats came home early.",
	"Children walk along the canal path on their way to the stone school.",
	"The market sells apples, cheese, honey and wool from the upland farms.",
	"At night the lighthouse turns slowly and its beam sweeps the dark water.",
	"Old letters describe the winter when the lake froze from shore to shore.",
	"The clockmaker repairs watches in a small shop near the railway bridge.",
	"Swallows nest under the eaves of the barn and leave before the frost.",
}

// errTooSmall is a capacity too small to hold a probe's prompt.
var errTooSmall = errors.New("capacity too small for the probe prompt")

// haystack builds one user message: head, then filler sentences with the
// needle sentences planted at the given depths (fractions of the filler),
// as long as it can be while the chat prompt stays within budget tokens
// counted by c. It returns the message and its token count.
func haystack(c tokenize.Counter, budget int, head string, needles []string, depths []float64) (Message, int, error) {
	msg := func(n int) Message {
		var b strings.Builder
		b.WriteString(head)
		next := 0
		for i := 0; i <= n; i++ {
			for next < len(needles) && int(depths[next]*float64(n)) == i {
				b.WriteString(" The code is ")
				b.WriteString(needles[next])
				b.WriteString(".")
				next++
			}
			if i < n {
				b.WriteByte(' ')
				b.WriteString(fillerSentences[i%len(fillerSentences)])
			}
		}
		return Message{Role: "user", Content: b.String()}
	}
	count := func(m Message) int {
		return tokenize.Chat(c, []tokenize.Message{{Role: m.Role, Content: m.Content}})
	}
	// Token counts of BPE tokenizers add up across the spaces between
	// sentences (pre-tokenization splits there), so the sentence count is
	// found from per-sentence costs and one exact count confirms it: a
	// prompt of 340k tokens costs one count, not a search of counts.
	base := count(msg(0)) // the head and every needle
	if base > budget {
		return Message{}, base, errTooSmall
	}
	var per [len(fillerSentences)]int
	for i, s := range fillerSentences {
		per[i] = max(c.Count(" "+s), 1)
	}
	n, total := 0, base
	for total+per[n%len(per)] <= budget {
		total += per[n%len(per)]
		n++
	}
	for {
		m := msg(n)
		got := count(m)
		if got <= budget {
			return m, got, nil
		}
		if n == 0 {
			return Message{}, got, errTooSmall
		}
		// The sum was off (a tokenizer that merges across spaces): drop
		// enough sentences to cover the excess and count again.
		for drop := got - budget; drop > 0 && n > 0; n-- {
			drop -= per[(n-1)%len(per)]
		}
	}
}
