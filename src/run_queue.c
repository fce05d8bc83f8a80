/*-------------------------------------------------------------------------
 *
 * run_queue.c
 *	  Runs as a queue of work (doc/reference.md, section 6): park_run parks
 *	  a run on tasks and gives its lease up, claim_next_run hands the next
 *	  claimable run to a worker, conclude_run finishes a run.
 *
 * Locks, in the order every path takes them (settle.c):
 *
 *	 tasks (in wl_sort_ids order)  <  a run's lease  <  a run's row  <
 *	 its checkpoints
 *
 * park_run locks the tasks it awaits FOR SHARE before anything of its run
 * (wl_park_lock_tasks); conclude_run locks the tasks of the run's current
 * park, which it reads first without a lock, for the update that
 * withdraws them (wl_lock_tasks).  Both then lock the lease FOR NO KEY
 * UPDATE (they end it) and the run row, and judge the conclusion and the
 * fence under those locks.  The refusals come in the documented order
 * (WL008, then the fence, then WL001 for park_run), so park_run judges
 * the first two once on what it reads before locking the tasks, and again
 * under the locks.
 *
 * claim_next_run never waits on another claimer.  It reads candidates in
 * batches, oldest latest_checkpoint_at first, from two partial indexes:
 * runs that are ready (queued, listed, not concluded, not parked or parked
 * and resolved) and runs parked with a deadline, of which it reads only
 * those whose deadline has passed.  A run parked without a deadline, a
 * concluded run and a run from before 0.4 are in neither index, so the
 * cost follows the candidates passed over, each one a run somebody holds a
 * live lease on (or locked).  For each candidate it locks, SKIP LOCKED,
 * the lease (when the run has one; a lease somebody else has locked is
 * passed over) and then the run row, judged claimable again under the
 * lock, and then claims as claim_run does.  A run without a lease row
 * has nothing to lock but its row; a claim_run that inserts the first
 * lease meanwhile makes the claim wait for it and then lose, which
 * leaves the candidate to the next one.
 *
 *-------------------------------------------------------------------------
 */
#include "run.h"
#include "change.h"
#include "settle.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_park_run);
PG_FUNCTION_INFO_V1(wl_claim_next_run);
PG_FUNCTION_INFO_V1(wl_conclude_run);

#define EQ " OPERATOR(pg_catalog.=) "

/*
 * Which runs claim_next_run considers; the partial indexes of
 * sql/parts/35_park.sql repeat these predicates word for word.
 */
#define QUEUED(a) a ".queued AND " a ".listed AND " a ".concluded_at IS NULL"
#define READY(a) QUEUED(a) " AND (" a ".park_checkpoint_id IS NULL" \
	" OR " a ".park_resolved_at IS NOT NULL)"
#define PARK_DUE(a) QUEUED(a) " AND " a ".park_checkpoint_id IS NOT NULL" \
	" AND " a ".park_resolved_at IS NULL AND " a ".park_deadline IS NOT NULL"

/* The lease of a run, as locked or read. */
typedef struct Lease
{
	bool		exists;
	char	   *holder;
	int64		fence;
	TimestampTz expires_at;
} Lease;

static void
lease_from_result(Lease *l)
{
	bool		isnull;

	l->exists = SPI_processed > 0;
	if (!l->exists)
		return;
	l->holder = wl_result_cstring(0, 1);
	l->fence = DatumGetInt64(wl_result_datum(0, 2, &isnull));
	l->expires_at = DatumGetTimestampTz(wl_result_datum(0, 3, &isnull));
}

/* Lock the run's lease for an update that ends it. */
static void
lock_lease(Datum *address, Lease *l)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT l.holder, l.fence, l.expires_at FROM worklist.run_claim l"
		" WHERE" RUN_KEY("l") " FOR NO KEY UPDATE",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run_queue.lock_lease"
	};

	(void) wl_exec(&stmt, address, NULL, false, 0);
	lease_from_result(l);
}

/*
 * The fence rule of park_run and conclude_run.  fenced: the fence must be
 * the run's current one (WL007), and a member must hold it itself
 * (42501: fences are not secrets).  Unfenced (never a member's: refused
 * before): refused (WL007) while somebody holds an unexpired lease.
 */
