package check

import "github.com/custody-gateway/custody"

// MustCount reports whether a prompt of bodyLen bytes must be counted
// before it is forwarded. Every token of a byte-level BPE covers at least
// one byte, and a request body holds at least as many bytes as its
// prompt's tokens plus framing, so a body no longer than capacity cannot
// exceed it: it is forwarded at once and counted concurrently.
func MustCount(bodyLen, capacity int) bool { return bodyLen > capacity }

// Capacity fails when the locally counted prompt exceeds the model's
// verified capacity: such a prompt is never forwarded, because a serving
// stage may truncate it or replace it with a placeholder and still
// answer 200.
func Capacity(local, capacity int) error {
	if local > capacity {
		return custody.Errorf(custody.CodeContextLengthExceeded,
			"this model's verified capacity is %d tokens; the prompt has %d", capacity, local)
	}
	return nil
}
