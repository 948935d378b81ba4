package contamination

// automaton is an Aho-Corasick matcher compiled to a full DFA over byte
// classes: bytes that occur in no pattern share class 0, so the table has
// one row of nclass entries per state rather than 256. It is immutable once
// built; Detector swaps in a new one when the secrets change, and a Scanner
// keeps the one it started with.
type automaton struct {
	class  [256]uint16
	nclass int
	delta  []int32 // delta[state*nclass+class] = next state; only while building
	// next is delta as the scan loop wants it: indexed by an encoded state
	// (its row offset state*nclass, shifted left by one, with the low bit
	// set when a pattern ends there), it holds the next encoded state.
	next   []uint32
	out    []int32 // out[state] = pattern ending at state, or -1
	dict   []int32 // dict[state] = nearest proper suffix state with out >= 0, or -1
	labels []string
}

// buildAutomaton compiles the patterns, which must be non-empty; labels[i]
// names patterns[i].
func buildAutomaton(patterns []pattern) *automaton {
	a := &automaton{}
	used := [256]bool{}
	for _, p := range patterns {
		for _, b := range p.norm {
			used[b] = true
		}
	}
	a.nclass = 1
	for b := range used {
		if used[b] {
			a.class[b] = uint16(a.nclass)
			a.nclass++
		}
	}
	newState := func() int32 {
		s := int32(len(a.out))
		for range a.nclass {
			a.delta = append(a.delta, -1)
		}
		a.out = append(a.out, -1)
		a.dict = append(a.dict, -1)
		return s
	}
	newState() // root
	for id, p := range patterns {
		s := int32(0)
		for _, b := range p.norm {
			i := int(s)*a.nclass + int(a.class[b])
			if a.delta[i] < 0 {
				n := newState()
				a.delta[i] = n
			}
			s = a.delta[i]
		}
		if a.out[s] < 0 {
			a.out[s] = int32(id)
		}
		a.labels = append(a.labels, p.label)
	}
	// Breadth first: a state's failure target is shallower, so its row is
	// complete before the state's own row is filled in.
	fail := make([]int32, len(a.out))
	queue := make([]int32, 0, len(a.out))
	for c := range a.nclass {
		if n := a.delta[c]; n > 0 {
			fail[n] = 0
			queue = append(queue, n)
		} else {
			a.delta[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		for c := range a.nclass {
			i := int(s)*a.nclass + c
			n := a.delta[i]
			fn := a.delta[int(f)*a.nclass+c]
			if n < 0 {
				a.delta[i] = fn
				continue
			}
			fail[n] = fn
			if a.out[fn] >= 0 {
				a.dict[n] = fn
			} else {
				a.dict[n] = a.dict[fn]
			}
			queue = append(queue, n)
		}
	}
	a.next = make([]uint32, len(a.delta))
	for i, t := range a.delta {
		a.next[i] = uint32(int(t)*a.nclass) << 1
		if a.matches(t) {
			a.next[i] |= 1
		}
	}
	a.delta = nil
	return a
}

// step moves the encoded state v over byte b.
func (a *automaton) step(v uint32, b byte) uint32 {
	return a.next[v>>1+uint32(a.class[b])]
}

// state decodes an encoded state.
func (a *automaton) state(v uint32) int32 {
	return int32(v >> 1 / uint32(a.nclass))
}

// pattern is one normalised secret and its label.
type pattern struct {
	norm  []byte
	label string
}

// matches reports whether state ends a pattern, directly or by a suffix.
func (a *automaton) matches(state int32) bool {
	return a.out[state] >= 0 || a.dict[state] >= 0
}
