-- Version 2: canary events name their route apart from the provider.
ALTER TABLE events ADD COLUMN route TEXT NOT NULL DEFAULT '';
