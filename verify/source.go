package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/transparency-dev/tessera/api/layout"
)

// Names of the log's public files beside the C2SP tlog-tiles tree (its
// checkpoint and tiles), and of the tree's directory inside a ledger
// directory. The ledger writes them; a source reads them.
const (
	// LogDir is the tree's directory inside a ledger's directory (what
	// `custody serve` serves under /log/).
	LogDir = "log"
	// VerifierFile is the log's verifier key, beside the checkpoint: a
	// convenience, since a verifier should pin the key out of band.
	VerifierFile = "verifier"
)

// LogSource reads a log's public files: a directory or an http(s) URL.
// Verification and audit need nothing else. A missing file is an error
// wrapping fs.ErrNotExist.
type LogSource interface {
	ReadCheckpoint(ctx context.Context) ([]byte, error)
	// ReadTile reads the tile at (level, index) of width p (0: full). A
	// missing partial tile falls back to the full one, which the log may
	// have written since and garbage-collected the partial.
	ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error)
	// ReadEntryBundle is ReadTile for entry bundles.
	ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error)
	// ReadVerifierKey reads the verifier key the log publishes beside its
	// checkpoint. It is a convenience: a verifier should pin the key.
	ReadVerifierKey(ctx context.Context) (string, error)
}

// maxResource bounds what a source will read for one file: a full tile is
// 8 KiB, an entry bundle at most 256 leaves of MaxLeafSize.
const maxResource = 256*(MaxLeafSize+2) + 1

// OpenSource returns the LogSource for loc: an http:// or https:// URL
// of the directory holding "checkpoint" (http://host:8080/log, or just
// http://host:8080 for a custody gateway), or a directory (a ledger's Dir
// or its log directory).
func OpenSource(loc string) (LogSource, error) {
	if strings.HasPrefix(loc, "http://") || strings.HasPrefix(loc, "https://") {
		u, err := url.Parse(strings.TrimSuffix(loc, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("log URL: %w", err)
		}
		if u.Path == "/" {
			u.Path = "/log/" // the gateway's own address: its log is under /log/
		}
		return &source{read: httpReader(http.DefaultClient, u)}, nil
	}
	dir := loc
	if _, err := os.Stat(filepath.Join(dir, layout.CheckpointPath)); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, LogDir, layout.CheckpointPath)); err == nil {
			dir = filepath.Join(dir, LogDir)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	return &source{read: func(_ context.Context, p string) ([]byte, error) {
		f, err := root.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Size() < maxResource {
			// One exact allocation: the audit reads every bundle.
			b := make([]byte, fi.Size())
			if _, err := io.ReadFull(f, b); err != nil {
				return nil, err
			}
			return b, nil
		}
		return readBounded(f)
	}}, nil
}

func readBounded(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxResource))
	if err != nil {
		return nil, err
	}
	if len(b) >= maxResource {
		return nil, errors.New("resource too large")
	}
	return b, nil
}

func httpReader(c *http.Client, base *url.URL) func(context.Context, string) ([]byte, error) {
	return func(ctx context.Context, p string) ([]byte, error) {
		u := base.JoinPath(p)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return readBounded(resp.Body)
		case http.StatusNotFound:
			return nil, fmt.Errorf("GET %s: %w", u, fs.ErrNotExist)
		default:
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
	}
}

// source implements LogSource on a function that reads one path.
type source struct {
	read func(ctx context.Context, path string) ([]byte, error)
}

func (s *source) ReadCheckpoint(ctx context.Context) ([]byte, error) {
	return s.read(ctx, layout.CheckpointPath)
}

func (s *source) ReadTile(ctx context.Context, level, index uint64, p uint8) ([]byte, error) {
	return s.partialOrFull(ctx, p, func(p uint8) string { return layout.TilePath(level, index, p) })
}

func (s *source) ReadEntryBundle(ctx context.Context, index uint64, p uint8) ([]byte, error) {
	return s.partialOrFull(ctx, p, func(p uint8) string { return layout.EntriesPath(index, p) })
}

func (s *source) ReadVerifierKey(ctx context.Context) (string, error) {
	b, err := s.read(ctx, VerifierFile)
	return strings.TrimSpace(string(b)), err
}

func (s *source) partialOrFull(ctx context.Context, p uint8, path func(uint8) string) ([]byte, error) {
	b, err := s.read(ctx, path(p))
	if p != 0 && errors.Is(err, fs.ErrNotExist) {
		full, ferr := s.read(ctx, path(0))
		if ferr != nil {
			return nil, err
		}
		// A full tile or bundle holds the partial one as a prefix; callers
		// check the count they get against the count they expect.
		return full, nil
	}
	return b, err
}
