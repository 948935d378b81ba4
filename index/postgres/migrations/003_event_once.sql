-- Version 3: a transaction's event of a type is on the timeline once. The
-- recorder derives events again from the log when the index missed them
-- (an outage, a crash between the leaf and its events); re-adding one is
-- then a no-op. Events of no transaction (canary runs) are never merged.
DELETE FROM events WHERE request_id <> '' AND id NOT IN
	(SELECT MIN(id) FROM events WHERE request_id <> '' GROUP BY request_id, type);
CREATE UNIQUE INDEX events_once ON events (request_id, type) WHERE request_id <> '';
