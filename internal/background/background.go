// Package background is how custody's background goroutines (the index
// writer, the log's feeder, the journal's fill) give the processor back
// to the requests between pieces of their work.
package background

import "time"

// Pause is how long Yield has the kernel wait before the caller may go
// on when nothing else wants the processor: long enough that the runtime
// has looked for network events before the caller is runnable again,
// short enough not to slow background work on an idle process.
const Pause = 20 * time.Microsecond
