package tokenize

import (
	"errors"
	"strings"
	"testing"
	"unicode"
)

// TestRegexSplitterUsesUnicode16: code points that Unicode 15.1 and 16.0
// added to L, N, P and S (unassigned in Go's 15.0 tables) are classed by
// 16.0 on the regexp2 path, as by the tokenizers library.
func TestRegexSplitterUsesUnicode16(t *testing.T) {
	const (
		cjkExtI  = "\U0002EBF0\U0002EBF1" // Lo, 15.1
		garayNum = "\U00010D40\U00010D41" // Nd, 16.0
		garayPd  = "\U00010D6E"           // Pd, 16.0
		legacySo = "\U0001CC00\U0001CC01" // So, 16.0
	)
	for _, s := range []string{cjkExtI, garayNum, garayPd, legacySo} {
		for _, r := range s {
			if unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S) {
				t.Fatalf("%U is in Go's tables: the test tests nothing", r)
			}
		}
	}
	re, err := newRegexSplitter(`\p{L}+|\p{N}+|[\p{P}\p{S}]+|\s+|[^\p{L}\p{N}\p{P}\p{S}\s]+`, isolated)
	if err != nil {
		t.Fatal(err)
	}
	text := "ab" + cjkExtI + " 12" + garayNum + " -" + garayPd + legacySo + " x"
	var got []string
	re.split(text, func(p string) { got = append(got, p) })
	want := []string{"ab" + cjkExtI, " ", "12" + garayNum, " ", "-" + garayPd + legacySo, " ", "x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces %+q, want %+q", got, want)
	}
}

// TestRegexFallbackMatchesNativeOnNewCodePoints runs the regexp2 spelling
// of the native patterns on every code point whose class Unicode 16.0
// changed from Go's 15.0, between letters, digits and spaces.
func TestRegexFallbackMatchesNativeOnNewCodePoints(t *testing.T) {
	var newer []rune
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if (r < 0xD800 || r > 0xDFFF) && runeClass(r) != goClass(r) {
			newer = append(newer, r)
		}
	}
	if len(newer) < 100 {
		t.Fatalf("only %d code points differ from Go's tables", len(newer))
	}
	var b strings.Builder
	for i, r := range newer {
		b.WriteRune(r)
		b.WriteString([]string{"a", " ", "1", "'s", "  ", "!", ""}[i%7])
	}
	text := b.String()
	for expr, nat := range nativePatterns {
		if strings.Contains(expr, "?+") {
			continue
		}
		re, err := newRegexSplitter("(?:"+expr+")", isolated)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		re.split(text, func(p string) { got = append(got, p) })
		nat.split(text, func(p string) { want = append(want, p) })
		if len(got) != len(want) {
			t.Errorf("pattern %d: %d pieces on regexp2, %d native", nat, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("pattern %d: piece %d is %+q on regexp2, %+q native", nat, i, got[i], want[i])
				break
			}
		}
	}
}

func TestUnicode16ClassesRewrite(t *testing.T) {
	cases := []struct{ in, want string }{
		// Zl is unchanged since 15.0: Go's class, nothing added.
		{`\p{Zl}`, `[\p{Zl}]`},
		{`\P{Zp}`, `[^\p{Zp}]`},
		{`[a\p{Zl}]`, `[a\p{Zl}]`},
		// 15.1 added U+31EF and U+2FFC-2FFF to So.
		{`\p{So}`, `[\p{So}` + gcAddedSince15("So") + `]`},
		{`[^\P{Zl}]`, `[^\P{Zl}]`}, // negated inside a class: left to regexp2
		{`\p{Han}`, `\p{Han}`},
		{`\\p{L}`, `\\p{L}`}, // an escaped backslash, then text
		{`[]\p{Zl}]`, `[]\p{Zl}]`},
	}
	for _, c := range cases {
		if got := unicode16Classes(c.in); got != c.want {
			t.Errorf("unicode16Classes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// gcAddedSince15 is what gcClass should add to Go's \p{name}.
func gcAddedSince15(name string) string {
	var l rangeList
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if g := gcOf(r); g != gcCn && strings.HasPrefix(gcNames[g], name) && !unicode.Is(unicode.Categories[name], r) {
			l.add(r, r)
		}
	}
	return l.String()
}

var gcNames = [...]string{gcCn: "Cn", gcLu: "Lu", gcLl: "Ll", gcLt: "Lt", gcLm: "Lm", gcLo: "Lo",
	gcMn: "Mn", gcMc: "Mc", gcMe: "Me", gcNd: "Nd", gcNl: "Nl", gcNo: "No",
	gcPc: "Pc", gcPd: "Pd", gcPs: "Ps", gcPe: "Pe", gcPi: "Pi", gcPf: "Pf", gcPo: "Po",
	gcSm: "Sm", gcSc: "Sc", gcSk: "Sk", gcSo: "So", gcZs: "Zs", gcZl: "Zl", gcZp: "Zp",
	gcCc: "Cc", gcCf: "Cf", gcCs: "Cs", gcCo: "Co"}

// TestGCGroupsOnlyGrew: the classes real Split regexes use only gained
// code points from Go's tables to 16.0, so gcClass takes its fast form
// (Mn did not: 16.0 moved some marks to Mc, so \p{Mn} is all ranges).
func TestGCGroupsOnlyGrew(t *testing.T) {
	for _, name := range []string{"L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "P", "S", "Z"} {
		if got := gcClass(name, gcGroups[name]); !strings.HasPrefix(got, `\p{`+name+`}`) {
			t.Errorf("%s: 16.0 dropped code points Go has; class %.60q...", name, got)
		}
	}
	if !strings.Contains(gcAddedSince15("So"), `\x{31EF}`) {
		t.Error("U+31EF (So, 15.1) not added")
	}
	if got := gcClass("Mn", gcGroups["Mn"]); strings.Contains(got, `\p{`) {
		t.Errorf("Mn: %.40q..., want explicit ranges", got)
	}
}

func TestPossessiveQuantifierRefused(t *testing.T) {
	for expr, want := range map[string]bool{
		`a?+b`: true, `a*+`: true, `[^\s]++`: true, `x{1,3}+`: false, `a+?`: false,
		`[?+*]`: false, `(?:a)`: false, `(?i:'s)+`: false, `\++`: false, `a\?+`: false,
	} {
		if got := hasPossessive(expr); got != want {
			t.Errorf("hasPossessive(%q) = %v, want %v", expr, got, want)
		}
	}
	data := tinyWith(t, func(m map[string]any) {
		m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{L}++|\s`}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false}}}
	})
	_, err := ParseHFTokenizer("x", data)
	if !errors.Is(err, ErrUnsupportedTokenizer) || !strings.Contains(err.Error(), "unsupported: possessive quantifier in split regex") {
		t.Errorf("err = %v, want ErrUnsupportedTokenizer about a possessive quantifier", err)
	}
}

func TestUnigramRefused(t *testing.T) {
	data := tinyWith(t, func(m map[string]any) {
		m["model"] = map[string]any{"type": "Unigram", "unk_id": 0, "vocab": []any{[]any{"<unk>", 0.0}, []any{"a", -1.5}}}
	})
	_, err := ParseHFTokenizer("x", data)
	if !errors.Is(err, ErrUnsupportedTokenizer) || !strings.Contains(err.Error(), "unsupported: Unigram model") {
		t.Errorf("err = %v, want ErrUnsupportedTokenizer about the Unigram model", err)
	}
}
