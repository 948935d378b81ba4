//go:build !linux

package ledger

// awaitPublisher does not wait on systems without open-file-description
// locks: a checkpoint publication of tessera's in flight at Close may
// finish after it (see publisher_linux.go).
func awaitPublisher(string) error { return nil }
