package config

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docBase completes a documentation fragment: a block that shows only
// policies, or only canaries, borrows the sections it does not set from
// here, so that every block is loaded as a whole config would be.
const docBase = `
tenants:
  - {id: docs, api_keys: ["sk-docs"]}
providers:
  - {name: primary, kind: sim}
models:
  - name: glm-5.3
    context_window: 4096
    routes: [{provider: primary}]
`

// yamlBlocks returns every ```yaml block of a Markdown file with the line
// it starts on.
func yamlBlocks(t *testing.T, path string) (blocks []string, lines []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cur *strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && (trimmed == "```yaml" || trimmed == "```yml"):
			cur, start = &strings.Builder{}, n+1
		case cur != nil && trimmed == "```":
			blocks, lines = append(blocks, cur.String()), append(lines, start)
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated yaml block", path, start)
	}
	return blocks, lines
}

// completeFragment adds docBase's top-level sections that block lacks.
func completeFragment(t *testing.T, block string) []byte {
	t.Helper()
	var doc, base yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return []byte(block) // Parse reports it, with the file's name
	}
	if err := yaml.Unmarshal([]byte(docBase), &base); err != nil {
		t.Fatal(err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return []byte(block)
	}
	m, b := doc.Content[0], base.Content[0]
	have := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		have[m.Content[i].Value] = true
	}
	for i := 0; i+1 < len(b.Content); i += 2 {
		if !have[b.Content[i].Value] {
			m.Content = append(m.Content, b.Content[i], b.Content[i+1])
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocumentationYAMLLoads: every yaml block of README.md and docs/*.md
// is a config custody starts with (fragments completed from docBase),
// with every ${VAR} set: a user who copies one gets a working file.
func TestDocumentationYAMLLoads(t *testing.T) {
	files := []string{"../README.md"}
	docs, _ := filepath.Glob("../docs/*.md")
	files = append(files, docs...)
	// A variable named *_DIR is a directory holding the files examples
	// point into (a model's tokenizer.json and tokenizer_config.json):
	// config checks that they can be read.
	modelDir := t.TempDir()
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if err := os.WriteFile(filepath.Join(modelDir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	anyEnv := func(name string) (string, bool) {
		if strings.HasSuffix(name, "_DIR") {
			return modelDir, true
		}
		return "doc-" + strings.ToLower(name), true
	}
	total := 0
	for _, f := range files {
		blocks, lines := yamlBlocks(t, f)
		for i, b := range blocks {
			total++
			name := strings.TrimPrefix(f, "../") + ":" + strconv.Itoa(lines[i])
			if _, err := Parse(name, completeFragment(t, b), anyEnv); err != nil {
				t.Errorf("the yaml block at %s does not load:\n%v", name, err)
			}
		}
	}
	if total == 0 {
		t.Fatal("found no yaml blocks: is the README still there?")
	}
}
