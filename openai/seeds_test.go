package openai

import (
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds every file of dir to f's corpus.
func addSeeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}
