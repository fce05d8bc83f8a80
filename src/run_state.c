/*-------------------------------------------------------------------------
 *
 * run_state.c
 *	  What an agent framework keeps of a run beside its checkpoints
 *	  (doc/reference.md, section 6, "Persisting an agent framework's
 *	  state"): the newest checkpoints, pending writes, channel values.
 *
 * Writes take the locks write_checkpoint takes (src/run.c), in the same
 * order: a fenced write locks the run's lease FOR SHARE and its row FOR
 * NO KEY UPDATE in one statement and compares the fence with the lease's,
 * so a claim (which updates the lease) and a fenced write of one run are
 * serialised and the later one sees the other; an unfenced write locks the
 * run's row alone.  A run that has no row (neither checkpoint nor lease)
 * is not given one: its writes wait for their checkpoint.  The run row
 * says whether the run is concluded, read under that lock, so a write and
 * the conclusion of its run are serialised too.
 *
 * A pending write of an existing (task id, index) keeps the first value
 * for an index >= 0 and replaces it for a negative one: INSERT ... ON
 * CONFLICT, whose WHERE lets only negative indexes update, so of two
 * writes racing for one key the second waits for the first and then sees
 * its row.  Channel values are immutable: ON CONFLICT DO NOTHING.
 *
 * delete_run removes a run's data and keeps what stops its fences from
 * rewinding: its lease row, given a fence nobody holds.  It locks as
 * conclude_run does: the tasks of the current park first (a settlement
 * holds its task and then locks the run), then the lease, then the run's
 * row, then the rows that go.
 *
 * newest_checkpoints reads one index per scope (project, session, run)
 * from just after the starting checkpoint's key, so a page costs the rows
 * it returns plus those the metadata filter rejects on the way.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "run.h"
#include "settle.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(wl_latest_checkpoint);
PG_FUNCTION_INFO_V1(wl_newest_checkpoints);
PG_FUNCTION_INFO_V1(wl_put_writes);
PG_FUNCTION_INFO_V1(wl_pending_writes);
PG_FUNCTION_INFO_V1(wl_put_values);
PG_FUNCTION_INFO_V1(wl_run_values);
PG_FUNCTION_INFO_V1(wl_delete_run);

/* Longest task_path accepted, in characters. */
#define TASK_PATH_MAX 1024

#define ADDRESS_TYPES TEXTOID, TEXTOID, TEXTOID, TEXTOID

/* ----------
 * Locks and refusals of a write
 * ----------
 */

/*
 * Before a write of run addr (values: its address as $1..$4): lock the
 * run's lease FOR SHARE when the write is fenced, then its row FOR NO KEY
 * UPDATE; refuse a concluded run (WL008), then a fence that is not the
 * run's current one (WL007).  SPI must be begun.
 */
static void
lock_for_write(const RunAddress *addr, Datum *values, bool fenced, int64 fence)
{
	/* lease, then run row, as write_checkpoint locks them */
	static WlStmt lock_fenced_stmt WL_KEPT = {
		"SELECT l.fence, r.concluded_at FROM worklist.run_claim l, worklist.run r"
		" WHERE" RUN_KEY("l") " AND" RUN_KEY("r")
		" FOR SHARE OF l FOR NO KEY UPDATE OF r",
		4, {ADDRESS_TYPES}, .name = "run_state.write.lock_fenced"
	};
	/* no such pair: the lease alone (a run with a lease has a row) */
	static WlStmt lock_lease_stmt WL_KEPT = {
		"SELECT l.fence FROM worklist.run_claim l WHERE" RUN_KEY("l")
		" FOR SHARE",
		4, {ADDRESS_TYPES}, .name = "run_state.write.lock_lease"
	};
	bool		isnull;
	Datum		d;

	if (!fenced)
	{
		(void) wl_run_refuse_concluded(values);
		return;
	}

	if (wl_exec(&lock_fenced_stmt, values, NULL, false, 0) > 0)
	{
		int64		current;

		d = wl_result_datum(0, 2, &isnull);
		if (!isnull)
			wl_error_run_concluded(text_to_cstring(addr->run), DatumGetTimestampTz(d));
		current = DatumGetInt64(wl_result_datum(0, 1, &isnull));
		if (current == fence)
			return;
		wl_count(WL_COUNT_STALE_FENCES);
		wl_error_stale_fence(text_to_cstring(addr->run), fence, true, current);
	}
	if (wl_exec(&lock_lease_stmt, values, NULL, false, 0) > 0)
	{
		int64		current = DatumGetInt64(wl_result_datum(0, 1, &isnull));

		if (current == fence)
			return;
		wl_count(WL_COUNT_STALE_FENCES);
		wl_error_stale_fence(text_to_cstring(addr->run), fence, true, current);
	}
	wl_count(WL_COUNT_STALE_FENCES);
	wl_error_stale_fence(text_to_cstring(addr->run), fence, false, 0);
}

