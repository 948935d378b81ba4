package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input makes Parse panic, and what it accepts validates.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add(defaultYAML)
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data, env(map[string]string{"ADMIN": "a"}))
		if err == nil {
			if err := c.Validate("again"); err != nil {
				t.Fatalf("accepted config fails validation: %v", err)
			}
		}
	})
}
