package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// TestDeepSeekNativeMatchesRegexp2 checks the hand-written DeepSeek-V3
// splitters against regexp2 (on Unicode 16.0 classes) on random text, on
// text built around every code point whose class changed since Go's
// Unicode 15.0, and on the edge cases of each alternative.
func TestDeepSeekNativeMatchesRegexp2(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	var texts []string
	for i := 0; i < 500; i++ {
		texts = append(texts, strings.ToValidUTF8(randomText(r, 1+r.IntN(40)), "\uFFFD"))
	}
	var b strings.Builder
	for c := rune(0x80); c <= unicode.MaxRune; c++ {
		if (c < 0xD800 || c > 0xDFFF) && runeClass(c) != goClass(c) {
			b.WriteRune(c)
			b.WriteString([]string{"a", " ", "1", ".x", " !", "\u0301", "", "\r\n "}[int(c)%8])
		}
	}
	texts = append(texts, b.String(),
		".Hello", "'é", " ...\r\n\n", "1abc", "123456 x", "  \n\t x", "\u0301abc", "日本語のテキストです", "x=1;\ty", " \u00a0", "\x00a",
		"// comment\nfunc f() {}", `{"k": [1, 2.5e+10]}`, "a+b=c", "$100 ~/x", "©® →é", "ひらがなカタカナ漢字", " ||x", "@@a\n\n  b", "Z̴̢̡͓a", "  ", "a  ", "\n", "?!a", "_Ab")
	for expr, gp := range deepSeekPatterns {
		re, err := newRegexSplitter(expr, isolated)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			var got, want []string
			gp.split(text, func(p string) { got = append(got, p) })
			re.split(text, func(p string) { want = append(want, p) })
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("pattern %d on %+q:\nnative  %+q\nregexp2 %+q", gp, text, got, want)
			}
		}
	}
}

// TestDeepSeekUsesNativeSplitters: the real DeepSeek-V3 tokenizer.json
// spells its regexes as deepSeekPatterns does.
func TestDeepSeekUsesNativeSplitters(t *testing.T) {
	tok := realTokenizer(t, "deepseek_v3")
	n := 0
	for _, st := range tok.pre {
		if s, ok := st.(splitStep); ok {
			if _, slow := s.sp.(*regexSplitter); slow {
				t.Errorf("a Split runs on regexp2")
			}
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d Split steps, want 3", n)
	}
}