/* Refuse (22023) arrays of different lengths. */
static void
check_lengths(int n, int m, const char *first, const char *second)
{
	if (n != m)
		wl_error_bad_arg(second, psprintf("must have as many elements as \"%s\" (%d, not %d)",
										  first, n, m));
}

/* A text[] of identifiers, maybe empty, as its elements. */
#define ident_elements(fcinfo, argno, argname, elems) \
	wl_arg_ident_elements((fcinfo), (argno), (argname), true, (elems))

/* A jsonb[] whose every element is a document of bounded size. */
static int
document_elements(FunctionCallInfo fcinfo, int argno, const char *argname, Datum **elems)
{
	int			n = wl_arg_elements(fcinfo, argno, argname, JSONBOID, elems);

	for (int i = 0; i < n; i++)
		wl_check_document((*elems)[i], argname);
	return n;
}

/* ----------
 * Checkpoints, newest first
 * ----------
 */

/* worklist.latest_checkpoint(project, session, run) RETURNS checkpoint */
Datum
wl_latest_checkpoint(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " CHECKPOINT_ROW " WHERE" RUN_KEY("c")
		" ORDER BY c.created_at DESC, c.checkpoint_id DESC LIMIT 1",
		4, {ADDRESS_TYPES}, .name = "run_state.latest_checkpoint"
	};
	RunAddress addr;
	WlSpi		spi;
	Datum		values[4];
	Datum		result = (Datum) 0;
	bool		isnull = true;

	wl_run_address(fcinfo, &addr);
	wl_run_address_values(&addr, values);

	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, true, 0) > 0)
		result = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/*
 * The page statements of newest_checkpoints.  Parameters: $1 tenant, $2
 * project, $3 session, $4 run, $5 the metadata filter (NULL: none), $6..$9
 * the key to start after (created_at, checkpoint_id, session, run).  Each
 * scope's order is its index's, read backwards (equalities make the
 * order's other columns redundant); the keyset condition compares the
 * whole key, of which the index serves the columns it has in that order.
 */
#define NEWEST_SELECT \
	"SELECT " CHECKPOINT_ROW \
	" WHERE c.tenant OPERATOR(pg_catalog.=) $1" \
	"   AND c.project OPERATOR(pg_catalog.=) $2" \
	"   AND ($5::pg_catalog.jsonb IS NULL" \
	"        OR COALESCE(c.metadata, '{}'::pg_catalog.jsonb)" \
	"           OPERATOR(pg_catalog.@>) $5::pg_catalog.jsonb)"
#define NEWEST_SCOPE_P ""
#define NEWEST_SCOPE_PS " AND c.session OPERATOR(pg_catalog.=) $3"
#define NEWEST_SCOPE_PSR \
	" AND c.session OPERATOR(pg_catalog.=) $3 AND c.run OPERATOR(pg_catalog.=) $4"
#define NEWEST_AFTER \
	" AND ROW(c.created_at, c.checkpoint_id, c.session, c.run)" \
	"     OPERATOR(pg_catalog.<) ROW($6, $7, $8, $9)"
#define NEWEST_ORDER \
	" ORDER BY c.created_at DESC, c.checkpoint_id DESC, c.session DESC, c.run DESC"
#define NEWEST_TYPES \
	9, {ADDRESS_TYPES, JSONBOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID}

/*
 * Each statement comes with four LIMITs, the smallest of which at least
 * lim is used (as list_durable_runs does): the planner then knows how
 * short a page is and keeps to the ordered index scan.
 */
#define NEWEST_OF(q, n, label) \
	{NEWEST_SELECT q NEWEST_ORDER " LIMIT " n, NEWEST_TYPES, .name = label "." n}
#define NEWEST_LIMITS(q, label) \
	{NEWEST_OF(q, "1", label), NEWEST_OF(q, "10", label), \
	 NEWEST_OF(q, "100", label), NEWEST_OF(q, "1000", label)}
