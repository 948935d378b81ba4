//go:build ignore

// gen_tables.go writes gc_table.go and class_table.go, the Unicode 16.0
// tables of package tokenize, from the UCD files in testdata/ucd
// (package ucdgen). Run it with go generate ./tokenize.
package main

import (
	"log"
	"os"

	"github.com/custody-gateway/custody/tokenize/internal/ucdgen"
)

func main() {
	gc, class, err := ucdgen.Tables("testdata/ucd")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("gc_table.go", gc, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("class_table.go", class, 0o644); err != nil {
		log.Fatal(err)
	}
}
