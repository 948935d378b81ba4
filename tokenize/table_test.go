package tokenize

import (
	"bytes"
	"os"
	"testing"

	"github.com/custody-gateway/custody/tokenize/internal/ucdgen"
)

// TestTableUpToDate: the committed Unicode tables are what the generator
// writes from the UCD files in testdata/ucd (go generate ./tokenize):
// neither was edited by hand, nor is either stale.
func TestTableUpToDate(t *testing.T) {
	gc, class, err := ucdgen.Tables("testdata/ucd")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"gc_table.go": gc, "class_table.go": class} {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
			for i := 0; i < len(gl) || i < len(wl); i++ {
				if i >= len(gl) || i >= len(wl) || !bytes.Equal(gl[i], wl[i]) {
					var g, w []byte
					if i < len(gl) {
						g = gl[i]
					}
					if i < len(wl) {
						w = wl[i]
					}
					t.Errorf("%s differs from the generator's output (go generate ./tokenize) at line %d:\n have %s\n want %s", name, i+1, g, w)
					break
				}
			}
		}
	}
}
