package index

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		want    []int
		wantErr bool
	}{
		{name: "ordered", files: []string{"001_init.sql", "002_more.sql", "README"}, want: []int{1, 2}},
		{name: "empty", files: nil, want: nil},
		{name: "gap", files: []string{"001_a.sql", "003_c.sql"}, wantErr: true},
		{name: "repeat", files: []string{"001_a.sql", "001_b.sql"}, wantErr: true},
		{name: "not numbered", files: []string{"init.sql"}, wantErr: true},
		{name: "zero", files: []string{"000_a.sql"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"m/.keep": {}}
			for _, f := range tt.files {
				fsys["m/"+f] = &fstest.MapFile{Data: []byte("-- " + f)}
			}
			ms, err := LoadMigrations(fsys, "m")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if len(ms) != len(tt.want) {
				t.Fatalf("got %d migrations, want %d", len(ms), len(tt.want))
			}
			for i, m := range ms {
				if m.Version != tt.want[i] || m.SQL != "-- "+m.Name {
					t.Errorf("migration %d = %+v", i, m)
				}
			}
		})
	}
}
