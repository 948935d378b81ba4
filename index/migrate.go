package index

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one numbered step of a backend's schema. Both backends
// number the same logical steps alike: version N means the same tables,
// columns and indexes on sqlite and on postgres.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads the files NNN_name.sql of dir in fsys, in version
// order. Versions must run 1, 2, 3... without gaps or repeats, so that a
// version number stored in schema_version means one thing only.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("index: reading migrations: %w", err)
	}
	var ms []Migration
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("index: migration %q: name is not NNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("index: reading migration %q: %w", name, err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	// fs.ReadDir sorts by name; zero-padded numbers sort by version.
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("index: migration %q: want version %d", m.Name, i+1)
		}
	}
	return ms, nil
}
