package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/custody-gateway/custody/verify"
	"golang.org/x/mod/sumdb/note"
)

const verifySynopsis = "custody verify [--log URL|DIR] [--request FILE] [--response FILE] [--key VKEY] [--wait DURATION]\n" +
	"                      [--witness-key VKEY]... [--witness-quorum N] [--export FILE] RECEIPT\n" +
	"       custody verify --offline --key VKEY [--witness-key VKEY]... [--witness-quorum N] [--request FILE] [--response FILE] BUNDLE"

// runVerify is `custody verify`: one receipt or offline bundle (a file,
// or - for stdin) checked with package verify. Exit 0 valid, 1 invalid
// (the reason on stderr), 2 usage error, 3 valid signature but not yet
// integrated in the log (--wait polls the log until it is). Flags may
// follow the receipt.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify", stderr)
	logLoc := fs.String("log", "", "the log at `URL|DIR`: a directory or an http(s) URL of its /log/ root; none: the receipt's own checkpoint and proof only")
	reqFile := fs.String("request", "", "the `FILE` of the exact request body bytes, to open the request commitment")
	respFile := fs.String("response", "", "the `FILE` of the exact response body bytes, to open the response commitment")
	key := fs.String("key", "", "the log's verifier key `VKEY`, or a file holding it (pin it out of band: GET /log/verifier once, keep it); none: the key the log publishes")
	wait := fs.Duration("wait", 0, "with --log: poll the log up to `DURATION` (e.g. 2s) until it holds the receipt's leaf, instead of exiting 3 at once")
	offline := fs.Bool("offline", false, "check a bundle (or an integrated receipt) with the pinned keys only: no log, no network")
	export := fs.String("export", "", "after verifying, write the receipt as a self-contained offline bundle to `FILE` (- for stdout)")
	wp := witnessFlags(fs)
	withSynopsis(fs, verifySynopsis, "Verifies a receipt: the gateway's signature, that the request and response bytes open its\n"+
		"commitments, its inclusion in the log, and (with --witness-key) the witnesses' cosignatures on the\n"+
		"checkpoint. RECEIPT is a file, or - for stdin.",
		"0  valid",
		"1  invalid (the reason on stderr)",
		"3  the signature is valid but the log does not hold the leaf yet (retry, or use --wait)")
	pos, code, ok := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, "verify takes one receipt, got %d arguments (see custody verify --help)", len(pos))
	}
	switch {
	case *wait < 0 || (*wait > 0 && *logLoc == ""):
		return usageError(stderr, "--wait needs --log (the log to poll) and a positive duration")
	case *offline && (*logLoc != "" || *export != ""):
		return usageError(stderr, "--offline uses no log: it takes no --log, --wait or --export")
	case *offline && *key == "":
		return usageError(stderr, "--offline needs --key (the log's pinned verifier key)")
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "custody verify: %v\n", err)
		return code
	}
	policy, err := wp.policy()
	if err != nil {
		return fail(exitUsage, err)
	}
	raw, err := readArg(pos[0])
	if err != nil {
		return fail(exitUsage, err)
	}
	var request, response []byte
	if *reqFile != "" {
		if request, err = os.ReadFile(*reqFile); err != nil {
			return fail(exitUsage, err)
		}
	}
	if *respFile != "" {
		if response, err = os.ReadFile(*respFile); err != nil {
			return fail(exitUsage, err)
		}
	}
	var src verify.LogSource
	if *logLoc != "" {
		if src, err = verify.OpenSource(*logLoc); err != nil {
			return fail(exitUsage, err)
		}
	}
	start := time.Now()
	v, err := verifierFor(ctx, *key, src, stderr)
	if err != nil {
		if *key != "" || src == nil {
			return fail(exitUsage, err)
		}
		return fail(exitFailed, err) // the log publishes no usable key
	}
	r, err := parseReceiptOrBundle(raw)
	if err != nil {
		return fail(exitFailed, fmt.Errorf("invalid: %w", err))
	}
	opts := verify.Options{Witnesses: policy}
	res, err := verify.VerifyReceiptWith(ctx, src, v, opts, r, request, response)
	for deadline := time.Now().Add(*wait); errors.Is(err, verify.ErrNotIntegrated) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return fail(exitFailed, ctx.Err())
		case <-time.After(min(pollInterval, time.Until(deadline))):
		}
		res, err = verify.VerifyReceiptWith(ctx, src, v, opts, r, request, response)
	}
	if errors.Is(err, verify.ErrNotIntegrated) {
		fmt.Fprintf(stderr, "custody verify: the signature is valid but %v; retry, or pass --wait 2s\n", err)
		return exitPending
	}
	if err != nil {
		return fail(exitFailed, err)
	}
	if src == nil && r.Checkpoint == "" {
		fmt.Fprintf(stderr, "custody verify: the signature is valid but the receipt has no inclusion proof yet (not yet integrated): pass --log to check the log, with --wait to wait for it\n")
		return exitPending
	}
	what := []string{"signature"}
	if request != nil {
		what = append(what, "request")
	}
	if response != nil {
		what = append(what, "response")
	}
	switch {
	case src != nil:
		what = append(what, "inclusion in the log")
	default:
		what = append(what, "inclusion under the receipt's checkpoint")
	}
	if policy.Quorum > 0 {
		what = append(what, fmt.Sprintf("cosigned by %s (quorum %d)", strings.Join(res.Cosigners, ", "), policy.Quorum))
	}
	if *offline {
		what = append(what, fmt.Sprintf("offline, %s", time.Since(start).Round(10*time.Microsecond)))
	}
	fmt.Fprintf(stdout, "valid: request %s, index %d, log %s (%s)\n", r.RequestID, r.Index, r.Origin, strings.Join(what, ", "))
	printPolicy(ctx, stdout, stderr, src, v, res)
	if *export != "" {
		if err := exportBundle(ctx, src, v, opts, r, *export, stdout); err != nil {
			return fail(exitFailed, err)
		}
	}
	return exitOK
}

