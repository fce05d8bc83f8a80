/*-------------------------------------------------------------------------
 *
 * run.c
 *	  Runs: checkpoints, leases and fences (doc/reference.md, section 6).
 *
 * Locking protocol.  Every verb that changes a run's checkpoints first
 * locks the run's row in worklist.run (FOR NO KEY UPDATE), then, in a
 * second statement and therefore under a snapshot taken after the lock,
 * changes the checkpoints and the run's summary columns (count, newest
 * checkpoint, park) together.  So checkpoint writers of one run are
 * serialised and the summary always matches the checkpoints it describes,
 * at every isolation level (under REPEATABLE READ a concurrent change makes
 * the lock fail with a serialization error instead).
 *
 * A fenced write additionally locks the run's lease row FOR SHARE before
 * anything else and compares its fence with the one it carries.  A claim
 * updates that row, so a claim and a fenced write of the same run are
 * serialised: a reclaim that commits first makes the older holder's write
 * see the new fence and fail with WL007; a write that locked first commits
 * before the reclaim can proceed.  The lease is locked before the run row,
 * the order a transaction that claims and then writes takes them in too,
 * so the two cannot deadlock.  A run with a lease has a row (claim_run
 * creates it), so a fenced write normally takes both locks, and reads the
 * fence, in one statement whose row marks name the lease first (LockRows
 * locks in that order); only when that finds no lease does it fall back to
 * locking the lease alone and creating the run row, as an unfenced write
 * does.  Unfenced writes never touch the lease.
 *
 * Fences come from one sequence, worklist.fence_seq.  Before minting,
 * claim_run checks (in the same statement) that the sequence is not behind
 * the highest fence stored; if it is (a restore of an older dump, a
 * promoted logical replica), it locks the sequence against every
 * transaction that may draw from it, moves it past that fence and tries
 * again.  See mint_guard_slow_path().  The fence a claim returns is
 * durable in the sequence before it is returned (flush_fence_sequence),
 * and a successful claim is flushed at commit even under
 * synchronous_commit = off (see wl_claim_run).
 *
 *-------------------------------------------------------------------------
 */
#include "run.h"
#include "change.h"
#include "sweep.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(wl_write_checkpoint);
PG_FUNCTION_INFO_V1(wl_read_checkpoint);
PG_FUNCTION_INFO_V1(wl_list_checkpoints);
PG_FUNCTION_INFO_V1(wl_delete_checkpoint);
PG_FUNCTION_INFO_V1(wl_prune_checkpoints);
PG_FUNCTION_INFO_V1(wl_claim_run);
PG_FUNCTION_INFO_V1(wl_release_run);

void
wl_run_address_as(FunctionCallInfo fcinfo, RunAddress *addr, const WlTrustArg *checks)
{
	static const WlTrustArg none[] = {{WL_TRUST_END, 0, NULL}};

	addr->tenant = wl_tenant_enter_as(fcinfo, checks ? checks : none);
	addr->project = wl_arg_ident(fcinfo, 0, "project");
	addr->session = wl_arg_ident(fcinfo, 1, "session");
	addr->run = wl_arg_ident(fcinfo, 2, "run");
}

void
wl_run_address_values(const RunAddress *addr, Datum *values)
{
	values[0] = PointerGetDatum(addr->tenant);
	values[1] = PointerGetDatum(addr->project);
	values[2] = PointerGetDatum(addr->session);
	values[3] = PointerGetDatum(addr->run);
}

/* the short names the verbs of this file use */
#define run_address_as wl_run_address_as
#define run_address wl_run_address
#define address_values wl_run_address_values

/* Lock the run's row; no row when the run does not exist. */
static WlStmt lock_run_stmt WL_KEPT = {
	"SELECT true FROM worklist.run r WHERE" RUN_KEY("r")
	" FOR NO KEY UPDATE",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.lock_run"
};

/*
 * The newest checkpoint of the run other than $5, and the newest parked
 * one other than $5: what remains of the summary when checkpoint $5 is
 * (re)written or deleted.  Each is one probe of an index.
 */
#define OTHER_CTES \
	" other AS (" \
	"  SELECT c.checkpoint_id, c.created_at FROM worklist.run_checkpoint c" \
	"   WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.<>) $5" \
	"   ORDER BY c.created_at DESC, c.checkpoint_id DESC LIMIT 1)," \
	" other_park AS (" \
	"  SELECT c.checkpoint_id, c.created_at, c.park_request, c.parked_at," \
	"         c.park_deadline, c.park_resolved_at" \
	"    FROM worklist.run_checkpoint c" \
	"   WHERE" RUN_KEY("c") " AND c.park_request IS NOT NULL" \
	"     AND c.checkpoint_id OPERATOR(pg_catalog.<>) $5" \
	"   ORDER BY c.created_at DESC, c.checkpoint_id DESC LIMIT 1)"

/*
 * The statement of write_checkpoint: write the checkpoint and bring the
 * summary up to date.  The run row is locked, so this statement's snapshot
 * holds every other checkpoint of the run; the new newest / parked
 * checkpoint is either $5 or the newest other one.  On a 0.4 schema it
 * also stores $14 metadata, $15 parent_checkpoint_id and $16 park_tasks
 * (NULL from write_checkpoint: its park awaits no task, and an overwrite
 * clears the tasks of a park this checkpoint was before), and marks the
 * run queued (see claim_next_run).
 */
