-- Version 5: leaner writes again (issue 17). A record's write touched a
-- b-tree per secondary index, and a term's three: its table, the
-- primary key's automatic index and the index by request.
--
-- record_terms becomes WITHOUT ROWID: its primary key is the table, one
-- b-tree fewer per term.
CREATE TABLE record_terms_v5 (
	term       TEXT NOT NULL,
	request_id TEXT NOT NULL,
	time_ns    INTEGER NOT NULL,
	PRIMARY KEY (term, time_ns, request_id)
) WITHOUT ROWID;
INSERT INTO record_terms_v5 (term, request_id, time_ns) SELECT term, request_id, time_ns FROM record_terms;
DROP TABLE record_terms;
ALTER TABLE record_terms_v5 RENAME TO record_terms;
CREATE INDEX record_terms_request ON record_terms (request_id);
-- Searches by verdict look for the rare ones (flagged, rejected); a
-- search for verified records walks records_time and meets them at once.
-- The index holds only the others, so a verified record, nearly every
-- one, does not touch it. sqlq adds "verdict <> 'verified'" to such a
-- search, which is what lets the planner use a partial index.
DROP INDEX records_verdict;
CREATE INDEX records_unverified ON records (verdict, time_ns) WHERE verdict <> 'verified';
