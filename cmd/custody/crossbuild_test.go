package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestCrossBuild compiles the command and verify for Windows and macOS:
// an auditor on either must be able to run `custody verify` and `custody
// audit`, so nothing those commands import may be unix-only (serve and
// canary are, behind build tags; serve_other.go stands in for them).
//
// It is a compile check, not a build: `go list -export` compiles every
// package for the target (type errors, undefined unix-only symbols and
// missing build-tagged stand-ins all fail it) and stops short of linking
// two full binaries, which took most of this package's time on a loaded
// machine. The compiled packages stay in the build cache, so a second run
// costs seconds.
func TestCrossBuild(t *testing.T) {
	t.Parallel() // compiles while the integration tests wait on sockets
	if testing.Short() {
		t.Skip("cross-compiling takes a while; skipped with -short")
	}
	for _, target := range []struct{ goos, goarch string }{
		{"windows", "amd64"},
		{"darwin", "arm64"},
	} {
		t.Run(target.goos, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-export", "-f", "{{if not .Export}}{{.ImportPath}}: no export data{{end}}",
				".", "github.com/custody-gateway/custody/verify")
			cmd.Env = append(os.Environ(), "GOOS="+target.goos, "GOARCH="+target.goarch, "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Fatalf("GOOS=%s GOARCH=%s go list -export ./cmd/custody ./verify: %v\n%s", target.goos, target.goarch, err, out)
			}
		})
	}
}
