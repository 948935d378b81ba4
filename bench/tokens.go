package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/custody-gateway/custody/tokenize"
)

// The token benchmark counts the same documents with custody's counters
// and with npm's tiktoken (the reference: OpenAI's Rust core in WASM),
// one core each, and compares the counts.

// tokenResult is one encoding's figures.
type tokenResult struct {
	Encoding   string
	Bytes      int64
	Count      int     // tokens in the corpus (custody)
	MBps       float64 // custody, one goroutine
	NodeCount  int     // tiktoken's count; -1 when not run
	NodeMBps   float64
	NodeNote   string // why the node column is missing
	CountMatch bool
}

var encodings = []string{"o200k_base", "cl100k_base"}

// corpus is the repository's own Go and Markdown files, one document
// each, in path order: mixed English prose and code, the same on every
// checkout. maxBytes > 0 stops it early.
func corpus(root string, maxBytes int64) ([]string, int64, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md")) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	slices.Sort(paths)
	var docs []string
	var n int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		docs = append(docs, string(b))
		n += int64(len(b))
		if maxBytes > 0 && n >= maxBytes {
			break
		}
	}
	return docs, n, nil
}

// runTokens measures both encodings over docs for at least minDur each.
func runTokens(ctx context.Context, docs []string, size int64, minDur time.Duration, tkDir string, log io.Writer) ([]tokenResult, error) {
	var out []tokenResult
	for _, enc := range encodings {
		c, err := tokenize.Lookup(enc)
		if err != nil {
			return nil, err
		}
		r := tokenResult{Encoding: enc, Bytes: size, NodeCount: -1}
		for _, d := range docs { // also warms the counter up
			r.Count += c.Count(d)
		}
		var passes int
		start := time.Now()
		for passes == 0 || time.Since(start) < minDur {
			for _, d := range docs {
				c.Count(d)
			}
			passes++
		}
		r.MBps = float64(size) * float64(passes) / 1e6 / time.Since(start).Seconds()
		out = append(out, r)
		fmt.Fprintf(log, "tokens %s: %d tokens, %.2f MB/s\n", enc, r.Count, r.MBps)
	}
	node, note := map[string]nodeResult(nil), "skipped (-no-node)"
	if tkDir != "" {
		node, note = runNodeTiktoken(ctx, docs, minDur, tkDir)
	}
	for i := range out {
		if n, ok := node[out[i].Encoding]; ok {
			out[i].NodeCount = n.Count
			out[i].NodeMBps = float64(size) * float64(n.Passes) / 1e6 / n.Seconds
			out[i].CountMatch = n.Count == out[i].Count
			fmt.Fprintf(log, "tokens %s (npm tiktoken): %d tokens, %.2f MB/s\n", out[i].Encoding, n.Count, out[i].NodeMBps)
		} else {
			out[i].NodeNote = note
		}
	}
	return out, nil
}

// nodeScript counts with npm's tiktoken: argv = docs.json, seconds.
const nodeScript = `const {get_encoding} = require("tiktoken");
const fs = require("fs");
const docs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const minSec = parseFloat(process.argv[3]);
const out = {};
for (const name of ["o200k_base", "cl100k_base"]) {
  const enc = get_encoding(name);
  let count = 0;
  for (const d of docs) count += enc.encode_ordinary(d).length;
  let passes = 0, el = 0;
  const t0 = process.hrtime.bigint();
  do {
    for (const d of docs) enc.encode_ordinary(d);
    passes++;
    el = Number(process.hrtime.bigint() - t0) / 1e9;
  } while (el < minSec);
  out[name] = {count, passes, seconds: el};
  enc.free();
}
console.log(JSON.stringify(out));
`

type nodeResult struct {
	Count   int     `json:"count"`
	Passes  int     `json:"passes"`
	Seconds float64 `json:"seconds"`
}

// runNodeTiktoken runs nodeScript with tiktoken from tkDir/node_modules,
// installing it there with npm first if it is missing. It returns nil and
// a note when node or the package is unavailable.
func runNodeTiktoken(ctx context.Context, docs []string, minDur time.Duration, tkDir string) (map[string]nodeResult, string) {
	if _, err := exec.LookPath("node"); err != nil {
		return nil, "node is not installed"
	}
	if err := os.MkdirAll(tkDir, 0o755); err != nil {
		return nil, err.Error()
	}
	if _, err := os.Stat(filepath.Join(tkDir, "node_modules", "tiktoken")); err != nil {
		if _, err := exec.LookPath("npm"); err != nil {
			return nil, "npm is not installed"
		}
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", tkDir, "--no-audit", "--no-fund", "tiktoken@1")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("npm install tiktoken failed: %v: %s", err, bytes.TrimSpace(b))
		}
	}
	docsPath := filepath.Join(tkDir, "bench-docs.json")
	b, err := json.Marshal(docs)
	if err != nil {
		return nil, err.Error()
	}
	scriptPath := filepath.Join(tkDir, "bench-count.js")
	if err := os.WriteFile(docsPath, b, 0o600); err != nil {
		return nil, err.Error()
	}
	defer os.Remove(docsPath)
	if err := os.WriteFile(scriptPath, []byte(nodeScript), 0o600); err != nil {
		return nil, err.Error()
	}
	cmd := exec.CommandContext(ctx, "node", scriptPath, docsPath, fmt.Sprint(minDur.Seconds()))
	cmd.Dir = tkDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Sprintf("node tiktoken failed: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	res := map[string]nodeResult{}
	if err := json.Unmarshal(outb, &res); err != nil {
		return nil, fmt.Sprintf("node tiktoken output: %v", err)
	}
	return res, ""
}
