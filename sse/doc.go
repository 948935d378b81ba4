// Package sse is custody's one reading and one writing of server-sent
// events (the WHATWG HTML specification, "Server-sent events").
//
// The Reader parses an upstream's stream exactly as the specification's
// algorithm does, which is how the clients custody protects read it (the
// OpenAI and Anthropic SDKs, EventSource): lines end at CRLF, a lone LF
// or a lone CR; a leading UTF-8 byte order mark is dropped; data lines are
// joined with "\n"; comments, id, retry and unknown fields are read and
// set aside. Reading the wire any other way lets an upstream hide bytes
// from custody's checks that a client then acts on.
//
// The writer functions are the one canonical framing custody relays with:
// only events custody parsed, re-serialised as "event: <name>\n" (where
// the dialect names its events) and one "data: " line per data line, each
// ended by LF, the event by a blank line; custody's own comments
// (": custody-receipt", ": custody-verdict") are the only comments a
// client ever receives.
package sse
