//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/custody-gateway/custody/doctor"
)

// runDoctor is `custody doctor [--config FILE] [--json]`: the config
// checked against the live upstreams and the disk under data_dir
// (package doctor), a table or JSON,
// exit 1 on any problem. Providers of kind sim are started as serve
// starts them.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("doctor", stderr)
	cfgPath := fs.String("config", "", "read the config from `FILE` (YAML); none: the embedded defaults")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	withSynopsis(fs, "custody doctor [--config FILE] [--json]",
		"Checks the config against the live upstreams (reachable, models, context windows, token\n"+
			"accounting, request id echo) and the disk under data_dir, a finding a line with what to change.\n"+
			"Providers of kind sim are started as serve starts them.",
		"0  no problem (warnings included)",
		"1  a problem (each with its fix), or a bad config")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "doctor takes no arguments, got %q", fs.Args())
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "custody: bad configuration:\n%v\n", err)
		return 1
	}
	a := &app{simURLs: map[string]string{}}
	defer a.close()
	clients, err := a.startUpstreams(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "custody doctor: %v\n", err)
		return 1
	}
	// The disk first: serve cannot start without it, and every durable
	// answer waits for it.
	findings := append([]doctor.Finding{doctor.Disk(ctx, cfg.DataDir)}, doctor.Run(ctx, cfg, clients)...)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(findings)
	} else {
		printFindings(stdout, findings)
	}
	if n := doctor.Problems(findings); n > 0 {
		if !*asJSON {
			fmt.Fprintf(stdout, "\n%d problem(s): until they are fixed, custody would misjudge these upstreams or not run.\n", n)
		}
		return 1
	}
	return 0
}

func printFindings(w io.Writer, fs []doctor.Finding) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tPROVIDER\tMODEL\tSTATUS\tDETAIL")
	for _, f := range fs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Check, f.Provider, f.Model, f.Status, f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(tw, "\t\t\t\t→ %s\n", f.Fix)
		}
	}
	tw.Flush()
}
