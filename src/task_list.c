/*-------------------------------------------------------------------------
 *
 * task_list.c
 *	  The reads of tasks: one task, the queue, a case's tasks, a holder's
 *	  inbox, every claim (the operator's view), the pending count, the
 *	  overdue tasks and a task's history (doc/reference.md, section 4).
 *
 * Each reads a partial index on pending rows (or the task's key), with a
 * generic plan, in the snapshot of the caller's statement.  queue starts
 * where claim_next does, at the tenant's hint (hint.c).
 *
 *-------------------------------------------------------------------------
 */
#include "hint.h"
#include "task.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_task);
PG_FUNCTION_INFO_V1(wl_queue);
PG_FUNCTION_INFO_V1(wl_for_case);
PG_FUNCTION_INFO_V1(wl_held);
PG_FUNCTION_INFO_V1(wl_claims);
PG_FUNCTION_INFO_V1(wl_open_count);
PG_FUNCTION_INFO_V1(wl_overdue);
PG_FUNCTION_INFO_V1(wl_task_history);

/* worklist.task(id) RETURNS task: one task, or NULL */
Datum
wl_task(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t WHERE " KEY("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.get"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	Datum		values[2];
	Datum		row = (Datum) 0;
	bool		isnull = true;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, true, 0) == 1)
		row = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(row);
}

/* worklist.queue(roles, lim, actor) RETURNS SETOF task */
Datum
wl_queue(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
#define QUEUE_SQL(claimable) \
		"SELECT t FROM worklist.task t" \
		" WHERE t.tenant" EQ "$1 AND " claimable("t") \
		" AND " FROM_KEY("t", "$5", "$6", "$7") \
		" AND " AUDIENCE("t", "$2") \
		" AND ($3 IS NULL OR " NOT_EXCLUDED("t", "$3") ")" \
		" ORDER BY " QUEUE_KEY("t") " LIMIT $4"
		QUEUE_SQL(CLAIMABLE),
		7, {TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT8OID, TIMESTAMPTZOID, TEXTOID},
		.generic = true, .name = "task.queue",
		.sql03 = QUEUE_SQL(CLAIMABLE03)
#undef QUEUE_SQL
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_ROLES(0, "roles")));
	ArrayType  *roles = wl_arg_idents(fcinfo, 0, "roles", true);
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	text	   *actor = wl_arg_ident_opt(fcinfo, 2, "actor");
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	WlQueueKey	hint;
	uint64		version;
	uint64		raises;
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	/* an empty roles array meets no audience */
	if (ArrayGetNItems(ARR_NDIM(roles), ARR_DIMS(roles)) == 0)
		return (Datum) 0;

	/*
	 * Nothing before the hint is claimable -- in a snapshot as recent as
	 * READ COMMITTED takes; an older transaction snapshot reads from the
	 * head.
	 */
	if (IsolationUsesXactSnapshot() ||
		!wl_hint_read(text_to_cstring(tenant), &hint, &version, &raises, NULL))
		hint = wl_queue_key_min;
	values[4] = Int64GetDatum(hint.neg_priority);
	values[5] = TimestampTzGetDatum(hint.created_at);
	values[6] = CStringGetTextDatum(hint.id);

	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(roles);
	values[2] = PointerGetDatum(actor);
	if (actor == NULL)
		nulls[2] = 'n';
	values[3] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, nulls, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* worklist.for_case(case_id) RETURNS SETOF task */
