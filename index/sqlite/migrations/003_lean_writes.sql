-- Version 3: a leaner write path (issue 17). Every record updated every
-- secondary index of records; the one on provider served only searches
-- by provider, which a deployment has a handful of: such a search walks
-- records_time newest first and meets its rows at once. Searches by
-- verdict keep their index (rejections are rare; a walk would be long).
-- postgres keeps both: its writes are not on this machine's cores.
DROP INDEX records_provider;
