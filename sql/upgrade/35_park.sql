-- write_checkpoint gains metadata and parent_checkpoint_id, and
-- list_durable_runs gains concluded (sql/parts/35_park.sql creates them
-- again).
DROP FUNCTION worklist.write_checkpoint(text, text, text, text, jsonb, bigint, text,
	timestamptz, timestamptz, text, timestamptz, timestamptz, timestamptz);
DROP FUNCTION worklist.list_durable_runs(text, text, text, worklist.park_state[],
	boolean, integer, text, timestamptz);