static void
check_fence(Datum *address, const Lease *l, bool fenced, int64 fence,
			TimestampTz now, const char *caller)
{
	char	   *run = TextDatumGetCString(address[3]);

	if (fenced)
	{
		if (!l->exists || l->fence != fence)
		{
			wl_count(WL_COUNT_STALE_FENCES);
			wl_error_stale_fence(run, fence, l->exists, l->exists ? l->fence : 0);
		}
		if (caller != NULL && strcmp(caller, l->holder) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("fence " INT64_FORMAT " of run \"%s\" is not held by the caller",
							fence, run),
					 errdetail("It was issued to \"%s\"; a member binding acts only on a run its own role holds.",
							   l->holder)));
	}
	else if (l->exists && l->expires_at > now)
		wl_error_run_held(run, l->holder, l->fence, l->expires_at);
}

/*
 * The caller's role name when it is bound as a member (who must hold the
 * runs it parks or concludes, and may not pass a NULL fence: 42501), else
 * NULL.  Called after the trust checks, before SPI begins.
 */
static char *
member_caller(FunctionCallInfo fcinfo, int fence_argno, const char *verb)
{
	if (wl_caller_binding != WL_BINDING_MEMBER)
		return NULL;
	if (PG_ARGISNULL(fence_argno))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("argument \"fence\" must not be null for a member"),
				 errdetail("A member binding %s only a run it holds, with the fence of its lease.",
						   verb)));
	return GetUserNameFromId(GetUserId(), false);
}

/* End the run's unexpired lease at now (the lease is locked); true if it did. */
static bool
end_lease(Datum *address, TimestampTz now)
{
	static WlStmt stmt WL_KEPT = {
		"UPDATE worklist.run_claim l SET expires_at = $5, released = true"
		" WHERE" RUN_KEY("l") " AND l.expires_at OPERATOR(pg_catalog.>) $5",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.name = "run_queue.end_lease"
	};
	Datum		values[5];

	memcpy(values, address, sizeof(Datum) * 4);
	values[4] = TimestampTzGetDatum(now);
	return wl_exec(&stmt, values, NULL, false, 0) > 0;
}

/*
 * worklist.park_run(project, session, run, checkpoint_id, tasks, fence,
 *		body, park_request, park_deadline, now, metadata,
 *		parent_checkpoint_id) RETURNS worklist.checkpoint
 */