#define WRITE_SQL(cols, vals, sets, runsets) \
	"WITH prior AS (" \
	"  SELECT true FROM worklist.run_checkpoint c" \
	"   WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.=) $5)," \
	" put AS (" \
	"  INSERT INTO worklist.run_checkpoint AS c" \
	"   (tenant, project, session, run, checkpoint_id, created_at, body," \
	"    park_request, parked_at, park_deadline, park_resolved_at" cols ")" \
	"  VALUES ($1, $2, $3, $4, $5, $6, $7, $10, $11, $12, $13" vals ")" \
	"  ON CONFLICT (tenant, project, session, run, checkpoint_id) DO UPDATE" \
	"   SET created_at = EXCLUDED.created_at, body = EXCLUDED.body," \
	"       park_request = EXCLUDED.park_request, parked_at = EXCLUDED.parked_at," \
	"       park_deadline = EXCLUDED.park_deadline," \
	"       park_resolved_at = EXCLUDED.park_resolved_at" sets ")," \
	OTHER_CTES "," \
	" pick AS (" \
	"  SELECT o.checkpoint_id AS o_id, o.created_at AS o_at," \
	"         (o.checkpoint_id IS NULL" \
	"          OR $6 OPERATOR(pg_catalog.>) o.created_at" \
	"          OR ($6 OPERATOR(pg_catalog.=) o.created_at" \
	"              AND $5 OPERATOR(pg_catalog.>) o.checkpoint_id)) AS new_latest," \
	"         p.checkpoint_id AS p_id, p.park_request AS p_request," \
	"         p.parked_at AS p_parked, p.park_deadline AS p_deadline," \
	"         p.park_resolved_at AS p_resolved," \
	"         ($10 IS NOT NULL" \
	"          AND (p.checkpoint_id IS NULL" \
	"               OR $6 OPERATOR(pg_catalog.>) p.created_at" \
	"               OR ($6 OPERATOR(pg_catalog.=) p.created_at" \
	"                   AND $5 OPERATOR(pg_catalog.>) p.checkpoint_id))) AS new_park" \
	"    FROM (SELECT) one LEFT JOIN other o ON true LEFT JOIN other_park p ON true)" \
	" UPDATE worklist.run r SET" \
	"  parent_run = COALESCE(r.parent_run, $8)," \
	"  run_created_at = COALESCE(r.run_created_at, $9)," \
	"  listed = true," runsets \
	"  checkpoint_count = r.checkpoint_count OPERATOR(pg_catalog.+)" \
	"    CASE WHEN EXISTS (SELECT FROM prior) THEN 0 ELSE 1 END," \
	"  latest_checkpoint_id = CASE WHEN k.new_latest THEN $5 ELSE k.o_id END," \
	"  latest_checkpoint_at = CASE WHEN k.new_latest THEN $6 ELSE k.o_at END," \
	"  park_checkpoint_id = CASE WHEN k.new_park THEN $5 ELSE k.p_id END," \
	"  park_request = CASE WHEN k.new_park THEN $10 ELSE k.p_request END," \
	"  parked_at = CASE WHEN k.new_park THEN $11 ELSE k.p_parked END," \
	"  park_deadline = CASE WHEN k.new_park THEN $12 ELSE k.p_deadline END," \
	"  park_resolved_at = CASE WHEN k.new_park THEN $13 ELSE k.p_resolved END" \
	" FROM pick k WHERE" RUN_KEY("r")
#define WRITE_COLS_04 ", metadata, parent_checkpoint_id, park_tasks"
#define WRITE_VALUES_04 ", $14, $15, $16"
#define WRITE_SETS_04 ", park_tasks = EXCLUDED.park_tasks, metadata = EXCLUDED.metadata," \
	" parent_checkpoint_id = EXCLUDED.parent_checkpoint_id"
#define WRITE_RUN_04 " queued = true,"

/*
 * Create the run's row or lock it: ON CONFLICT DO UPDATE locks the existing
 * row even though its WHERE lets nothing be updated.
 */
static WlStmt ensure_stmt WL_KEPT = {
	"INSERT INTO worklist.run AS r (tenant, project, session, run)"
	" VALUES ($1, $2, $3, $4)"
	" ON CONFLICT (tenant, project, session, run)"
	" DO UPDATE SET listed = r.listed WHERE false",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.write.ensure_run"
};

/* The write itself; see WRITE_SQL. */
static WlStmt write_stmt WL_KEPT = {
	WRITE_SQL(WRITE_COLS_04, WRITE_VALUES_04, WRITE_SETS_04, WRITE_RUN_04),
	WL_RUN_WRITE_NARGS, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID,
		JSONBOID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TIMESTAMPTZOID,
	TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID, TEXTOID, TEXTARRAYOID},
	.name = "run.write.checkpoint",
	.sql03 = WRITE_SQL("", "", "", "")
};

