-- Join inference no longer pairs a column of small integers with a serial key
-- it shares no name word with (a review's rating 1..5 was joined to
-- warehouse_id 1..6). Every catalogued schema is marked for its join edges to
-- be recomputed by the next `atrium catalog sync` (or `serve`'s watcher).
INSERT INTO atrium.dirty_schemas (schema_name)
SELECT DISTINCT schema_name FROM atrium.tables
ON CONFLICT DO NOTHING;
