-- Version 1 of the index schema. postgres/migrations/001_init.sql is the
-- same logical schema; keep the two in step.

-- One row per transaction. data is the transaction's ledger JSON (no
-- prompt or response text exists in it); the other columns are copies of
-- the fields searched on. Times are Unix nanoseconds.
CREATE TABLE records (
	request_id      TEXT PRIMARY KEY,
	tenant          TEXT NOT NULL,
	time_ns         INTEGER NOT NULL,
	requested_model TEXT NOT NULL,
	response_model  TEXT NOT NULL,
	provider        TEXT NOT NULL,
	verdict         TEXT NOT NULL,
	code            TEXT NOT NULL,
	shard           TEXT NOT NULL,
	leaf_index      INTEGER NOT NULL,
	data            TEXT NOT NULL
);
CREATE INDEX records_time ON records (time_ns, request_id);
CREATE INDEX records_tenant ON records (tenant, time_ns, request_id);
CREATE INDEX records_provider ON records (provider, time_ns);
CREATE INDEX records_verdict ON records (verdict, time_ns);
CREATE INDEX records_shard_leaf ON records (shard, leaf_index);

-- The terms a record is found by (index.Terms: its codes and models),
-- with its time copied so that a search by code or model reads the
-- primary key in newest-first order. Put keeps it in step with records
-- (no foreign key: it would cost every insert a lookup that Put's own
-- logic makes redundant).
CREATE TABLE record_terms (
	term       TEXT NOT NULL,
	request_id TEXT NOT NULL,
	time_ns    INTEGER NOT NULL,
	PRIMARY KEY (term, time_ns, request_id)
);
CREATE INDEX record_terms_request ON record_terms (request_id);

CREATE TABLE events (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	time_ns    INTEGER NOT NULL,
	type       TEXT NOT NULL,
	request_id TEXT NOT NULL,
	tenant     TEXT NOT NULL,
	model      TEXT NOT NULL,
	provider   TEXT NOT NULL,
	code       TEXT NOT NULL,
	detail     TEXT NOT NULL
);
CREATE INDEX events_time ON events (time_ns, id);
CREATE INDEX events_type ON events (type, time_ns, id);

-- Response claims of the replay check: key is a response id or body
-- digest, untrusted bytes kept exact; request_id the first request it was
-- delivered to.
CREATE TABLE claims (
	claim_key  BLOB PRIMARY KEY,
	request_id TEXT NOT NULL,
	expires_ns INTEGER NOT NULL
);
CREATE INDEX claims_expires ON claims (expires_ns);

CREATE TABLE shards (
	origin       TEXT PRIMARY KEY,
	url          TEXT NOT NULL,
	verifier_key TEXT NOT NULL
);