bool
wl_run_lock_row(Datum *address, bool *concluded)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT r.concluded_at FROM worklist.run r WHERE" RUN_KEY("r")
		" FOR NO KEY UPDATE",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.lock_row",
		.sql03 = "SELECT NULL::pg_catalog.timestamptz FROM worklist.run r WHERE" RUN_KEY("r")
		" FOR NO KEY UPDATE"
	};
	bool		isnull;

	*concluded = false;
	if (wl_exec(&stmt, address, NULL, false, 0) == 0)
		return false;
	(void) wl_result_datum(0, 1, &isnull);
	*concluded = !isnull;
	return true;
}

bool
wl_run_refuse_concluded(Datum *address)
{
	bool		concluded;
	bool		isnull;

	if (!wl_run_lock_row(address, &concluded))
		return false;
	if (concluded)
		wl_error_run_concluded(TextDatumGetCString(address[3]),
							   DatumGetTimestampTz(wl_result_datum(0, 1, &isnull)));
	return true;
}

void
wl_run_ensure(Datum *address)
{
	(void) wl_exec(&ensure_stmt, address, NULL, false, 0);
}

void
wl_run_write(Datum *values, const char *nulls)
{
	/*
	 * The tasks of a park this checkpoint was before no longer wait for it:
	 * their settlements must not find it, nor retention keep them for it.
	 * The run's row is locked, so no settlement is resolving it meanwhile.
	 */
	static WlStmt forget_stmt WL_KEPT = {
		"DELETE FROM worklist.run_park_task w WHERE" RUN_KEY("w")
		" AND w.checkpoint_id OPERATOR(pg_catalog.=) $5",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.write.forget_park"
	};

	if (wl_exec(&write_stmt, values, nulls, false, 0) != 1)
		elog(ERROR, "run row vanished while locked");
	if (wl_schema_current() && nulls[15] == 'n')
		(void) wl_exec(&forget_stmt, values, NULL, false, 0);
}

/*
 * worklist.write_checkpoint(project, session, run, checkpoint_id, body,
 *		fence, parent_run, created_at, run_created_at, park_request,
 *		parked_at, park_deadline, park_resolved_at, metadata,
 *		parent_checkpoint_id) RETURNS void
 *
 * Refusals after the arguments: a concluded run (WL008, whatever the
 * fence), then a fence other than the current one (WL007).
 */
Datum
wl_write_checkpoint(PG_FUNCTION_ARGS)
{
	/*
	 * A fenced write's locks: the lease (FOR SHARE, against claims, until
	 * commit), then the run row (as ensure_stmt locks it), and the current
	 * fence.  No row: the run has no lease (or, which claim_run never
	 * leaves behind, a lease without a run row); see fence_stmt.
	 */
	static WlStmt lock_fenced_stmt WL_KEPT = {
		"SELECT l.fence FROM worklist.run_claim l, worklist.run r"
		" WHERE" RUN_KEY("l") " AND" RUN_KEY("r")
		" FOR SHARE OF l FOR NO KEY UPDATE OF r",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.write.lock_fenced"
	};

	/* the run's current fence, locked against claims until commit */
	static WlStmt fence_stmt WL_KEPT = {
		"SELECT l.fence FROM worklist.run_claim l WHERE" RUN_KEY("l")
		" FOR SHARE",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.write.lock_lease"
	};
	RunAddress addr;
	text	   *checkpoint_id;
	Datum		body;
	bool		fenced;
	int64		fence = 0;
	text	   *parent_run;
	TimestampTz created_at;
	text	   *park_request;
	Datum		metadata = (Datum) 0;
	text	   *parent_checkpoint_id = NULL;
	WlSpi		spi;
	Datum		values[WL_RUN_WRITE_NARGS];
	char		nulls[WL_RUN_WRITE_NARGS];
	bool		exists;

	run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES));
	checkpoint_id = wl_arg_ident(fcinfo, 3, "checkpoint_id");
	body = wl_arg_document(fcinfo, 4, "body");
	fenced = !PG_ARGISNULL(5);
	if (fenced)
		fence = PG_GETARG_INT64(5);
	parent_run = wl_arg_ident_opt(fcinfo, 6, "parent_run");
	created_at = wl_arg_time(fcinfo, 7, "created_at");
	park_request = wl_arg_ident_opt(fcinfo, 9, "park_request");
	/* the 0.3 function has neither */
	if (PG_NARGS() > 13)
	{
		metadata = wl_arg_metadata(fcinfo, 13, "metadata");
		parent_checkpoint_id = wl_arg_ident_opt(fcinfo, 14, "parent_checkpoint_id");
	}

	memset(nulls, ' ', sizeof(nulls));
	address_values(&addr, values);

	wl_spi_begin(&spi);

	if (fenced)
	{
		bool		has_current = false;
		int64		current = 0;

		if (wl_exec(&lock_fenced_stmt, values, NULL, false, 0) == 0)
			(void) wl_exec(&fence_stmt, values, NULL, false, 0);
		if (SPI_processed > 0)
		{
			bool		isnull;
			Datum		d = wl_result_datum(0, 1, &isnull);

			has_current = !isnull;
			if (has_current)
				current = DatumGetInt64(d);
		}
		/* the run row, locked already when it has a lease */
		exists = wl_run_refuse_concluded(values);
		if (!has_current || current != fence)
		{
			wl_count(WL_COUNT_STALE_FENCES);
			wl_error_stale_fence(text_to_cstring(addr.run), fence,
								 has_current, current);
		}
	}
	else
		exists = wl_run_refuse_concluded(values);
	/* a run row that exists is locked now; else it is made */
	if (!exists)
	{
		/* made now, or by a concurrent first write: judged again */
		wl_run_ensure(values);
		(void) wl_run_refuse_concluded(values);
	}

	values[4] = PointerGetDatum(checkpoint_id);
	values[5] = TimestampTzGetDatum(created_at);
	values[6] = body;
	values[7] = PointerGetDatum(parent_run);
	nulls[7] = parent_run ? ' ' : 'n';
	values[8] = PG_GETARG_DATUM(8);
	nulls[8] = PG_ARGISNULL(8) ? 'n' : ' ';
	values[9] = PointerGetDatum(park_request);
	nulls[9] = park_request ? ' ' : 'n';
	for (int i = 10; i <= 12; i++)
	{
		values[i] = PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	values[13] = metadata;
	nulls[13] = metadata ? ' ' : 'n';
	values[14] = PointerGetDatum(parent_checkpoint_id);
	nulls[14] = parent_checkpoint_id ? ' ' : 'n';
	values[15] = (Datum) 0;
	nulls[15] = 'n';
	wl_run_write(values, nulls);

	wl_spi_end(&spi);
	wl_change_record_text(addr.tenant, WL_CHANGE_RUN_CHECKPOINTED);
	PG_RETURN_VOID();
}