// printPolicy prints the policy that governed the transaction: its name
// and, from the config leaf the leaf names (read and proven from the log
// with --log), the rules in force.
func printPolicy(ctx context.Context, stdout, stderr io.Writer, src verify.LogSource, v note.Verifier, res *verify.Result) {
	tx := res.Transaction
	if tx.ConfigLeaf == nil {
		fmt.Fprintf(stdout, "policy: %s (the leaf names no config leaf: recorded before custody logged its rules)\n", orNone(tx.Policy))
		return
	}
	cl := res.Rules // carried by the receipt, proven under its checkpoint
	if cl == nil && src != nil {
		var err error
		if cl, err = verify.ReadConfigLeaf(ctx, src, v, *tx.ConfigLeaf); err != nil {
			fmt.Fprintf(stderr, "custody verify: reading config leaf %d: %v\n", *tx.ConfigLeaf, err)
		}
	}
	if cl == nil {
		fmt.Fprintf(stdout, "policy: %s, under config leaf %d (pass --log to read and prove its rules)\n", orNone(tx.Policy), *tx.ConfigLeaf)
		return
	}
	rules, ok := cl.Policy(tx.Policy)
	if !ok {
		rules = []byte("(not among the config's policies: the built-in default)")
	}
	fmt.Fprintf(stdout, "policy: %s, under config leaf %d (%s at %s, custody %s, config %s): %s\n",
		orNone(tx.Policy), *tx.ConfigLeaf, cl.Reason, cl.Time, cl.Version, cl.Digest[:min(16, len(cl.Digest))], rules)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// parseReceiptOrBundle reads either a receipt or an offline bundle (a
// JSON object with "format").
func parseReceiptOrBundle(raw []byte) (*verify.Receipt, error) {
	if bytes.Contains(raw, []byte(`"format"`)) {
		return verify.ParseBundle(raw)
	}
	return verify.ParseReceipt(raw)
}

// exportBundle writes r, verified, as an offline bundle: with its own
// checkpoint and proof if it has them, else proven under the log's
// current checkpoint.
func exportBundle(ctx context.Context, src verify.LogSource, v note.Verifier, opts verify.Options, r *verify.Receipt, path string, stdout io.Writer) error {
	if r.Checkpoint == "" {
		var err error
		if r, err = verify.Prove(ctx, src, v, r); err != nil {
			return fmt.Errorf("exporting the bundle: %w", err)
		}
		if _, err := verify.VerifyReceiptWith(ctx, nil, v, opts, r, nil, nil); err != nil {
			return fmt.Errorf("exporting the bundle: %w", err)
		}
	}
	if len(r.Rules) == 0 && src != nil {
		var err error
		if r, err = verify.ProveRules(ctx, src, v, r); err != nil {
			return fmt.Errorf("exporting the bundle: %w", err)
		}
		if _, err := verify.VerifyReceiptWith(ctx, nil, v, opts, r, nil, nil); err != nil {
			return fmt.Errorf("exporting the bundle: %w", err)
		}
	}
	b, err := verify.NewBundle(r)
	if err != nil {
		return fmt.Errorf("exporting the bundle: %w", err)
	}
	data, err := b.Marshal()
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// witnessFlag holds --witness-key and --witness-quorum, which verify and
// audit share.
type witnessFlag struct {
	keys   stringList
	quorum *int
}

func witnessFlags(fs *flag.FlagSet) *witnessFlag {
	w := &witnessFlag{}
	fs.Var(&w.keys, "witness-key", "a witness's cosignature verifier key `VKEY` (C2SP vkey, as litewitness prints it), or a file holding it; repeatable")
	w.quorum = fs.Int("witness-quorum", 0, "`N` of the --witness-key witnesses must have cosigned the checkpoint (default: all of them)")
	return w
}

func (w *witnessFlag) policy() (verify.WitnessPolicy, error) {
	var p verify.WitnessPolicy
	for _, k := range w.keys {
		v, err := verify.ParseWitnessKey(k)
		if err != nil {
			return p, err
		}
		p.Keys = append(p.Keys, v)
	}
	p.Quorum = *w.quorum
	switch {
	case p.Quorum < 0 || p.Quorum > len(p.Keys):
		return p, fmt.Errorf("--witness-quorum %d: want 1 to the number of --witness-key (%d)", p.Quorum, len(p.Keys))
	case p.Quorum == 0:
		p.Quorum = len(p.Keys)
	}
	return p, nil
}

// pollInterval is how often --wait reads the log's checkpoint again; a
// checkpoint is published at most every 100ms.
const pollInterval = 50 * time.Millisecond

// verifierFor returns the pinned key, or else the key the log publishes,
// with a warning: a key fetched from the log proves only that the log is
// self-consistent.
func verifierFor(ctx context.Context, key string, src verify.LogSource, stderr io.Writer) (note.Verifier, error) {
	if key != "" {
		return verify.ParseVerifier(key)
	}
	if src == nil {
		return nil, errors.New("no key: pass --key (the log's verifier key, pinned out of band) or --log")
	}
	k, err := src.ReadVerifierKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("no --key, and the log publishes none: %w", err)
	}
	fmt.Fprintf(stderr, "warning: no --key given; trusting the key the log publishes (%s), which proves only that the log agrees with itself.\n"+
		"Pin it: fetch GET /log/verifier once from a source you trust (or `cat data_dir/ledger/log/verifier` on the gateway), keep it, and pass --key KEY-OR-FILE.\n", k)
	return verify.ParseVerifier(k)
}

// readArg reads a file, or at most 1 MiB of stdin for "-".
func readArg(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	}
	return os.ReadFile(name)
}
