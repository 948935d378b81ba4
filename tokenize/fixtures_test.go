package tokenize

import (
	"encoding/json"
	"os"
	"testing"
)

// fixture is a text with its token counts from the reference tiktoken
// (npm's tiktoken, Rust compiled to WASM), written by testdata/gen/gen.js.
type fixture struct {
	Text   string `json:"text"`
	O200k  int    `json:"o200k_base"`
	CL100k int    `json:"cl100k_base"`
}

func (f fixture) count(name string) int {
	if name == "o200k_base" {
		return f.O200k
	}
	return f.CL100k
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	data, err := os.ReadFile("testdata/counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	if err := json.Unmarshal(data, &fs); err != nil {
		t.Fatal(err)
	}
	if len(fs) < 300 {
		t.Fatalf("only %d fixtures", len(fs))
	}
	return fs
}

func TestCountMatchesTiktokenFixtures(t *testing.T) {
	fs := loadFixtures(t)
	for _, name := range encodingNames {
		t.Run(name, func(t *testing.T) {
			e := mustEncoding(t, name)
			for _, f := range fs {
				if got, want := e.Count(f.Text), f.count(name); got != want {
					t.Errorf("Count(%.80q) = %d, tiktoken %d\n%s", f.Text, got, want, describe(t, e, f.Text))
				}
			}
		})
	}
}
