package ledger

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/custody-gateway/custody/verify"
)

// newHandler serves the public files of the log in dir, read-only, under
// /log/: checkpoint, verifier, tile/... and tile/entries/.... Nothing else
// in dir (tessera's .state, temporary files) is reachable.
//
// Caching: a full tile or bundle never changes, so it is immutable for a
// year; a partial one is replaced when it fills (and later removed), and
// the checkpoint changes every interval, so neither may be cached.
func newHandler(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/log/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		var ctype, cache string
		switch {
		case p == "checkpoint" || p == verify.VerifierFile:
			ctype, cache = "text/plain; charset=utf-8", "no-cache"
		case validTilePath(p):
			ctype = "application/octet-stream"
			if strings.Contains(p, ".p/") {
				cache = "no-cache"
			} else {
				cache = "public, max-age=31536000, immutable"
			}
		default:
			http.NotFound(w, r)
			return
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "log unavailable", http.StatusServiceUnavailable)
			return
		}
		defer root.Close()
		f, err := root.Open(p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", cache)
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, "", time.Time{}, f)
	})
}

// validTilePath accepts exactly the C2SP tlog-tiles paths
// tile/<L>/<N> and tile/entries/<N>, each optionally .p/<W>, where <N> is
// x###/.../### and <W> is 1..255.
func validTilePath(p string) bool {
	rest, ok := strings.CutPrefix(p, "tile/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 {
		return false
	}
	if parts[0] != "entries" {
		if l, err := strconv.Atoi(parts[0]); err != nil || l < 0 || l > 63 || strconv.Itoa(l) != parts[0] {
			return false
		}
	}
	parts = parts[1:]
	if n := len(parts); n >= 2 && strings.HasSuffix(parts[n-2], ".p") {
		w, err := strconv.Atoi(parts[n-1])
		if err != nil || w < 1 || w > 255 || strconv.Itoa(w) != parts[n-1] {
			return false
		}
		parts = append(parts[:n-2], strings.TrimSuffix(parts[n-2], ".p"))
	}
	for i, c := range parts {
		if i < len(parts)-1 {
			c, ok = strings.CutPrefix(c, "x")
			if !ok {
				return false
			}
		}
		if len(c) != 3 || strings.Trim(c, "0123456789") != "" {
			return false
		}
	}
	return true
}
