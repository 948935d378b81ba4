//go:build unix

package main

import (
	"net/http"
	"net/http/pprof"

	"github.com/custody-gateway/custody/gateway"
)

// pprofPrefix is where debug.pprof serves Go's profiler.
const pprofPrefix = "/debug/pprof/"

// pprofMount is the profiler behind the admin key, as a mount of the
// gateway that gw() will be once built (the mounts are handed to
// gateway.New, which makes gw). The handlers are net/http/pprof's own,
// on a mux of their own: importing that package registers them on
// http.DefaultServeMux too, which custody never serves.
//
//	curl -H "Authorization: Bearer $ADMIN_KEY" -o cpu.pprof \
//	  'http://127.0.0.1:8080/debug/pprof/profile?seconds=10'
func pprofMount(gw func() *gateway.Gateway) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(pprofPrefix, pprof.Index)
	mux.HandleFunc(pprofPrefix+"cmdline", pprof.Cmdline)
	mux.HandleFunc(pprofPrefix+"profile", pprof.Profile)
	mux.HandleFunc(pprofPrefix+"symbol", pprof.Symbol)
	mux.HandleFunc(pprofPrefix+"trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw().AdminOnly(mux).ServeHTTP(w, r)
	})
}