/* One checkpoint: $1-$4 the address, $5 the checkpoint id. */
static WlStmt read_stmt WL_KEPT = {
	"SELECT " CHECKPOINT_ROW
	" WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.=) $5",
	5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.read_checkpoint",
	.sql03 = "SELECT " CHECKPOINT_ROW_03
	" WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.=) $5"
};

Datum
wl_run_read_checkpoint(Datum *values, bool *isnull)
{
	*isnull = true;
	if (wl_exec(&read_stmt, values, NULL, false, 0) > 0)
		return wl_result_datum(0, 1, isnull);
	return (Datum) 0;
}

/* worklist.read_checkpoint(project, session, run, checkpoint_id) */
Datum
wl_read_checkpoint(PG_FUNCTION_ARGS)
{
	RunAddress addr;
	WlSpi		spi;
	Datum		values[5];
	Datum		result = (Datum) 0;
	bool		isnull = true;

	run_address(fcinfo, &addr);
	address_values(&addr, values);
	values[4] = PointerGetDatum(wl_arg_ident(fcinfo, 3, "checkpoint_id"));

	wl_spi_begin(&spi);
	if (wl_exec(&read_stmt, values, NULL, true, 0) > 0)
		result = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/* worklist.list_checkpoints(project, session, run) RETURNS SETOF checkpoint */
Datum
wl_list_checkpoints(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT " CHECKPOINT_ROW
		" WHERE" RUN_KEY("c")
		" ORDER BY c.created_at, c.checkpoint_id",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.list_checkpoints",
		.sql03 = "SELECT " CHECKPOINT_ROW_03
		" WHERE" RUN_KEY("c")
		" ORDER BY c.created_at, c.checkpoint_id"
	};
	RunAddress addr;
	WlSpi		spi;
	Datum		values[4];

	run_address(fcinfo, &addr);
	address_values(&addr, values);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	wl_spi_begin(&spi);
	(void) wl_exec_to_srf(&stmt, values, NULL, fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * The statement of delete_checkpoint: the summary without $5 (the newest
 * remaining checkpoints come from the statement's snapshot, which still
 * holds $5, hence OTHER_CTES); on a 0.4 schema the pending writes of the
 * checkpoint go with it (WRITES_OF_GONE).
 */
#define DELETE_SQL(writes) \
	"WITH gone AS (" \
	"  DELETE FROM worklist.run_checkpoint c" \
	"   WHERE" RUN_KEY("c") " AND c.checkpoint_id OPERATOR(pg_catalog.=) $5" \
	"  RETURNING 1)," writes \
	OTHER_CTES \
	" UPDATE worklist.run r SET" \
	"  checkpoint_count = r.checkpoint_count OPERATOR(pg_catalog.-) 1," \
	"  listed = r.checkpoint_count OPERATOR(pg_catalog.>) 1," \
	"  latest_checkpoint_id = (SELECT o.checkpoint_id FROM other o)," \
	"  latest_checkpoint_at = (SELECT o.created_at FROM other o)," \
	"  park_checkpoint_id = p.checkpoint_id, park_request = p.park_request," \
	"  parked_at = p.parked_at, park_deadline = p.park_deadline," \
	"  park_resolved_at = p.park_resolved_at" \
	" FROM (SELECT) one LEFT JOIN other_park p ON true" \
	" WHERE" RUN_KEY("r") " AND EXISTS (SELECT FROM gone)"
#define WRITES_OF_GONE \
	" writes AS (" \
	"  DELETE FROM worklist.run_pending_write w" \
	"   WHERE" RUN_KEY("w") " AND w.checkpoint_id OPERATOR(pg_catalog.=) $5" \
	"     AND EXISTS (SELECT FROM gone)),"

/* worklist.delete_checkpoint(project, session, run, checkpoint_id) */
Datum
wl_delete_checkpoint(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		DELETE_SQL(WRITES_OF_GONE),
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.delete_checkpoint",
		.sql03 = DELETE_SQL("")
	};
	RunAddress addr;
	WlSpi		spi;
	Datum		values[5];
	uint64		deleted = 0;

	run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES));
	address_values(&addr, values);
	values[4] = PointerGetDatum(wl_arg_ident(fcinfo, 3, "checkpoint_id"));

	wl_spi_begin(&spi);
	if (wl_exec(&lock_run_stmt, values, NULL, false, 0) > 0)
		deleted = wl_exec(&stmt, values, NULL, false, 0);
	wl_spi_end(&spi);

	if (deleted > 0)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_CHECKPOINT_DELETED);
	PG_RETURN_VOID();
}

