//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/config"
)

// runServe runs the gateway until ctx is cancelled.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", stderr)
	cfgPath := fs.String("config", "", "read the config from `FILE` (YAML); none: the embedded defaults")
	listen := fs.String("listen", "", "listen on `ADDR` (host:port; :0 picks a port), overriding the config's listen key")
	withSynopsis(fs, "custody serve [--config FILE] [--listen ADDR]",
		"Runs the gateway: every request to an upstream is checked and recorded in the ledger, and its\n"+
			"receipt returned. Without --config: 127.0.0.1:8080 in front of the built-in simulator. SIGHUP\n"+
			"reloads the config file; SIGINT or SIGTERM stops it (in-flight requests get 30 s).",
		"0  stopped by SIGINT or SIGTERM after a clean shutdown",
		"1  refused to start (a bad config, each bad key on stderr; a corrupt journal; the address in use),\n"+
			"     or the server failed")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody: refusing to start: bad configuration:\n%v\n", err)
		return 1
	}
	defer setGCDefault()()
	if *listen != "" {
		cfg.Listen = *listen
	}
	// Everything serve writes to stderr from here on goes through one
	// buffered writer, so that the log's lines and serve's own messages
	// keep their order.
	logOut := newLogWriter(stderr)
	defer logOut.Close()
	stderr = logOut
	logger := slog.New(flushingHandler{Handler: slog.NewJSONHandler(logOut, nil), w: logOut, json: true})
	app, err := start(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "custody: %v%s%s\n", err, corruptJournalAdvice(err, cfg.DataDir), tamperedAdvice(err, cfg.DataDir))
		return 1
	}
	defer app.close()
	printBanner(stdout, cfg, app)
	if *cfgPath != "" {
		stopReload := app.reloadOnHUP(*cfgPath, *listen, logger)
		defer stopReload()
	}
	code := serveUntilDone(ctx, app.server, app.listener, stderr)
	return code
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default()
	}
	return config.Load(path)
}

// adminKey reads or creates the generated admin key (mode 0600).
func adminKey(dataDir string) (key, path string, err error) {
	path = filepath.Join(dataDir, "admin.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), path, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("reading admin key: %w", err)
	}
	var raw [24]byte
	rand.Read(raw[:])
	key = "cust-admin-" + hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("writing admin key: %w", err)
	}
	return key, path, nil
}

// printBanner writes the start-up banner in one write, so a reader that
// sees its first line sees all of it.
func printBanner(out io.Writer, cfg *config.Config, a *app) {
	var w bytes.Buffer
	defer func() { out.Write(w.Bytes()) }()
	addr := a.listener.Addr().String()
	base := "http://" + addr
	fmt.Fprintf(&w, "custody %s: inference-integrity gateway\n", version)
	fmt.Fprintf(&w, "  listening   %s  (OpenAI-compatible: point your client's base URL at %s/v1)\n", base, base)
	for _, p := range cfg.Providers {
		if u, ok := a.simURLs[p.Name]; ok {
			fmt.Fprintf(&w, "  upstream    %s: built-in simulator at %s\n", p.Name, u)
		} else {
			fmt.Fprintf(&w, "  upstream    %s: %s\n", p.Name, p.BaseURL)
		}
	}
	abs, _ := filepath.Abs(cfg.DataDir)
	fmt.Fprintf(&w, "  data        %s  (transparency log, index, keys)\n", abs)
	fmt.Fprintf(&w, "  log         %s/log/checkpoint  (verify with: custody audit --log %s/log)\n", base, base)
	if a.adminKeyFile != "" {
		fmt.Fprintf(&w, "  admin key   in %s  (console: %s/ui/)\n", a.adminKeyFile, base)
	}
	model := "sim-1"
	if len(cfg.Models) > 0 {
		model = cfg.Models[0].Name
	}
	fmt.Fprintf(&w, "\ntry:\n  curl -si %s/v1/chat/completions -H 'Content-Type: application/json' \\\n    -d '{\"model\":%q,\"messages\":[{\"role\":\"user\",\"content\":\"Hello, custody\"}]}'\n\n", base, model)
}