#define NEWEST_N_LIMITS 4
static const int32 newest_limits[NEWEST_N_LIMITS] = {1, 10, 100, 1000};

/* [scope: 0 project, 1 session, 2 run][0 first page, 1 after a key][limit] */
static WlStmt newest_stmts[3][2][NEWEST_N_LIMITS] WL_KEPT = {
	{NEWEST_LIMITS(NEWEST_SCOPE_P, "run_state.newest.project"),
	 NEWEST_LIMITS(NEWEST_SCOPE_P NEWEST_AFTER, "run_state.newest.project.after")},
	{NEWEST_LIMITS(NEWEST_SCOPE_PS, "run_state.newest.session"),
	 NEWEST_LIMITS(NEWEST_SCOPE_PS NEWEST_AFTER, "run_state.newest.session.after")},
	{NEWEST_LIMITS(NEWEST_SCOPE_PSR, "run_state.newest.run"),
	 NEWEST_LIMITS(NEWEST_SCOPE_PSR NEWEST_AFTER, "run_state.newest.run.after")},
};

/*
 * worklist.newest_checkpoints(project, session, run, metadata,
 *		before_session, before_run, before_checkpoint_id, lim)
 *		RETURNS SETOF checkpoint
 */
Datum
wl_newest_checkpoints(PG_FUNCTION_ARGS)
{
	/* the key of the checkpoint to start after */
	static WlStmt start_stmt WL_KEPT = {
		"SELECT c.created_at FROM worklist.run_checkpoint c"
		" WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.=) $5",
		5, {ADDRESS_TYPES, TEXTOID}, .name = "run_state.newest.start"
	};
	text	   *tenant;
	text	   *project;
	text	   *session;
	text	   *run;
	Datum		metadata = (Datum) 0;
	text	   *before_session;
	text	   *before_run;
	text	   *before_id;
	int32		lim;
	int			scope;
	int			bucket;
	WlSpi		spi;
	Datum		values[9];
	char		nulls[9];

	tenant = wl_tenant_enter();
	project = wl_arg_ident(fcinfo, 0, "project");
	session = wl_arg_ident_opt(fcinfo, 1, "session");
	run = wl_arg_ident_opt(fcinfo, 2, "run");
	if (run && !session)
		wl_error_bad_arg("run", "requires session");
	if (!PG_ARGISNULL(3))
	{
		metadata = wl_arg_document(fcinfo, 3, "metadata");
		if (!JB_ROOT_IS_OBJECT(DatumGetJsonbP(metadata)))
			wl_error_bad_arg("metadata", "must be a jsonb object");
	}
	before_session = wl_arg_ident_opt(fcinfo, 4, "before_session");
	before_run = wl_arg_ident_opt(fcinfo, 5, "before_run");
	before_id = wl_arg_ident_opt(fcinfo, 6, "before_checkpoint_id");
	lim = wl_arg_limit(fcinfo, 7, 100, WL_LIMIT_MAX);
	if (before_id)
	{
		if (!before_session)
			before_session = session;
		if (!before_run)
			before_run = run;
		if (!before_session)
			wl_error_bad_arg("before_session", "must be given when the scope names no session");
		if (!before_run)
			wl_error_bad_arg("before_run", "must be given when the scope names no run");
	}

	scope = run ? 2 : session ? 1 : 0;
	for (bucket = 0; newest_limits[bucket] < lim; bucket++)
		;
	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(project);
	values[2] = PointerGetDatum(session);
	nulls[2] = session ? ' ' : 'n';
	values[3] = PointerGetDatum(run);
	nulls[3] = run ? ' ' : 'n';
	values[4] = metadata;
	nulls[4] = metadata ? ' ' : 'n';
	for (int i = 5; i < 9; i++)
		nulls[i] = 'n';

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_spi_begin(&spi);
	if (before_id)
	{
		Datum		start[5];
		bool		isnull;

		start[0] = PointerGetDatum(tenant);
		start[1] = PointerGetDatum(project);
		start[2] = PointerGetDatum(before_session);
		start[3] = PointerGetDatum(before_run);
		start[4] = PointerGetDatum(before_id);
		if (wl_exec(&start_stmt, start, NULL, true, 0) == 0)
			wl_error_not_found("checkpoint", text_to_cstring(before_id));
		values[5] = wl_result_datum(0, 1, &isnull);
		values[6] = PointerGetDatum(before_id);
		values[7] = PointerGetDatum(before_session);
		values[8] = PointerGetDatum(before_run);
		for (int i = 5; i < 9; i++)
			nulls[i] = ' ';
	}
	(void) wl_exec(&newest_stmts[scope][before_id ? 1 : 0][bucket], values, nulls,
				   true, lim);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* ----------
 * Pending writes
 * ----------
 */

/*
 * worklist.put_writes(project, session, run, checkpoint_id, task_id, idx,
 *		channels, vals, task_path, fence) RETURNS integer
 */
Datum
wl_put_writes(PG_FUNCTION_ARGS)
{
	/*
	 * One row per index: of an index given twice, the first element wins
	 * when it is >= 0 and the last when negative, as separate calls would
	 * have it.  Returns a row per write inserted or replaced.
	 */
	static WlStmt stmt WL_KEPT = {
		"WITH w AS ("
		"  SELECT DISTINCT ON (u.idx) u.idx, u.channel, u.value"
		"    FROM ROWS FROM (pg_catalog.unnest($7::pg_catalog.int4[]),"
		"                    pg_catalog.unnest($8::pg_catalog.text[]),"
		"                    pg_catalog.unnest($9::pg_catalog.jsonb[]))"
		"         WITH ORDINALITY u(idx, channel, value, n)"
		"   ORDER BY u.idx, CASE WHEN u.idx OPERATOR(pg_catalog.<) 0"
		"                   THEN OPERATOR(pg_catalog.-) u.n ELSE u.n END)"
		" INSERT INTO worklist.run_pending_write AS p"
		"  (tenant, project, session, run, checkpoint_id, task_id, idx, channel,"
		"   value, task_path)"
		" SELECT $1, $2, $3, $4, $5, $6, w.idx, w.channel, w.value, $10 FROM w"
		" ON CONFLICT (tenant, project, session, run, checkpoint_id, task_id, idx)"
		" DO UPDATE SET channel = EXCLUDED.channel, value = EXCLUDED.value,"
		"  task_path = EXCLUDED.task_path"
		"  WHERE EXCLUDED.idx OPERATOR(pg_catalog.<) 0"
		" RETURNING 1",
		10, {ADDRESS_TYPES, TEXTOID, TEXTOID, INT4ARRAYOID, TEXTARRAYOID,
		JSONBARRAYOID, TEXTOID}, .name = "run_state.put_writes"
	};
	RunAddress addr;
	text	   *checkpoint_id;
	text	   *task_id;
	Datum	   *elems;
	int			n;
	text	   *task_path;
	bool		fenced;
	int64		fence = 0;
	WlSpi		spi;
	Datum		values[10];
	uint64		stored;

	wl_run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES));
	checkpoint_id = wl_arg_ident(fcinfo, 3, "checkpoint_id");
	task_id = wl_arg_ident(fcinfo, 4, "task_id");
	n = wl_arg_elements(fcinfo, 5, "idx", INT4OID, &elems);
	check_lengths(n, ident_elements(fcinfo, 6, "channels", &elems), "idx", "channels");
	check_lengths(n, document_elements(fcinfo, 7, "vals", &elems), "idx", "vals");
	task_path = wl_arg_text_upto(fcinfo, 8, "task_path", false, TASK_PATH_MAX);
	if (task_path == NULL)
		task_path = cstring_to_text("");
	fenced = !PG_ARGISNULL(9);
	if (fenced)
		fence = PG_GETARG_INT64(9);

	wl_run_address_values(&addr, values);
	values[4] = PointerGetDatum(checkpoint_id);
	values[5] = PointerGetDatum(task_id);
	values[6] = PG_GETARG_DATUM(5);
	values[7] = PG_GETARG_DATUM(6);
	values[8] = PG_GETARG_DATUM(7);
	values[9] = PointerGetDatum(task_path);

	wl_spi_begin(&spi);
	lock_for_write(&addr, values, fenced, fence);
	stored = n > 0 ? wl_exec(&stmt, values, NULL, false, 0) : 0;
	wl_spi_end(&spi);

	if (stored > 0)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_CHECKPOINTED);
	PG_RETURN_INT32((int32) stored);
}