/*
 * The statement of prune_checkpoints: everything but the newest $5 goes.
 * What stays is newer than all that goes, so the newest checkpoint stays
 * unless nothing does, and the park stays unless its checkpoint went (then
 * no parked checkpoint is left).  On a 0.4 schema the pending writes of
 * the checkpoints that go go with them (WRITES_OF_DOOMED).
 */
#define PRUNE_SQL(writes) \
	"WITH doomed AS (" \
	"  SELECT c.checkpoint_id FROM worklist.run_checkpoint c" \
	"   WHERE" RUN_KEY("c") \
	"   ORDER BY c.created_at DESC, c.checkpoint_id DESC OFFSET $5)," \
	" gone AS (" \
	"  DELETE FROM worklist.run_checkpoint c USING doomed d" \
	"   WHERE" RUN_KEY("c") \
	"     AND c.checkpoint_id OPERATOR(pg_catalog.=) d.checkpoint_id" \
	"  RETURNING c.checkpoint_id)," \
	writes \
	" n AS (SELECT pg_catalog.count(*) AS n FROM gone)," \
	" pk AS (" \
	"  SELECT EXISTS (SELECT FROM gone g, worklist.run r" \
	"   WHERE" RUN_KEY("r") \
	"     AND g.checkpoint_id OPERATOR(pg_catalog.=) r.park_checkpoint_id) AS gone)," \
	" upd AS (" \
	"  UPDATE worklist.run r SET" \
	"   checkpoint_count = r.checkpoint_count OPERATOR(pg_catalog.-) n.n," \
	"   listed = r.checkpoint_count OPERATOR(pg_catalog.>) n.n," \
	"   latest_checkpoint_id = CASE WHEN r.checkpoint_count OPERATOR(pg_catalog.>) n.n" \
	"     THEN r.latest_checkpoint_id END," \
	"   latest_checkpoint_at = CASE WHEN r.checkpoint_count OPERATOR(pg_catalog.>) n.n" \
	"     THEN r.latest_checkpoint_at END," \
	"   park_checkpoint_id = CASE WHEN p.gone THEN NULL ELSE r.park_checkpoint_id END," \
	"   park_request = CASE WHEN p.gone THEN NULL ELSE r.park_request END," \
	"   parked_at = CASE WHEN p.gone THEN NULL ELSE r.parked_at END," \
	"   park_deadline = CASE WHEN p.gone THEN NULL ELSE r.park_deadline END," \
	"   park_resolved_at = CASE WHEN p.gone THEN NULL ELSE r.park_resolved_at END" \
	"  FROM n, pk p" \
	"  WHERE" RUN_KEY("r") " AND n.n OPERATOR(pg_catalog.>) 0)" \
	" SELECT n.n::pg_catalog.int4 FROM n"
#define WRITES_OF_DOOMED \
	" writes AS (" \
	"  DELETE FROM worklist.run_pending_write w USING gone g" \
	"   WHERE" RUN_KEY("w") \
	"     AND w.checkpoint_id OPERATOR(pg_catalog.=) g.checkpoint_id),"

/* worklist.prune_checkpoints(project, session, run, keep) RETURNS integer */
Datum
wl_prune_checkpoints(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		PRUNE_SQL(WRITES_OF_DOOMED),
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID}, .name = "run.prune_checkpoints",
		.sql03 = PRUNE_SQL("")
	};
	RunAddress addr;
	int32		keep;
	WlSpi		spi;
	Datum		values[5];
	int32		deleted = 0;

	run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES));
	keep = DatumGetInt32(wl_arg_required(fcinfo, 3, "keep"));
	if (keep < 0)
		wl_error_bad_arg("keep", "must not be negative");
	address_values(&addr, values);
	values[4] = Int32GetDatum(keep);

	wl_spi_begin(&spi);
	if (wl_exec(&lock_run_stmt, values, NULL, false, 0) > 0 &&
		wl_exec(&stmt, values, NULL, false, 0) > 0)
	{
		bool		isnull;

		deleted = DatumGetInt32(wl_result_datum(0, 1, &isnull));
	}
	wl_spi_end(&spi);

	if (deleted > 0)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_PRUNED);
	PG_RETURN_INT32(deleted);
}

