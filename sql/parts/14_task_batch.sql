-- worklist: the task verbs of 0.4 beside the history: hand-over, edits, the
-- operator's view of every claim, and claims and completions of many tasks
-- at once (doc/reference.md, section 4)

-- @since 0.4
CREATE FUNCTION worklist.hand_over(id text, actor text, to_actor text, to_roles text[])
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_hand_over'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.hand_over(text, text, text, text[]) IS
	'The holder gives its claim to to_actor; refusals WL001, WL004, WL006, then for the receiver WL002, WL003';

CREATE FUNCTION worklist.update_task(id text, priority int DEFAULT NULL,
		due_at timestamptz DEFAULT NULL)
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_update_task'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.update_task(text, int, timestamptz) IS
	'Change a pending task''s priority and/or deadline (NULL leaves a field, due_at infinity removes the deadline)';

CREATE FUNCTION worklist.claims(lim int DEFAULT 100)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_claims'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.claims(int) IS
	'Every pending task somebody holds, oldest claim first, then id; not for a member binding';

CREATE FUNCTION worklist.claim_many(actor text, roles text[], n int,
		skip text[] DEFAULT '{}')
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_claim_many'
	LANGUAGE C VOLATILE ROWS 10;
COMMENT ON FUNCTION worklist.claim_many(text, text[], int, text[]) IS
	'Claim up to n tasks in claim_next order in one statement; none when there are none';

CREATE FUNCTION worklist.complete_many(actor text, ids text[], decisions jsonb[])
	RETURNS TABLE (id text, settled boolean)
	AS 'MODULE_PATHNAME', 'wl_complete_many'
	LANGUAGE C VOLATILE ROWS 10;
COMMENT ON FUNCTION worklist.complete_many(text, text[], jsonb[]) IS
	'complete for each pair, all or nothing; one row per pair, in the arrays'' order';
-- @end