Datum
wl_park_run(PG_FUNCTION_ARGS)
{
	/* what the refusals before the tasks are judged on, unlocked */
	static WlStmt peek_stmt WL_KEPT = {
		"SELECT r.concluded_at, l.holder, l.fence, l.expires_at"
		" FROM (SELECT) one"
		" LEFT JOIN worklist.run r ON" RUN_KEY("r")
		" LEFT JOIN worklist.run_claim l ON" RUN_KEY("l"),
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run_queue.park.peek"
	};
	text	   *tenant;
	char	   *caller;
	Datum		values[WL_RUN_WRITE_NARGS];
	char		nulls[WL_RUN_WRITE_NARGS];
	text	   *checkpoint_id;
	ArrayType  *tasks;
	ArrayType  *pending;
	bool		fenced;
	int64		fence = 0;
	TimestampTz now;
	bool		resolved;
	bool		released;
	bool		exists;
	Lease		lease;
	WlSpi		spi;
	Datum		result;
	bool		isnull;

	tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_CLOCK(9, "now")));
	caller = member_caller(fcinfo, 5, "parks");
	memset(nulls, ' ', sizeof(nulls));
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(wl_arg_ident(fcinfo, 0, "project"));
	values[2] = PointerGetDatum(wl_arg_ident(fcinfo, 1, "session"));
	values[3] = PointerGetDatum(wl_arg_ident(fcinfo, 2, "run"));
	checkpoint_id = wl_arg_ident(fcinfo, 3, "checkpoint_id");
	tasks = wl_arg_idents(fcinfo, 4, "tasks", false);
	fenced = !PG_ARGISNULL(5);
	if (fenced)
		fence = PG_GETARG_INT64(5);
	values[6] = wl_arg_document(fcinfo, 6, "body");
	/* NULL means the default, as a NULL metadata means {} */
	values[9] = PointerGetDatum(PG_ARGISNULL(7) ? cstring_to_text("tasks")
								: wl_arg_ident(fcinfo, 7, "park_request"));
	values[11] = PG_GETARG_DATUM(8);
	nulls[11] = PG_ARGISNULL(8) ? 'n' : ' ';
	now = wl_check_finite(wl_arg_time(fcinfo, 9, "now"), "now");
	values[13] = wl_arg_metadata(fcinfo, 10, "metadata");
	values[14] = PointerGetDatum(wl_arg_ident_opt(fcinfo, 11, "parent_checkpoint_id"));
	nulls[14] = values[14] ? ' ' : 'n';

	wl_spi_begin(&spi);

	/* WL008, then the fence, as they stand before anything is locked */
	if (wl_exec(&peek_stmt, values, NULL, false, 0) != 1)
		elog(ERROR, "park_run: no row from its first look");
	{
		Datum		at = wl_result_datum(0, 1, &isnull);

		if (!isnull)
			wl_error_run_concluded(TextDatumGetCString(values[3]),
								   DatumGetTimestampTz(at));
		(void) wl_result_datum(0, 3, &isnull);
		lease.exists = !isnull;
		if (lease.exists)
		{
			lease.holder = wl_result_cstring(0, 2);
			lease.fence = DatumGetInt64(wl_result_datum(0, 3, &isnull));
			lease.expires_at = DatumGetTimestampTz(wl_result_datum(0, 4, &isnull));
		}
		check_fence(values, &lease, fenced, fence, now, caller);
	}

	/* then WL001; the tasks stay locked until commit, so none settles */
	pending = wl_park_lock_tasks(tenant, tasks);
	resolved = ArrayGetNItems(ARR_NDIM(pending), ARR_DIMS(pending)) == 0;

	/* and both again, under the locks */
	lock_lease(values, &lease);
	exists = wl_run_refuse_concluded(values);
	check_fence(values, &lease, fenced, fence, now, caller);
	if (!exists)
	{
		/* made now, or by a concurrent first write: judged again */
		wl_run_ensure(values);
		(void) wl_run_refuse_concluded(values);
	}

	values[4] = PointerGetDatum(checkpoint_id);
	values[5] = TimestampTzGetDatum(now);		/* created_at */
	nulls[7] = 'n';				/* parent_run */
	nulls[8] = 'n';				/* run_created_at */
	values[10] = TimestampTzGetDatum(now);		/* parked_at */
	values[12] = TimestampTzGetDatum(now);		/* park_resolved_at */
	nulls[12] = resolved ? ' ' : 'n';
	values[15] = PointerGetDatum(tasks);
	wl_run_write(values, nulls);
	wl_park_record(values, checkpoint_id, tasks, resolved);

	/* the lease is given up as release_run gives it up */
	released = fenced && end_lease(values, now);

	result = wl_run_read_checkpoint(values, &isnull);
	if (isnull)
		elog(ERROR, "park_run: checkpoint vanished while its run was locked");
	wl_spi_end(&spi);

	wl_change_record_text(tenant, WL_CHANGE_RUN_CHECKPOINTED);
	wl_change_record_text(tenant, WL_CHANGE_RUN_PARKED);
	if (released)
		wl_change_record_text(tenant, WL_CHANGE_RUN_RELEASED);
	if (resolved)
		wl_change_record_text(tenant, WL_CHANGE_RUN_RESUMED);
	PG_RETURN_DATUM(result);
}

/*
 * worklist.conclude_run(project, session, run, fence, now) RETURNS integer
 *
 * Returns how many tasks of the run's current park it withdrew.
 */