/*
 * worklist.pending_writes(project, session, run, checkpoint_id)
 *		RETURNS SETOF run_write
 */
Datum
wl_pending_writes(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT ROW(p.checkpoint_id, p.task_id, p.idx, p.channel, p.value,"
		"           p.task_path)::worklist.run_write"
		"  FROM worklist.run_pending_write p"
		" WHERE" RUN_KEY("p") " AND p.checkpoint_id OPERATOR(pg_catalog.=) $5"
		" ORDER BY p.task_path, p.task_id, p.idx",
		5, {ADDRESS_TYPES, TEXTOID}, .name = "run_state.pending_writes"
	};
	RunAddress addr;
	WlSpi		spi;
	Datum		values[5];

	wl_run_address(fcinfo, &addr);
	wl_run_address_values(&addr, values);
	values[4] = PointerGetDatum(wl_arg_ident(fcinfo, 3, "checkpoint_id"));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_spi_begin(&spi);
	(void) wl_exec_to_srf(&stmt, values, NULL, fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* ----------
 * Channel values
 * ----------
 */

/*
 * worklist.put_values(project, session, run, channels, versions, vals,
 *		fence) RETURNS integer
 */
Datum
wl_put_values(PG_FUNCTION_ARGS)
{
	/* of a pair given twice, the first element is the one stored */
	static WlStmt stmt WL_KEPT = {
		"WITH v AS ("
		"  SELECT DISTINCT ON (u.channel, u.version) u.channel, u.version, u.value"
		"    FROM ROWS FROM (pg_catalog.unnest($5::pg_catalog.text[]),"
		"                    pg_catalog.unnest($6::pg_catalog.text[]),"
		"                    pg_catalog.unnest($7::pg_catalog.jsonb[]))"
		"         WITH ORDINALITY u(channel, version, value, n)"
		"   ORDER BY u.channel, u.version, u.n)"
		" INSERT INTO worklist.run_channel_value"
		"  (tenant, project, session, run, channel, version, value)"
		" SELECT $1, $2, $3, $4, v.channel, v.version, v.value FROM v"
		" ON CONFLICT (tenant, project, session, run, channel, version) DO NOTHING"
		" RETURNING 1",
		7, {ADDRESS_TYPES, TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID},
		.name = "run_state.put_values"
	};
	RunAddress addr;
	Datum	   *elems;
	int			n;
	bool		fenced;
	int64		fence = 0;
	WlSpi		spi;
	Datum		values[7];
	uint64		stored;

	wl_run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES));
	n = ident_elements(fcinfo, 3, "channels", &elems);
	check_lengths(n, ident_elements(fcinfo, 4, "versions", &elems), "channels", "versions");
	check_lengths(n, document_elements(fcinfo, 5, "vals", &elems), "channels", "vals");
	fenced = !PG_ARGISNULL(6);
	if (fenced)
		fence = PG_GETARG_INT64(6);

	wl_run_address_values(&addr, values);
	values[4] = PG_GETARG_DATUM(3);
	values[5] = PG_GETARG_DATUM(4);
	values[6] = PG_GETARG_DATUM(5);

	wl_spi_begin(&spi);
	lock_for_write(&addr, values, fenced, fence);
	stored = n > 0 ? wl_exec(&stmt, values, NULL, false, 0) : 0;
	wl_spi_end(&spi);

	PG_RETURN_INT32((int32) stored);
}

