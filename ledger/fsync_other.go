//go:build !linux

package ledger

import "os"

func fdatasync(f *os.File) error { return f.Sync() }

// dataSyncer makes a file's data durable: f.Sync on systems without
// fdatasync(2) and Linux AIO.
type dataSyncer struct{}

func newDataSyncer() *dataSyncer { return &dataSyncer{} }

func newAIOSyncer() *dataSyncer { return &dataSyncer{} }

func (*dataSyncer) async() bool { return false }

func (*dataSyncer) sync(f *os.File) error { return fdatasync(f) }

func (*dataSyncer) close() {}