Datum
wl_conclude_run(PG_FUNCTION_ARGS)
{
	/* the tasks of the current park of a run not concluded */
	static WlStmt park_stmt WL_KEPT = {
		"SELECT c.park_tasks FROM worklist.run r"
		" JOIN worklist.run_checkpoint c ON" RUN_KEY("c")
		"  AND c.checkpoint_id" EQ "r.park_checkpoint_id"
		" WHERE" RUN_KEY("r") " AND r.concluded_at IS NULL"
		"   AND c.park_tasks IS NOT NULL",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run_queue.conclude.park"
	};
	static WlStmt conclude_stmt WL_KEPT = {
		"UPDATE worklist.run r SET concluded_at = $5, queued = true"
		" WHERE" RUN_KEY("r"),
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.name = "run_queue.conclude"
	};
	text	   *tenant;
	char	   *caller;
	Datum		values[5];
	bool		fenced;
	int64		fence = 0;
	TimestampTz now;
	Lease		lease;
	WlSpi		spi;
	bool		isnull;
	Datum		tasks;
	bool		concluded;
	bool		exists;
	int32		withdrawn = 0;

	tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_CLOCK(4, "now")));
	caller = member_caller(fcinfo, 3, "concludes");
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(wl_arg_ident(fcinfo, 0, "project"));
	values[2] = PointerGetDatum(wl_arg_ident(fcinfo, 1, "session"));
	values[3] = PointerGetDatum(wl_arg_ident(fcinfo, 2, "run"));
	fenced = !PG_ARGISNULL(3);
	if (fenced)
		fence = PG_GETARG_INT64(3);
	now = wl_check_finite(wl_arg_time(fcinfo, 4, "now"), "now");
	values[4] = TimestampTzGetDatum(now);

	wl_spi_begin(&spi);

	/*
	 * The tasks first, as every settlement locks: those of the current
	 * park as it stands now.  Under the run's locks below nobody changes
	 * the park; should one have been made in between (an unfenced write,
	 * as nobody held the run), its tasks are locked by the withdrawal,
	 * after the run -- a deadlock then is the worst that can happen.
	 */
	if (wl_exec(&park_stmt, values, NULL, false, 0) > 0)
	{
		tasks = wl_result_datum(0, 1, &isnull);
		wl_lock_tasks(tenant, DatumGetArrayTypeP(tasks));
	}

	lock_lease(values, &lease);
	exists = wl_run_lock_row(values, &concluded);
	if (concluded)
	{
		/* concluded already: nothing changes, whatever the fence */
		wl_spi_end(&spi);
		PG_RETURN_INT32(0);
	}
	check_fence(values, &lease, fenced, fence, now, caller);
	if (!exists)
	{
		/* made now, or by a concurrent first write: judged again */
		wl_run_ensure(values);
		(void) wl_run_lock_row(values, &concluded);
		if (concluded)
		{
			wl_spi_end(&spi);
			PG_RETURN_INT32(0);
		}
	}
	tasks = (Datum) 0;
	if (wl_exec(&park_stmt, values, NULL, false, 0) > 0)
		tasks = wl_result_datum(0, 1, &isnull);
	(void) wl_exec(&conclude_stmt, values, NULL, false, 0);
	(void) end_lease(values, now);
	if (tasks != (Datum) 0)
		withdrawn = wl_withdraw_tasks(tenant, DatumGetArrayTypeP(tasks), NULL, now);
	wl_spi_end(&spi);

	wl_change_record_text(tenant, WL_CHANGE_RUN_CONCLUDED);
	PG_RETURN_INT32(withdrawn);
}

/*
 * Candidates of claim_next_run, lim ($4) at most, in the order it offers
 * them: those ready, and those whose park's deadline passed at now ($3),
 * each without an unexpired lease, oldest latest_checkpoint_at first,
 * then session, run.  scope narrows to session $5; after starts past the
 * candidate ($6 latest_checkpoint_at, $7 session, $8 run) a batch ended
 * with.
 */
#define CANDIDATES_OF(pred, scope, after) \
	"(SELECT r.session, r.run, r.latest_checkpoint_at FROM worklist.run r" \
	"  WHERE r.tenant" EQ "$1 AND r.project" EQ "$2" scope " AND " pred after \
	"    AND NOT EXISTS (SELECT FROM worklist.run_claim l" \
	"     WHERE l.tenant" EQ "r.tenant AND l.project" EQ "r.project" \
	"       AND l.session" EQ "r.session AND l.run" EQ "r.run" \
	"       AND l.expires_at OPERATOR(pg_catalog.>) $3)" \
	"  ORDER BY r.latest_checkpoint_at, r.session, r.run LIMIT $4)"
