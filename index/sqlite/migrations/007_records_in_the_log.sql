-- Version 7: the log holds the record (issue 17). A record whose leaf is
-- in the log the index was opened with is stored by position: data is ''
-- and the transaction is read from its leaf (shard, leaf_index). data
-- held two thirds of the index's bytes and half of Put's CPU, a copy of
-- what the log has already made durable. Rows written before keep their
-- data, as do records without a leaf in the local log.
--
-- The three fields the overview counts by were read from data; they are
-- columns now, filled in here for the rows there are.
ALTER TABLE records ADD COLUMN route INTEGER NOT NULL DEFAULT -1;
ALTER TABLE records ADD COLUMN fallback INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN canary INTEGER NOT NULL DEFAULT 0;
UPDATE records SET
	route = COALESCE(json_extract(data, '$.route'), -1),
	fallback = (COALESCE(json_array_length(data, '$.fallback_chain'), 0) > 1 AND json_extract(data, '$.status') = 200),
	canary = (COALESCE(json_extract(data, '$.canary'), 0) = 1);
