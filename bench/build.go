package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// buildCustody builds the custody binary that mode F runs, as a user
// would (go build ./cmd/custody), into a temporary directory. It builds
// with go test's flags, so that every package go test has compiled is
// taken from the build cache: with -trimpath, a cold cache compiled the
// whole tree again (about 115 CPU-seconds on the 2-core machine).
func buildCustody(root string) (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "custody-bench-bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "custody")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/custody")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building custody in %s: %v\n%s", root, err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// keptTrees is how many exported trees buildCustodyAt keeps.
const keptTrees = 4

// buildCustodyAt builds custody as it is at git ref (mode G). The tree of
// ref is exported with git archive into a directory named by its commit
// under the user's cache directory and kept there: a package's directory
// is part of its build cache key, so the next build of the same commit
// (the next bench run, the next TestBuildCustodyAt) compiles nothing,
// and the module's dependencies, outside the tree, are go test's. The
// keptTrees most recently built trees are kept.
func buildCustodyAt(root, ref string) (string, func(), error) {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", ref+"^{commit}").Output()
	commit := strings.TrimSpace(string(out))
	if err != nil || commit == "" {
		return "", nil, fmt.Errorf("-baseline %s: not a commit of %s", ref, root)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, err
	}
	trees := filepath.Join(cache, "custody-bench")
	if err := os.MkdirAll(trees, 0o700); err != nil {
		return "", nil, err
	}
	src := filepath.Join(trees, "src-"+commit)
	if err := exportTree(root, commit, src); err != nil {
		return "", nil, fmt.Errorf("-baseline %s: %w", ref, err)
	}
	now := time.Now()
	os.Chtimes(src, now, now)
	pruneTrees(trees)
	bin, cleanup, err := buildCustody(src)
	if err != nil {
		return "", nil, fmt.Errorf("-baseline %s: %w", ref, err)
	}
	return bin, cleanup, nil
}

// exportTree writes commit's tree to dst unless it is there: into a
// temporary sibling first, renamed into place, so that a concurrent
// export or an interrupted one never leaves a partial tree at dst.
func exportTree(root, commit, dst string) error {
	if _, err := os.Stat(filepath.Join(dst, "go.mod")); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", tmp)
	if untar.Stdin, err = archive.StdoutPipe(); err != nil {
		return err
	}
	var aerr strings.Builder
	archive.Stderr = &aerr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return fmt.Errorf("git archive: %v: %s", err, aerr.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("extracting: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(filepath.Join(dst, "go.mod")); serr == nil {
			return nil // a concurrent export got there first
		}
		return err
	}
	return nil
}

// pruneTrees removes all but the keptTrees most recently used trees.
func pruneTrees(dir string) {
	entries, _ := os.ReadDir(dir)
	type tree struct {
		path string
		used time.Time
	}
	var trees []tree
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "src-") {
			continue
		}
		if info, err := e.Info(); err == nil {
			trees = append(trees, tree{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	slices.SortFunc(trees, func(a, b tree) int { return b.used.Compare(a.used) })
	for _, t := range trees[min(keptTrees, len(trees)):] {
		os.RemoveAll(t.path)
	}
}
