package tokenize

import (
	"testing"
	"unicode"
)

// goClass classifies r with Go's unicode package (Unicode 15.0).
func goClass(r rune) class {
	switch {
	case r == '\r' || r == '\n':
		return cSpace | cNewline
	case unicode.IsSpace(r):
		return cSpace
	case unicode.IsLetter(r):
		switch {
		case unicode.IsLower(r):
			return cLetter | cLower
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			return cLetter | cUpper
		}
		return cLetter | cUpper | cLower
	case unicode.IsMark(r):
		return cUpper | cLower
	case unicode.IsNumber(r):
		return cNumber
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		return cPunctSym
	}
	return 0
}

// TestClassTableExtendsGo checks the generated Unicode 16.0 table against
// Go's 15.0 tables: every code point Go puts in a class is in the same one
// (no category changed between them), and the table adds the new ones.
func TestClassTableExtendsGo(t *testing.T) {
	added := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		got, old := runeClass(r), goClass(r)
		switch {
		case old != 0 && got != old:
			t.Errorf("U+%04X: class %b, Go's unicode %b", r, got, old)
		case old == 0 && got != 0:
			added++
		}
	}
	// Unicode 15.1 and 16.0 added about 5,000 letters, marks and digits
	// (CJK Extension I, Garay, Kirat Rai, Tulu-Tigalari, Egyptian...).
	if added < 1000 {
		t.Errorf("table adds only %d code points to Go's", added)
	}
	for _, r := range []rune{0x1C89, 0x2EBF0, 0x10D50} { // new in 16.0, 15.1, 16.0
		if runeClass(r)&cLetter == 0 {
			t.Errorf("U+%04X is not a letter", r)
		}
	}
	if runeClass(0x10940) != 0 { // Sidetic, new in 17.0: not yet
		t.Errorf("U+10940 (Unicode 17.0) is classified")
	}
}