Datum
wl_for_case(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND t.case_id" EQ "$2 AND " LIVE("t")
		QUEUE_ORDER("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.for_case",
		.sql03 = "SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND t.case_id" EQ "$2 AND " LIVE03("t")
		QUEUE_ORDER("t")
	};
	text	   *tenant = wl_tenant_enter();
	text	   *case_id = wl_arg_ident(fcinfo, 0, "case_id");
	Datum		values[2];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(case_id);

	wl_spi_begin(&spi);
	(void) wl_exec_to_srf(&stmt, values, NULL, fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.held(actor, lim) RETURNS SETOF task
 *
 * The pending tasks actor holds, oldest claim first, then by id: a
 * person's inbox of claimed work.  A read: any actor may be named.
 */
Datum
wl_held(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task_claim c"
		" JOIN worklist.task t ON t.tenant" EQ "c.tenant AND t.id" EQ "c.task_id"
		" WHERE c.tenant" EQ "$1 AND c.holder" EQ "$2"
		" ORDER BY c.claimed_at, c.task_id LIMIT $3",
		3, {TEXTOID, TEXTOID, INT4OID},
		.generic = true, .name = "task.held",
		.sql03 = "SELECT t FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND t.holder" EQ "$2 AND " PENDING("t")
		" ORDER BY t.claimed_at, t.id LIMIT $3"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *actor = wl_arg_ident(fcinfo, 0, "actor");
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	Datum		values[3];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(actor);
	values[2] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.claims(lim) RETURNS SETOF task
 *
 * Every pending task somebody holds, oldest claim first, then by id: who
 * holds what, for an operator, read from worklist.task_claim (as held()
 * reads one holder's).  The condition names claimed_at, always set there,
 * as the predicate of task_claims does, which held() cannot use.  Not for a member binding (42501), which sees its
 * own claims through held().
 */
Datum
wl_claims(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT t FROM worklist.task_claim c"
		" JOIN worklist.task t ON t.tenant" EQ "c.tenant AND t.id" EQ "c.task_id"
		" WHERE c.tenant" EQ "$1 AND c.claimed_at IS NOT NULL"
		" ORDER BY c.claimed_at, c.task_id LIMIT $2",
		2, {TEXTOID, INT4OID},
		.generic = true, .name = "task.claims"
	};
	text	   *tenant = wl_tenant_enter();
	int32		lim;
	Datum		values[2];
	WlSpi		spi;

	wl_require_binding(WL_BINDING_SERVICE, "claims");
	lim = wl_arg_limit(fcinfo, 0, 100, WL_LIMIT_MAX);
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/* worklist.open_count() RETURNS bigint */
Datum
wl_open_count(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT pg_catalog.count(*) FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND " LIVE("t"),
		1, {TEXTOID},
		.generic = true, .name = "task.open_count",
		.sql03 = "SELECT pg_catalog.count(*) FROM worklist.task t"
		" WHERE t.tenant" EQ "$1 AND " LIVE03("t")
	};
	text	   *tenant = wl_tenant_enter();
	Datum		values[1];
	Datum		n;
	bool		isnull;
	WlSpi		spi;

	values[0] = PointerGetDatum(tenant);
	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	n = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(n);
}

/* worklist.overdue(now, lim) RETURNS SETOF task */
Datum
wl_overdue(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
#define OVERDUE_SQL(due) \
		"SELECT t FROM worklist.task t" \
		" WHERE t.tenant" EQ "$1 AND " due("t") \
		" AND t.due_at OPERATOR(pg_catalog.<=) $2" \
		" ORDER BY t.due_at, t.id LIMIT $3"
		OVERDUE_SQL(DUE),
		3, {TEXTOID, TIMESTAMPTZOID, INT4OID},
		.generic = true, .name = "task.overdue",
		.sql03 = OVERDUE_SQL(DUE03)
#undef OVERDUE_SQL
	};
	text	   *tenant = wl_tenant_enter();
	TimestampTz now = wl_arg_time(fcinfo, 0, "now");
	int32		lim = wl_arg_limit(fcinfo, 1, 100, WL_LIMIT_MAX);
	Datum		values[3];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.task_history(id, after, lim) RETURNS SETOF task_event
 *
 * The task's events with seq > after (NULL: 0), ascending, at most lim;
 * WL001 when there is no such task.  Both read the caller's snapshot, by
 * primary keys.
 */
Datum
wl_task_history(PG_FUNCTION_ARGS)
{
	static WlStmt exists WL_KEPT = {
		"SELECT FROM worklist.task t WHERE " KEY("t"),
		2, {TEXTOID, TEXTOID},
		.generic = true, .name = "task.history.exists"
	};
	static WlStmt stmt WL_KEPT = {
		"SELECT ROW(l.task_id, l.seq, l.at, l.event, l.actor, l.login,"
		" COALESCE(l.detail, '{}'::pg_catalog.jsonb))::worklist.task_event"
		" FROM worklist.task_log l"
		" WHERE l.tenant" EQ "$1 AND l.task_id" EQ "$2"
		"   AND l.seq OPERATOR(pg_catalog.>) $3"
		" ORDER BY l.seq LIMIT $4",
		4, {TEXTOID, TEXTOID, INT4OID, INT4OID},
		.generic = true, .name = "task.history"
	};
	text	   *tenant = wl_tenant_enter();
	text	   *id = wl_arg_ident(fcinfo, 0, "id");
	int32		after = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT32(1);
	int32		lim = wl_arg_limit(fcinfo, 2, 100, WL_LIMIT_MAX);
	Datum		values[4];
	WlSpi		spi;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	values[0] = PointerGetDatum(tenant);
	values[1] = PointerGetDatum(id);
	values[2] = Int32GetDatum(after);
	values[3] = Int32GetDatum(lim);

	wl_spi_begin(&spi);
	if (wl_exec(&exists, values, NULL, true, 0) == 0)
		wl_error_not_found("task", text_to_cstring(id));
	(void) wl_exec(&stmt, values, NULL, true, 0);
	wl_result_to_srf(fcinfo);
	wl_spi_end(&spi);
	return (Datum) 0;
}