/*
 * The sequence fell behind a stored fence.  Lock it in a mode that waits
 * for every transaction that drew from it (nextval holds RowExclusiveLock
 * until the end of the transaction) and keeps new ones from drawing, then
 * move it past the highest stored fence.  Under that lock nobody can draw
 * a value between the check and setval, so it only ever moves forward and
 * no value is handed out twice.  Two transactions that both drew a fence
 * earlier and both get here deadlock, and one of them fails (40P01): rare,
 * and clean.
 */
static void
mint_guard_slow_path(void)
{
	static WlStmt advance_stmt WL_KEPT = {
		"SELECT pg_catalog.setval('worklist.fence_seq'::pg_catalog.regclass, m.f)"
		"  FROM (SELECT pg_catalog.max(l.fence) AS f FROM worklist.run_claim l) m,"
		"       worklist.fence_seq s"
		" WHERE m.f OPERATOR(pg_catalog.>) (s.last_value OPERATOR(pg_catalog.-)"
		"       CASE WHEN s.is_called THEN 0 ELSE 1 END)",
		0, {InvalidOid}, .name = "run.claim.advance_sequence"
	};
	Oid			seq = get_relname_relid("fence_seq",
										get_namespace_oid("worklist", false));

	if (!OidIsValid(seq))
		elog(ERROR, "sequence worklist.fence_seq does not exist");
	LockRelationOid(seq, ShareRowExclusiveLock);
	wl_exec(&advance_stmt, NULL, NULL, false, 0);
}

/*
 * Make the fence just drawn durable before it is handed out.  nextval()
 * WAL-logs the sequence ahead of the values it returns, but flushes
 * nothing: a server that crashed before that record reached disk would
 * start the sequence again below a fence it had already handed out, and
 * hand it out twice -- whatever synchronous_commit says, and whether or
 * not the claim's transaction ever commits.  So flush the WAL up to the
 * record the sequence's page was last written by.  Once that record is
 * flushed (one in every SEQ_LOG_VALS draws writes one) this costs nothing.
 */
static void
flush_fence_sequence(void)
{
	Oid			seq = get_relname_relid("fence_seq",
										get_namespace_oid("worklist", false));
	Relation	rel;
	Buffer		buf;
	XLogRecPtr	lsn;

	if (!OidIsValid(seq))
		elog(ERROR, "sequence worklist.fence_seq does not exist");
	rel = relation_open(seq, AccessShareLock);
	buf = ReadBuffer(rel, 0);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	relation_close(rel, AccessShareLock);
	XLogFlush(lsn);
}

/*
 * The claim: ok says the next value of the sequence is above every stored
 * fence (when not, nothing is minted and the caller takes the slow path).
 * The lease is taken when nobody holds it, the holder renews it, or it has
 * expired (expires_at <= now); a claim that loses leaves no trace but a
 * skipped sequence value.
 */
static WlStmt claim_stmt WL_KEPT = {
	"WITH g AS MATERIALIZED (SELECT " FENCE_SEQ_AHEAD " AS ok),"
	" mk AS ("
	"  INSERT INTO worklist.run (tenant, project, session, run)"
	"  VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING),"
	" got AS ("
	"  INSERT INTO worklist.run_claim AS l"
	"   (tenant, project, session, run, holder, fence, expires_at)"
	"  SELECT $1, $2, $3, $4, $5,"
	"         pg_catalog.nextval('worklist.fence_seq'::pg_catalog.regclass), $7"
	"    FROM g WHERE g.ok"
	"  ON CONFLICT (tenant, project, session, run) DO UPDATE"
	"   SET holder = EXCLUDED.holder, fence = EXCLUDED.fence,"
	"       expires_at = EXCLUDED.expires_at, released = false,"
	"       reclaimed = (l.holder OPERATOR(pg_catalog.<>) EXCLUDED.holder"
	"                    AND NOT l.released)"
	"   WHERE l.holder OPERATOR(pg_catalog.=) EXCLUDED.holder"
	"      OR l.expires_at OPERATOR(pg_catalog.<=) $6"
	"  RETURNING l.holder, l.fence, l.expires_at, l.reclaimed)"
	" SELECT g.ok,"
	"        CASE WHEN got.fence IS NOT NULL THEN"
	"          ROW(got.holder, got.fence, got.expires_at)::worklist.run_lease END,"
	"        got.reclaimed"
	"   FROM g LEFT JOIN got ON true",
	7, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID,
	TIMESTAMPTZOID}, .name = "run.claim"
};

TimestampTz
wl_run_lease_end(Interval *ttl, TimestampTz now)
{
	TimestampTz expires_at;

	if (wl_interval_usec(ttl) <= 0)
		wl_error_bad_arg("ttl", "must be positive");
	wl_check_interval_bound(PointerGetDatum(ttl), "ttl");
	wl_check_finite(now, "now");
	if (TIMESTAMP_NOT_FINITE(wl_time_add(now, ttl)))
		wl_error_bad_arg("ttl", "added to \"now\" must not reach past the last instant a timestamp can hold");
	expires_at = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_pl_interval,
														 TimestampTzGetDatum(now),
														 IntervalPGetDatum(ttl)));
	/* a ttl of mixed signs ('1 month -30 days') may still end in the past */
	if (expires_at <= now)
		wl_error_bad_arg("ttl", "must be positive");
	return expires_at;
}

