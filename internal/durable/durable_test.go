package durable

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestWriteFileReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	for _, data := range []string{"first", "second, longer", ""} {
		if err := WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("after writing %q: %q, %v", data, got, err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

func TestCreateFileIsExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := CreateFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(path, []byte("two"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "one" {
		t.Errorf("the first key was replaced: %q", got)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
}

// TestConcurrentWritersNeverTear: writers of one path each use their own
// temporary file, so the file is always one writer's whole content (a
// fixed temporary name would let one writer rename another's half).
func TestConcurrentWritersNeverTear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				data := bytes.Repeat([]byte{byte('a' + i)}, 4096+j)
				if err := WriteFile(path, data, 0o600); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, _ := os.ReadFile(path)
	if len(got) < 4096 || bytes.Count(got, got[:1]) != len(got) {
		t.Errorf("a torn file of %d bytes", len(got))
	}
}

// TestCrashMidWriteKeepsTheOldFile runs a child process that dies inside
// WriteFile, after half the new content is written and after it is
// synced but not renamed: either way path holds the old content whole.
func TestCrashMidWriteKeepsTheOldFile(t *testing.T) {
	if step := os.Getenv("DURABLE_CRASH_AT"); step != "" {
		crash = func(s string) {
			if s == step {
				os.Exit(3) // no deferred cleanup runs: as a crash
			}
		}
		WriteFile(os.Getenv("DURABLE_PATH"), bytes.Repeat([]byte("new "), 1<<16), 0o600)
		os.Exit(0)
	}
	for _, step := range []string{"half-written", "synced"} {
		t.Run(step, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state")
			if err := WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidWriteKeepsTheOldFile$")
			cmd.Env = append(os.Environ(), "DURABLE_CRASH_AT="+step, "DURABLE_PATH="+path)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("the child did not crash at %s: %v", step, err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("after a crash at %s the file holds %d bytes, not the old content", step, len(got))
			}
			// The stray temporary file is the only other name, and the
			// next write succeeds beside it.
			ents, _ := os.ReadDir(filepath.Dir(path))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if len(ents) != 2 || !strings.HasPrefix(fmt.Sprint(names), "[.tmp-state-") {
				t.Errorf("directory after the crash: %v", names)
			}
			if err := WriteFile(path, []byte("next"), 0o600); err != nil {
				t.Fatal(err)
			}
		})
	}
}
