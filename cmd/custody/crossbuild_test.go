package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCrossBuild builds the command for Windows and macOS: an auditor on
// either must be able to run `custody verify` and `custody audit`, so
// nothing those commands import may be unix-only (serve and canary are,
// behind build tags; serve_other.go stands in for them).
func TestCrossBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling takes a while; skipped with -short")
	}
	for _, goos := range []string{"windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "custody"), ".")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOOS=%s go build ./cmd/custody: %v\n%s", goos, err, out)
			}
		})
	}
}