Datum
wl_run_mint(Datum *values, bool *reclaimed)
{
	/*
	 * A run claimed on a 0.4 schema is queued (see claim_next_run); taken
	 * after the lease, in the order every writer of a run locks, and a
	 * write only the first time.
	 */
	static WlStmt queue_stmt WL_KEPT = {
		"UPDATE worklist.run r SET queued = true"
		" WHERE" RUN_KEY("r") " AND r.queued IS NOT TRUE",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run.claim.queue"
	};
	Datum		lease = (Datum) 0;
	bool		lease_null = true;

	*reclaimed = false;
	for (int attempt = 0;; attempt++)
	{
		bool		isnull;
		bool		ok;

		if (wl_exec(&claim_stmt, values, NULL, false, 0) != 1)
			elog(ERROR, "claim statement returned no row");
		ok = DatumGetBool(wl_result_datum(0, 1, &isnull));
		if (ok)
		{
			Datum		r = wl_result_datum(0, 3, &isnull);

			*reclaimed = !isnull && DatumGetBool(r);
			lease = wl_result_datum(0, 2, &lease_null);
			break;
		}
		if (attempt >= 2)
			elog(ERROR, "could not advance worklist.fence_seq past the stored fences");
		mint_guard_slow_path();
	}
	if (lease_null)
		return (Datum) 0;
	if (wl_schema_current())
		(void) wl_exec(&queue_stmt, values, NULL, false, 0);
	return lease;
}

void
wl_run_claimed(text *tenant, bool reclaimed)
{
	flush_fence_sequence();

	/*
	 * A claim lost in a crash after its lease was handed out would let its
	 * fence be minted again for somebody else while the first holder still
	 * writes with it.  So where synchronous_commit is off, the claim's
	 * transaction flushes its commit record all the same.  (Otherwise its
	 * commit flushes anyway; not forcing it then spares standbys the
	 * control-file update that replaying a forced commit costs.)
	 */
	if (synchronous_commit == SYNCHRONOUS_COMMIT_OFF)
		ForceSyncCommit();

	if (reclaimed)
		wl_count(WL_COUNT_LEASE_RECLAIMS);
	wl_change_record_text(tenant, WL_CHANGE_RUN_CLAIMED);
}

/*
 * worklist.claim_run(project, session, run, holder, ttl, now)
 *		RETURNS worklist.run_lease
 *
 * A concluded run is refused (WL008) whether or not the lease was free:
 * the run row is locked after the lease, so a conclusion that commits
 * first is seen, and one that comes second waits for the claim.
 */
Datum
wl_claim_run(PG_FUNCTION_ARGS)
{
	RunAddress addr;
	text	   *holder;
	Interval   *ttl;
	TimestampTz now;
	WlSpi		spi;
	Datum		values[7];
	Datum		lease;
	bool		reclaimed = false;

	run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES, WL_ACTOR(3, "holder"), WL_CLOCK(5, "now")));
	holder = wl_arg_ident(fcinfo, 3, "holder");
	ttl = DatumGetIntervalP(wl_arg_required(fcinfo, 4, "ttl"));
	now = wl_arg_time(fcinfo, 5, "now");

	address_values(&addr, values);
	values[4] = PointerGetDatum(holder);
	values[5] = TimestampTzGetDatum(now);
	values[6] = TimestampTzGetDatum(wl_run_lease_end(ttl, now));

	wl_spi_begin(&spi);
	lease = wl_run_mint(values, &reclaimed);
	(void) wl_run_refuse_concluded(values);
	wl_spi_end(&spi);

	if (lease == (Datum) 0)
		PG_RETURN_NULL();
	wl_run_claimed(addr.tenant, reclaimed);
	PG_RETURN_DATUM(lease);
}

/*
 * worklist.release_run(project, session, run, fence, now) RETURNS void
 *
 * Ends the lease now when fence is its current fence and it is held;
 * otherwise does nothing.  A caller bound as a member releases only a
 * lease its own role holds: fences are not secrets (they come from one
 * sequence), so another member's lease is left alone, as a stale fence
 * would be.
 */
Datum
wl_release_run(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.run_claim l SET expires_at = $6, released = true"
		" WHERE" RUN_KEY("l")
		"   AND l.fence OPERATOR(pg_catalog.=) $5"
		"   AND NOT l.released"
		"   AND l.expires_at OPERATOR(pg_catalog.>) $6"
		"   AND ($7 IS NULL OR l.holder OPERATOR(pg_catalog.=) $7)",
		7, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, TIMESTAMPTZOID, TEXTOID},
		.name = "run.release"
	};
	RunAddress addr;
	WlSpi		spi;
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', 'n'};
	uint64		released;

	run_address_as(fcinfo, &addr, WL_TRUST(WL_WRITES, WL_CLOCK(4, "now")));
	address_values(&addr, values);
	values[4] = wl_arg_required(fcinfo, 3, "fence");
	values[5] = TimestampTzGetDatum(wl_check_finite(wl_arg_time(fcinfo, 4, "now"), "now"));
	if (wl_caller_binding == WL_BINDING_MEMBER)
	{
		values[6] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));
		nulls[6] = ' ';
	}

	wl_spi_begin(&spi);
	released = wl_exec(&stmt, values, nulls, false, 0);
	wl_spi_end(&spi);

	if (released > 0)
		wl_change_record_text(addr.tenant, WL_CHANGE_RUN_RELEASED);
	PG_RETURN_VOID();
}

