//go:build !linux

package main

import "os"

// datasync is fsync where fdatasync(2) is not to be had.
func datasync(f *os.File) error { return f.Sync() }
