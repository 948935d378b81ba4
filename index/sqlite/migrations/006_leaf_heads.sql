-- Version 6: leaner writes, a third time (issue 17). Two more b-trees
-- every record's write touched served a read made once per start or
-- never on the write path:
--
-- records_shard_leaf answered MaxLeafIndex, read once as the recorder
-- starts. leaf_heads keeps each shard's greatest leaf index instead,
-- one row per shard that Put raises once per batch.
CREATE TABLE leaf_heads (
	shard      TEXT PRIMARY KEY,
	leaf_index INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO leaf_heads (shard, leaf_index)
	SELECT shard, MAX(leaf_index) FROM records WHERE leaf_index >= 0 GROUP BY shard;
DROP INDEX records_shard_leaf;
-- record_terms_request found the terms of a record Put replaces, which
-- nearly no Put does: a request's record is written once, and again only
-- when a later attempt's leaf replaces it. Put now inserts, and looks up
-- the stored record (whose terms it derives from its data) only for an
-- id that is already there. Searches join record_terms on its whole
-- primary key (term, time_ns, request_id).
DROP INDEX record_terms_request;
