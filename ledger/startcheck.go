package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
)

// ErrTampered is the cause of Open's failure when the stored log is not
// the one the ledger signed: its leaves, tiles, tree state, checkpoint or
// journal disagree. Tessera would extend whatever tree is on disk and sign
// it, so Open refuses before anything is signed.
var ErrTampered = errors.New("the stored log is not the one the ledger signed")

// TamperedError lists what the start check found (see checkStored).
type TamperedError struct {
	// LogDir is the log's directory: `custody audit --log LogDir` shows
	// what its files hold.
	LogDir   string
	Findings []string
}

func (e *TamperedError) Error() string {
	return fmt.Sprintf("the log in %s is not the one this ledger signed, so it signs nothing over it:\n  - %s",
		e.LogDir, strings.Join(e.Findings, "\n  - "))
}

func (e *TamperedError) Unwrap() error { return ErrTampered }

// treeStatePath is where tessera's POSIX driver keeps the size and root of
// the tree it has integrated (and extends on its next batch), published or
// not, inside the log's directory.
var treeStatePath = filepath.Join(".state", "treeState")

// maxListed bounds the indices one finding lists.
const maxListed = 10

// checkStored checks the stored log in logPath against what the ledger
// signed, before tessera opens it (tessera extends the tree on disk and
// signs whatever it finds): the checkpoint's signature with v; every leaf
// of the tree tessera would extend (its .state/treeState size) hashed into
// its root and checked against every tile (verify.CheckTree, the audit's
// code); the first leaves, as many as the checkpoint signed, against the
// checkpoint's root; and every journal record the tree holds against the
// stored leaf at its index. recs are the journal's records, in order.
// Any difference is a *TamperedError; other errors (I/O) are returned as
// they are.
func checkStored(ctx context.Context, logPath string, v note.Verifier, recs []journalRecord) error {
	var findings []string
	add := func(format string, args ...any) { findings = append(findings, fmt.Sprintf(format, args...)) }

	// The last signed checkpoint.
	signed := false
	var signedSize uint64
	var signedRoot []byte
	cpRaw, err := os.ReadFile(filepath.Join(logPath, layout.CheckpointPath))
	hasCP := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading the checkpoint: %w", err)
	default:
		cp, _, _, err := log.ParseCheckpoint(cpRaw, v.Name(), v)
		if err != nil {
			add("the checkpoint is not signed by the log's key %s (%v): it was forged, or the signing key changed since it was signed", verify.KeyID(v), err)
		} else {
			signed, signedSize, signedRoot = true, cp.Size, cp.Hash
		}
	}

	// The tree tessera would extend.
	size, stateRoot, hasState, err := readTreeState(filepath.Join(logPath, treeStatePath))
	if err != nil {
		return err
	}
	switch {
	case !hasState && hasCP:
		add("the checkpoint exists but the tree's state (%s) does not: the tree would start again from nothing", treeStatePath)
	case hasState && !hasCP && size > 0:
		add("the tree holds %d leaves but there is no checkpoint", size)
	}
	if signed && size < signedSize {
		add("the tree holds %d leaves, fewer than the %d the checkpoint signed", size, signedSize)
	}

	if size > 0 {
		src, err := verify.OpenSource(logPath)
		if err != nil {
			return err
		}
		at := min(signedSize, size)
		root, rootAt, err := verify.CheckTree(ctx, src, size, at)
		switch {
		case errors.Is(err, verify.ErrInvalid) || errors.Is(err, fs.ErrNotExist):
			add("the stored tree does not hold together: %v", err)
		case err != nil:
			return fmt.Errorf("checking the stored tree: %w", err)
		default:
			rewritten := signed && size >= signedSize && !bytes.Equal(rootAt, signedRoot)
			if rewritten {
				add("the first %d leaves hash to %x, the signed checkpoint says %x", signedSize, rootAt, signedRoot)
			}
			// The tree's state is tessera's copy of the root: worth saying
			// apart when it is not just the signed root again.
			if !bytes.Equal(root, stateRoot) && !(rewritten && size == signedSize && bytes.Equal(stateRoot, signedRoot)) {
				add("the %d leaves hash to %x, the tree's state says %x", size, root, stateRoot)
			}
			if f, err := checkJournalAgainstTree(ctx, src, size, recs); err != nil {
				return err
			} else if f != "" {
				add("%s", f)
			}
		}
	}
	if len(findings) > 0 {
		return &TamperedError{LogDir: logPath, Findings: findings}
	}
	return nil
}

// checkJournalAgainstTree compares each journal record below size with
// the stored leaf at its index, bundle by bundle, and describes the
// records that differ ("" if none).
func checkJournalAgainstTree(ctx context.Context, src verify.LogSource, size uint64, recs []journalRecord) (string, error) {
	var differ []uint64
	n := 0
	for i := 0; i < len(recs) && recs[i].index < size; {
		bi := recs[i].index / layout.EntryBundleWidth
		raw, err := src.ReadEntryBundle(ctx, bi, layout.PartialTileSize(0, bi, size))
		if err != nil {
			return "", fmt.Errorf("reading entry bundle %d: %w", bi, err)
		}
		var eb api.EntryBundle
		if err := eb.UnmarshalText(raw); err != nil {
			return "", fmt.Errorf("reading entry bundle %d: %w", bi, err)
		}
		for ; i < len(recs) && recs[i].index < size && recs[i].index/layout.EntryBundleWidth == bi; i++ {
			k := recs[i].index % layout.EntryBundleWidth
			if k >= uint64(len(eb.Entries)) || !bytes.Equal(eb.Entries[k], recs[i].leaf) {
				if n++; len(differ) < maxListed {
					differ = append(differ, recs[i].index)
				}
			}
		}
	}
	if n == 0 {
		return "", nil
	}
	list := make([]string, len(differ))
	for i, x := range differ {
		list[i] = fmt.Sprint(x)
	}
	more := ""
	if n > len(differ) {
		more = ", ..."
	}
	if n == 1 {
		return fmt.Sprintf("1 journal record differs from the stored leaf at its index (%s)", list[0]), nil
	}
	return fmt.Sprintf("%d journal records differ from the stored leaves at their indices (%s%s)", n, strings.Join(list, ", "), more), nil
}

// readTreeState reads tessera's tree state: the size and root of the tree
// it has integrated. ok is false when there is none yet (a new log).
func readTreeState(p string) (size uint64, root []byte, ok bool, err error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, rfc6962.DefaultHasher.EmptyRoot(), false, nil
	}
	if err != nil {
		return 0, nil, false, fmt.Errorf("reading the tree's state: %w", err)
	}
	var ts struct {
		Size uint64 `json:"size"`
		Root []byte `json:"root"`
	}
	if err := json.Unmarshal(b, &ts); err != nil {
		return 0, nil, false, &TamperedError{LogDir: filepath.Dir(filepath.Dir(p)), Findings: []string{fmt.Sprintf("the tree's state %s does not parse: %v", p, err)}}
	}
	return ts.Size, ts.Root, true, nil
}
