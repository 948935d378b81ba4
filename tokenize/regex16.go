package tokenize

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// gc is a Unicode General_Category; gcCn, unassigned, is the zero value.
type gc uint8

const (
	gcCn gc = iota
	gcLu
	gcLl
	gcLt
	gcLm
	gcLo
	gcMn
	gcMc
	gcMe
	gcNd
	gcNl
	gcNo
	gcPc
	gcPd
	gcPs
	gcPe
	gcPi
	gcPf
	gcPo
	gcSm
	gcSc
	gcSk
	gcSo
	gcZs
	gcZl
	gcZp
	gcCc
	gcCf
	gcCs
	gcCo
)

// gcRange is a run of code points [lo, hi] of one category.
type gcRange struct {
	lo, hi rune
	gc     gc
}

// gcGroups are the \p{...} names that unicode16Classes rewrites, each with
// its categories. Names absent here (C and Cn, whose complement includes
// the unassigned code points, scripts, properties) are left to regexp2.
var gcGroups = map[string][]gc{
	"L": {gcLu, gcLl, gcLt, gcLm, gcLo}, "Lu": {gcLu}, "Ll": {gcLl}, "Lt": {gcLt}, "Lm": {gcLm}, "Lo": {gcLo},
	"M": {gcMn, gcMc, gcMe}, "Mn": {gcMn}, "Mc": {gcMc}, "Me": {gcMe},
	"N": {gcNd, gcNl, gcNo}, "Nd": {gcNd}, "Nl": {gcNl}, "No": {gcNo},
	"P": {gcPc, gcPd, gcPs, gcPe, gcPi, gcPf, gcPo}, "Pc": {gcPc}, "Pd": {gcPd}, "Ps": {gcPs},
	"Pe": {gcPe}, "Pi": {gcPi}, "Pf": {gcPf}, "Po": {gcPo},
	"S": {gcSm, gcSc, gcSk, gcSo}, "Sm": {gcSm}, "Sc": {gcSc}, "Sk": {gcSk}, "So": {gcSo},
	"Z": {gcZs, gcZl, gcZp}, "Zs": {gcZs}, "Zl": {gcZl}, "Zp": {gcZp},
	"Cc": {gcCc}, "Cf": {gcCf}, "Co": {gcCo},
}

// gcClasses holds gcClass's answer for each name of gcGroups, computed on
// first use (a few milliseconds each) and shared, as the rank tables are.
var gcClasses = func() map[string]func() string {
	m := make(map[string]func() string, len(gcGroups))
	for name, cats := range gcGroups {
		m[name] = sync.OnceValue(func() string { return gcClass(name, cats) })
	}
	return m
}()

// gcClass returns the inside of a regexp2 character class for \p{name}
// at Unicode 16.0, where cats are name's categories. regexp2 matches its
// own \p{name} (Go's 15.0 tables) much faster than a long list of ranges,
// so when 16.0 only added code points to the class, as it did to every
// class in gcGroups, the answer is \p{name} and the added ranges; else it
// is all the ranges.
func gcClass(name string, cats []gc) string {
	in16 := func(r rune) bool {
		g := gcOf(r)
		for _, c := range cats {
			if g == c {
				return true
			}
		}
		return false
	}
	var added, all rangeList
	for _, r := range gcRanges {
		if !in16(r.lo) {
			continue
		}
		all.add(r.lo, r.hi)
		for c := r.lo; c <= r.hi; c++ {
			if !unicode.Is(unicode.Categories[name], c) {
				added.add(c, c)
			}
		}
	}
	removed := false
	table := unicode.Categories[name]
	for _, r := range table.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi) && !removed; c += rune(r.Stride) {
			removed = !in16(c)
		}
	}
	for _, r := range table.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi) && !removed; c += rune(r.Stride) {
			removed = !in16(c)
		}
	}
	if removed {
		return all.String()
	}
	return `\p{` + name + `}` + added.String()
}

// gcOf returns the category of r at Unicode 16.0.
func gcOf(r rune) gc {
	lo, hi := 0, len(gcRanges)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch g := &gcRanges[m]; {
		case r < g.lo:
			hi = m
		case r > g.hi:
			lo = m + 1
		default:
			return g.gc
		}
	}
	return gcCn
}

// rangeList collects code point ranges in increasing order, joining
// adjacent ones.
type rangeList struct{ lo, hi []rune }

func (l *rangeList) add(lo, hi rune) {
	if n := len(l.hi); n > 0 && l.hi[n-1]+1 == lo {
		l.hi[n-1] = hi
		return
	}
	l.lo, l.hi = append(l.lo, lo), append(l.hi, hi)
}

// String writes the ranges as regexp2 class items.
func (l *rangeList) String() string {
	var b strings.Builder
	for i, lo := range l.lo {
		if lo == l.hi[i] {
			fmt.Fprintf(&b, `\x{%X}`, lo)
		} else {
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, lo, l.hi[i])
		}
	}
	return b.String()
}

// unicode16Classes rewrites the \p{X} and \pX of a regex into explicit
// Unicode 16.0 ranges, the tables of the tokenizers library's regex
// engine, for the categories of gcGroups: \p{X} becomes [ranges] outside a
// character class and the bare ranges inside one; \P{X} becomes [^ranges]
// outside a class. \P{X} inside a class, and other names, stay as they
// are, on Go's Unicode 15.0.
func unicode16Classes(expr string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr) && (expr[i+1] == 'p' || expr[i+1] == 'P'):
			name, n := classEscapeName(expr[i:])
			class, ok := gcClasses[name]
			neg := expr[i+1] == 'P'
			switch {
			case !ok || (neg && inClass):
				b.WriteString(expr[i : i+n])
			case inClass:
				b.WriteString(class())
			case neg:
				b.WriteString("[^" + class() + "]")
			default:
				b.WriteString("[" + class() + "]")
			}
			i += n
			continue
		case c == '\\' && i+1 < len(expr):
			b.WriteString(expr[i : i+2])
			i += 2
			continue
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			i++
			// A ']' first in the class (after any '^') is a literal.
			if i < len(expr) && expr[i] == '^' {
				b.WriteByte('^')
				i++
			}
			if i < len(expr) && expr[i] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		case c == ']' && inClass:
			inClass = false
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// classEscapeName returns the name of the \p escape at the start of s and
// the escape's length: \pL or \p{Name}, with an optional "^" or "Is"
// left in the name (and so left to regexp2).
func classEscapeName(s string) (string, int) {
	if len(s) < 3 {
		return "", len(s)
	}
	if s[2] != '{' {
		return s[2:3], 3
	}
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return "", len(s)
	}
	return s[3:end], end + 1
}

// hasPossessive reports whether a regex has a possessive quantifier (?+,
// *+ or ++), which Oniguruma has and regexp2 does not. In Oniguruma's
// Ruby syntax, which the tokenizers library uses, {n,m}+ is not
// possessive, so it is not looked for.
func hasPossessive(expr string) bool {
	inClass, quantified := false, false // quantified: the last token was a quantifier
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\':
			i++
			quantified = false
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			quantified = false
			if i+1 < len(expr) && expr[i+1] == '^' {
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				i++
			}
		case c == '(' && i+1 < len(expr) && expr[i+1] == '?':
			i++ // a group's (? is no quantifier
			quantified = false
		case c == '+' && quantified:
			return true
		case c == '?' && quantified:
			quantified = false // lazy
		case c == '?' || c == '*' || c == '+':
			quantified = true
		case c == '}':
			quantified = false
		default:
			quantified = false
		}
	}
	return false
}