/*
 * worklist.run_values(project, session, run, channels, versions)
 *		RETURNS SETOF run_value
 */
Datum
wl_run_values(PG_FUNCTION_ARGS)
{
	/* one primary-key probe per pair named */
	static WlStmt stmt WL_KEPT = {
		"SELECT ROW(v.channel, v.version, v.value)::worklist.run_value"
		"  FROM ROWS FROM (pg_catalog.unnest($5::pg_catalog.text[]),"
		"                  pg_catalog.unnest($6::pg_catalog.text[]))"
		"       WITH ORDINALITY a(channel, version, n)"
		"  JOIN worklist.run_channel_value v ON" RUN_KEY("v")
		"   AND v.channel OPERATOR(pg_catalog.=) a.channel"
		"   AND v.version OPERATOR(pg_catalog.=) a.version"
		" ORDER BY a.n",
		6, {ADDRESS_TYPES, TEXTARRAYOID, TEXTARRAYOID}, .name = "run_state.run_values"
	};
	RunAddress addr;
	Datum	   *elems;
	int			n;
	WlSpi		spi;
	Datum		values[6];

	wl_run_address(fcinfo, &addr);
	n = ident_elements(fcinfo, 3, "channels", &elems);
	check_lengths(n, ident_elements(fcinfo, 4, "versions", &elems), "channels", "versions");
	wl_run_address_values(&addr, values);
	values[4] = PG_GETARG_DATUM(3);
	values[5] = PG_GETARG_DATUM(4);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_spi_begin(&spi);
	(void) wl_exec_to_srf(&stmt, values, NULL, fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* ----------
 * The whole run
 * ----------
 */

/*
 * worklist.delete_run(project, session, run, fence, now) RETURNS integer
 */
Datum
wl_delete_run(PG_FUNCTION_ARGS)
{
	/* the tasks the current park awaits */
	static WlStmt park_stmt WL_KEPT = {
		"SELECT c.park_tasks FROM worklist.run r"
		" JOIN worklist.run_checkpoint c ON" RUN_KEY("c")
		"  AND c.checkpoint_id OPERATOR(pg_catalog.=) r.park_checkpoint_id"
		" WHERE" RUN_KEY("r") " AND c.park_tasks IS NOT NULL",
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.park"
	};
	static WlStmt lease_stmt WL_KEPT = {
		"SELECT l.holder, l.fence, l.expires_at FROM worklist.run_claim l"
		" WHERE" RUN_KEY("l") " FOR NO KEY UPDATE",
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.lock_lease"
	};
	static WlStmt run_stmt WL_KEPT = {
		"SELECT FROM worklist.run r WHERE" RUN_KEY("r") " FOR UPDATE",
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.lock_run"
	};
	/* the data: how many checkpoints went, and how many rows besides */
	static WlStmt data_stmt WL_KEPT = {
		"WITH checkpoints AS ("
		"  DELETE FROM worklist.run_checkpoint c WHERE" RUN_KEY("c") " RETURNING 1),"
		" writes AS ("
		"  DELETE FROM worklist.run_pending_write w WHERE" RUN_KEY("w") " RETURNING 1),"
		" vals AS ("
		"  DELETE FROM worklist.run_channel_value v WHERE" RUN_KEY("v") " RETURNING 1),"
		" parks AS ("
		"  DELETE FROM worklist.run_park_task p WHERE" RUN_KEY("p") " RETURNING 1)"
		" SELECT (SELECT pg_catalog.count(*) FROM checkpoints)::pg_catalog.int4,"
		"        (SELECT pg_catalog.count(*) FROM writes)"
		"        OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM vals)",
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.data"
	};
	/* the run's row goes unless a lease or a conclusion keeps it */
	static WlStmt forget_stmt WL_KEPT = {
		"DELETE FROM worklist.run r WHERE" RUN_KEY("r")
		" AND r.concluded_at IS NULL"
		" AND NOT EXISTS (SELECT FROM worklist.run_claim l WHERE" RUN_KEY("l") ")",
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.forget"
	};
	/* kept: only that, as if it had never been written */
	static WlStmt clear_stmt WL_KEPT = {
		"UPDATE worklist.run r SET listed = false, checkpoint_count = 0,"
		" latest_checkpoint_id = NULL, latest_checkpoint_at = NULL,"
		" park_checkpoint_id = NULL, park_request = NULL, parked_at = NULL,"
		" park_deadline = NULL, park_resolved_at = NULL,"
		" parent_run = NULL, run_created_at = NULL"
		" WHERE" RUN_KEY("r"),
		4, {ADDRESS_TYPES}, .name = "run_state.delete_run.clear"
	};

	/*
	 * The holding is superseded: a new fence nobody holds (the sequence
	 * checked against the stored fences first, as claim_run checks it),
	 * and an unexpired lease ends at $5.
	 */
	static WlStmt supersede_stmt WL_KEPT = {
		"WITH g AS MATERIALIZED (SELECT " FENCE_SEQ_AHEAD " AS ok)"
		" UPDATE worklist.run_claim l"
		"    SET fence = pg_catalog.nextval('worklist.fence_seq'::pg_catalog.regclass),"
		"        expires_at = CASE WHEN l.expires_at OPERATOR(pg_catalog.>) $5"
		"                          THEN $5 ELSE l.expires_at END,"
		"        released = true, reclaimed = false"
		"   FROM g WHERE" RUN_KEY("l") " AND g.ok",
		5, {ADDRESS_TYPES, TIMESTAMPTZOID}, .name = "run_state.delete_run.supersede"
	};
	RunAddress addr;
	bool		fenced;
	int64		fence = 0;
	TimestampTz now;
	char	   *caller = NULL;
	WlSpi		spi;
	Datum		values[5];
	Datum		tasks = (Datum) 0;
	bool		isnull;
	bool		leased;
	char	   *holder = NULL;
	int64		current = 0;
	TimestampTz expires_at = 0;
	int32		checkpoints = 0;
	int64		others = 0;

	wl_run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES, WL_CLOCK(4, "now")));
	fenced = !PG_ARGISNULL(3);
	if (fenced)
		fence = PG_GETARG_INT64(3);
	now = wl_check_finite(wl_arg_time(fcinfo, 4, "now"), "now");
	if (wl_caller_binding == WL_BINDING_MEMBER)
	{
		if (!fenced)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("argument \"fence\" must not be null for a member"),
					 errdetail("A member binding deletes only a run it holds, with the fence of its lease.")));
		caller = GetUserNameFromId(GetUserId(), false);
	}
	wl_run_address_values(&addr, values);
	values[4] = TimestampTzGetDatum(now);

	wl_spi_begin(&spi);

	/* the tasks first, as every settlement locks them */
	if (wl_exec(&park_stmt, values, NULL, false, 0) > 0)
	{
		tasks = wl_result_datum(0, 1, &isnull);
		wl_lock_tasks(addr.tenant, DatumGetArrayTypeP(tasks));
	}

	/* then the lease, and the fence rule; then the run */
	leased = wl_exec(&lease_stmt, values, NULL, false, 0) > 0;
	if (leased)
	{
		holder = wl_result_cstring(0, 1);
		current = DatumGetInt64(wl_result_datum(0, 2, &isnull));
		expires_at = DatumGetTimestampTz(wl_result_datum(0, 3, &isnull));
	}
	if (fenced)
	{
		if (!leased || current != fence)
		{
			wl_count(WL_COUNT_STALE_FENCES);
			wl_error_stale_fence(text_to_cstring(addr.run), fence, leased, current);
		}
		if (caller != NULL && strcmp(caller, holder) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("fence " INT64_FORMAT " of run \"%s\" is not held by the caller",
							fence, text_to_cstring(addr.run)),
					 errdetail("It was issued to \"%s\"; a member binding acts only on a run its own role holds.",
							   holder)));
	}
	else if (leased && expires_at > now)
		ereport(ERROR,
				(errcode(ERRCODE_WL_STALE_FENCE),
				 errmsg("run \"%s\" is held by \"%s\"", text_to_cstring(addr.run), holder),
				 errdetail("The call carries no fence; the holder's fence is " INT64_FORMAT
						   ", its lease unexpired until %s.",
						   current, timestamptz_to_str(expires_at)),
				 errhint("Pass the holder's fence, or wait until its lease expires.")));
	(void) wl_exec(&run_stmt, values, NULL, false, 0);

	/* the current park as it stands under the locks */
	tasks = (Datum) 0;
	if (wl_exec(&park_stmt, values, NULL, false, 0) > 0)
		tasks = wl_result_datum(0, 1, &isnull);

	if (wl_exec(&data_stmt, values, NULL, false, 0) == 1)
	{
		checkpoints = DatumGetInt32(wl_result_datum(0, 1, &isnull));
		others = DatumGetInt64(wl_result_datum(0, 2, &isnull));
	}
	if (wl_exec(&forget_stmt, values, NULL, false, 0) == 0)
		(void) wl_exec(&clear_stmt, values, NULL, false, 0);

	for (int attempt = 0; leased; attempt++)
	{
		if (wl_exec(&supersede_stmt, values, NULL, false, 0) > 0)
			break;
		if (attempt >= 2)
			elog(ERROR, "could not advance worklist.fence_seq past the stored fences");
		wl_run_fence_catch_up();
	}

	/* its parks are gone: the withdrawal resolves none */
	if (tasks != (Datum) 0)
		(void) wl_withdraw_tasks(addr.tenant, DatumGetArrayTypeP(tasks), NULL, now);
	wl_spi_end(&spi);

	if (checkpoints > 0 || others > 0)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_CHECKPOINT_DELETED);
	if (leased && expires_at > now)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_RELEASED);
	PG_RETURN_INT32(checkpoints);
}