#define CANDIDATES(scope, after) \
	"SELECT x.session, x.run, x.latest_checkpoint_at FROM (" \
	CANDIDATES_OF(READY("r"), scope, after) " UNION ALL " \
	CANDIDATES_OF(PARK_DUE("r") " AND r.park_deadline OPERATOR(pg_catalog.<=) $3", scope, after) \
	") x ORDER BY x.latest_checkpoint_at, x.session, x.run LIMIT $4"
#define IN_SESSION " AND r.session" EQ "$5"
#define AFTER \
	" AND ROW(r.latest_checkpoint_at, r.session, r.run) OPERATOR(pg_catalog.>) ROW($6, $7, $8)"
#define AFTER_IN_SESSION \
	" AND ROW(r.latest_checkpoint_at, r.run) OPERATOR(pg_catalog.>) ROW($6, $8)"
#define CANDIDATE_ARGS \
	8, {TEXTOID, TEXTOID, TIMESTAMPTZOID, INT4OID, TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID}

/* [scope: 0 project, 1 session][0 first batch, 1 a later one] */
static WlStmt candidate_stmts[2][2] WL_KEPT = {
	{
		{CANDIDATES("", ""), CANDIDATE_ARGS, .name = "run_queue.next.candidates"},
		{CANDIDATES("", AFTER), CANDIDATE_ARGS, .name = "run_queue.next.candidates.after"}
	},
	{
		{CANDIDATES(IN_SESSION, ""), CANDIDATE_ARGS, .name = "run_queue.next.candidates.session"},
		{CANDIDATES(IN_SESSION, AFTER_IN_SESSION), CANDIDATE_ARGS,
		.name = "run_queue.next.candidates.session.after"}
	}
};

/* Batches of candidates grow from the first to the last size. */
#define FIRST_BATCH 8
#define LAST_BATCH 128

/*
 * Try to take candidate (address; now, expires_at and holder in
 * values[4..6]) without waiting on anybody: lock its lease and run row
 * SKIP LOCKED, judge it claimable again, claim it.  The lease datum, or
 * (Datum) 0 when it was passed over.
 */
static Datum
try_candidate(Datum *values, bool *reclaimed)
{
	static WlStmt lease_stmt WL_KEPT = {
		"SELECT l.expires_at OPERATOR(pg_catalog.<=) $5 FROM worklist.run_claim l"
		" WHERE" RUN_KEY("l") " FOR NO KEY UPDATE SKIP LOCKED",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.name = "run_queue.next.lock_lease"
	};
	static WlStmt leased_stmt WL_KEPT = {
		"SELECT EXISTS (SELECT FROM worklist.run_claim l WHERE" RUN_KEY("l") ")",
		4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}, .name = "run_queue.next.leased"
	};
	static WlStmt run_stmt WL_KEPT = {
		"SELECT FROM worklist.run r WHERE" RUN_KEY("r") " AND " QUEUED("r")
		"  AND (r.park_checkpoint_id IS NULL OR r.park_resolved_at IS NOT NULL"
		"       OR r.park_deadline OPERATOR(pg_catalog.<=) $5)"
		" FOR NO KEY UPDATE SKIP LOCKED",
		5, {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID},
		.name = "run_queue.next.lock_run"
	};
	Datum		probe[5];
	Datum		claim[7];
	bool		isnull;

	memcpy(probe, values, sizeof(Datum) * 4);
	probe[4] = values[4];		/* now */
	if (wl_exec(&lease_stmt, probe, NULL, false, 0) == 1)
	{
		if (!DatumGetBool(wl_result_datum(0, 1, &isnull)))
			return (Datum) 0;	/* claimed meanwhile */
	}
	else
	{
		(void) wl_exec(&leased_stmt, probe, NULL, false, 0);
		if (DatumGetBool(wl_result_datum(0, 1, &isnull)))
			return (Datum) 0;	/* its lease is locked by somebody */
	}
	if (wl_exec(&run_stmt, probe, NULL, false, 0) != 1)
		return (Datum) 0;		/* locked, or no longer claimable */

	memcpy(claim, values, sizeof(Datum) * 4);
	claim[4] = values[6];		/* holder */
	claim[5] = values[4];		/* now */
	claim[6] = values[5];		/* expires_at */
	return wl_run_mint(claim, reclaimed);
}