/*
 * The purge of old runs (declared in sweep.h; run by retention.c): up to
 * lim of the tenant's runs whose newest checkpoint was written at or before
 * before, oldest first, with their checkpoints, parks, pending writes,
 * values and lease, unless the lease is live at now.  A run's checkpoints and lease are locked in the order
 * fenced writes take them (lease, then run) or not at all (SKIP LOCKED), so
 * the purge never deadlocks with a writer; the fence sequence is not
 * touched, so fences never rewind.  Returns how many runs went.
 */
uint64
wl_run_purge(text *tenant, TimestampTz before, TimestampTz now, int32 lim)
{
#define PURGE_PICK(keep) \
		"SELECT r.project, r.session, r.run FROM worklist.run r" \
		" WHERE r.tenant OPERATOR(pg_catalog.=) $1 AND r.listed" \
		"   AND r.latest_checkpoint_at OPERATOR(pg_catalog.<=) $2" keep \
		" ORDER BY r.latest_checkpoint_at LIMIT $3" \
		" FOR UPDATE OF r SKIP LOCKED"
	/* (0.4) a run whose current park is outstanding at now ($4) stays */
	static WlStmt pick WL_KEPT = {
		PURGE_PICK(" AND NOT (r.park_checkpoint_id IS NOT NULL AND r.park_resolved_at IS NULL"
				   "  AND (r.park_deadline IS NULL OR r.park_deadline OPERATOR(pg_catalog.>) $4))"),
		4, {TEXTOID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID},
		.generic = true, .name = "retention.purge.runs.pick",
		.sql03 = PURGE_PICK("")
	};

	/*
	 * A run goes when it has no lease at all, or a lease this statement
	 * could lock (a lease somebody holds locked -- a claim, a fenced write
	 * -- is passed over) that has expired.
	 */
#define PURGE_RUN(parks) \
		"WITH leased AS (" \
		"  SELECT l.expires_at FROM worklist.run_claim l WHERE" RUN_KEY("l") \
		"   FOR UPDATE OF l SKIP LOCKED)," \
		" doomed AS (" \
		"  SELECT WHERE NOT EXISTS (SELECT FROM worklist.run_claim l WHERE" RUN_KEY("l") ")" \
		"            OR EXISTS (SELECT FROM leased x WHERE x.expires_at OPERATOR(pg_catalog.<=) $5))," \
		" checkpoints AS (" \
		"  DELETE FROM worklist.run_checkpoint k WHERE" RUN_KEY("k") \
		"   AND EXISTS (SELECT FROM doomed))," \
		" leases AS (" \
		"  DELETE FROM worklist.run_claim l WHERE" RUN_KEY("l") \
		"   AND EXISTS (SELECT FROM doomed))" parks \
		" DELETE FROM worklist.run r WHERE" RUN_KEY("r") \
		" AND EXISTS (SELECT FROM doomed)"
	static WlStmt purge WL_KEPT = {
		PURGE_RUN(", parks AS ("
				  "  DELETE FROM worklist.run_park_task w WHERE" RUN_KEY("w")
				  "   AND EXISTS (SELECT FROM doomed)),"
				  " writes AS ("
				  "  DELETE FROM worklist.run_pending_write w WHERE" RUN_KEY("w")
				  "   AND EXISTS (SELECT FROM doomed)),"
				  " vals AS ("
				  "  DELETE FROM worklist.run_channel_value v WHERE" RUN_KEY("v")
				  "   AND EXISTS (SELECT FROM doomed))"),
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.generic = true, .name = "retention.purge.runs.delete",
		.sql03 = PURGE_RUN("")
	};
	Datum		values[5];
	uint64		n;
	uint64		purged = 0;
	char	  **projects;
	char	  **sessions;
	char	  **runs;

	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(before);
	values[2] = Int32GetDatum(lim);
	values[3] = TimestampTzGetDatum(now);
	n = wl_exec(&pick, values, NULL, false, 0);
	projects = wl_result_column(n, 1);
	sessions = wl_result_column(n, 2);
	runs = wl_result_column(n, 3);
	values[4] = TimestampTzGetDatum(now);
	for (uint64 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		values[1] = CStringGetTextDatum(projects[i]);
		values[2] = CStringGetTextDatum(sessions[i]);
		values[3] = CStringGetTextDatum(runs[i]);
		if (wl_exec(&purge, values, NULL, false, 0) > 0)
		{
			purged++;
			wl_change_record_text(tenant, WL_CHANGE_RUN_PURGED);
		}
	}
	return purged;
}

/*
 * Move the fence sequence past the highest stored fence (declared in
 * run.h), for a verb other than claim_run that mints a fence and found the
 * sequence behind: see mint_guard_slow_path().
 */
void
wl_run_fence_catch_up(void)
{
	mint_guard_slow_path();
}