/*
 * worklist.claim_next_run(project, holder, ttl, session, now)
 *		RETURNS worklist.claimed_run
 */
Datum
wl_claim_next_run(PG_FUNCTION_ARGS)
{
	text	   *tenant;
	text	   *project;
	text	   *holder;
	text	   *session;
	TimestampTz now;
	TimestampTz expires_at;
	Datum		cand[8];
	char		cnulls[8] = {' ', ' ', ' ', ' ', ' ', 'n', 'n', 'n'};
	int			scope;
	int32		lim = FIRST_BATCH;
	bool		after = false;
	Datum		lease = (Datum) 0;
	Datum		try[7];
	bool		reclaimed = false;
	WlSpi		spi;
	TupleDesc	tupdesc;
	Datum		out[6];
	bool		outnulls[6] = {false, false, false, false, false, false};

	tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_ACTOR(1, "holder"),
												 WL_CLOCK(4, "now")));
	project = wl_arg_ident(fcinfo, 0, "project");
	holder = wl_arg_ident(fcinfo, 1, "holder");
	now = wl_arg_time(fcinfo, 4, "now");
	expires_at = wl_run_lease_end(DatumGetIntervalP(wl_arg_required(fcinfo, 2, "ttl")), now);
	session = wl_arg_ident_opt(fcinfo, 3, "session");
	scope = session ? 1 : 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "claim_next_run must return a composite type");

	cand[0] = PointerGetDatum(tenant);
	cand[1] = PointerGetDatum(project);
	cand[2] = TimestampTzGetDatum(now);
	if (session)
	{
		cand[4] = PointerGetDatum(session);
		cnulls[4] = ' ';
	}
	try[0] = PointerGetDatum(tenant);
	try[1] = PointerGetDatum(project);
	try[4] = TimestampTzGetDatum(now);
	try[5] = TimestampTzGetDatum(expires_at);
	try[6] = PointerGetDatum(holder);

	wl_spi_begin(&spi);
	while (lease == (Datum) 0)
	{
		uint64		n;
		char	  **sessions;
		char	  **runs;
		bool		isnull;

		cand[3] = Int32GetDatum(lim);
		n = wl_exec(&candidate_stmts[scope][after ? 1 : 0], cand, cnulls, false, 0);
		if (n == 0)
			break;
		sessions = wl_result_column(n, 1);
		runs = wl_result_column(n, 2);
		cand[5] = wl_result_datum(n - 1, 3, &isnull);
		for (uint64 i = 0; i < n && lease == (Datum) 0; i++)
		{
			CHECK_FOR_INTERRUPTS();
			try[2] = CStringGetTextDatum(sessions[i]);
			try[3] = CStringGetTextDatum(runs[i]);
			lease = try_candidate(try, &reclaimed);
		}
		if (lease != (Datum) 0 || n < (uint64) lim)
			break;
		/* all passed over: the next batch starts after the last of these */
		cand[6] = CStringGetTextDatum(sessions[n - 1]);
		cand[7] = CStringGetTextDatum(runs[n - 1]);
		cnulls[5] = cnulls[6] = cnulls[7] = ' ';
		after = true;
		lim = Min(lim * 2, LAST_BATCH);
	}
	wl_spi_end(&spi);

	if (lease == (Datum) 0)
		PG_RETURN_NULL();
	wl_run_claimed(tenant, reclaimed);

	out[0] = PointerGetDatum(project);
	out[1] = try[2];
	out[2] = try[3];
	out[3] = PointerGetDatum(holder);
	out[4] = GetAttributeByNum(DatumGetHeapTupleHeader(lease), 2, &outnulls[4]);
	out[5] = TimestampTzGetDatum(expires_at);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  out, outnulls)));
}
