/*-------------------------------------------------------------------------
 *
 * retention.c
 *	  Retention: how long each tenant keeps settled work, and when the
 *	  sweep purges it (doc/reference.md, section 8).  Each kind purges its
 *	  own rows (wl_task_purge, wl_ticket_purge, wl_run_purge); this file
 *	  keeps the policy and the schedule.
 *
 * A tenant's policy is one row of worklist.retention_policy: an interval
 * per kind (tasks, tickets, runs), NULL meaning forever.  The sweep (the
 * verb, and the sweeper for every tenant with something due) purges, after
 * its other parts and at most lim items of the three kinds together:
 *	 - settled tasks whose settled_at <= now - tasks;
 *	 - tickets in state done or archived whose latest event is at or
 *	   before now - tickets, with their whole event log;
 *	 - runs whose newest checkpoint was written at or before now - runs and
 *	   that have no unexpired lease, with their checkpoints and lease.
 * Rows are picked FOR UPDATE SKIP LOCKED, so the purge never waits on a
 * row anybody holds, and never holds a reviewer up for more than its batch.
 *
 * When the sweeper should next look is kept on the policy row
 * (next_purge), so a tenant with a policy and nothing old enough costs
 * nothing until then.  It is read and written only by a sweep judged at the
 * present (now = the transaction's start, as the sweeper's and the verb's
 * default are); a sweep judged at another instant purges by that instant
 * and leaves the schedule alone.  The schedule: after a purge that was not cut short by lim, it is
 * the earliest instant one of the remaining candidates comes of age (the
 * oldest settled task plus the tasks interval, and so on; a kind with
 * nothing settled counts from now, since whatever settles later comes of
 * age later still), or a minute from now when a candidate already of age
 * was passed over (a live lease, a row locked by somebody).  A new policy
 * is due at once.
 *
 *-------------------------------------------------------------------------
 */
#include "sweep.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_erase_tenant);
PG_FUNCTION_INFO_V1(wl_set_retention);
PG_FUNCTION_INFO_V1(wl_retention);

#define EQ " OPERATOR(pg_catalog.=) "
#define LE " OPERATOR(pg_catalog.<=) "

/* The three intervals of a tenant's policy (NULL: kept forever). */
typedef struct Policy
{
	bool		found;
	bool		has[3];
	Interval   *span[3];
	bool		due;
} Policy;

enum
{
	KIND_TASKS,
	KIND_TICKETS,
	KIND_RUNS
};


static void
read_policy(text *tenant, TimestampTz now, Policy *p)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT r.tasks, r.tickets, r.runs,"
		" r.next_purge IS NOT NULL AND r.next_purge" LE "$2"
		" FROM worklist.retention_policy r WHERE r.tenant" EQ "$1",
		2, {TEXTOID, TIMESTAMPTZOID}, .name = "retention.policy"
	};
	Datum		values[2];
	bool		isnull;

	memset(p, 0, sizeof(*p));
	values[0] = PointerGetDatum(tenant);
	values[1] = TimestampTzGetDatum(now);
	if (wl_exec(&stmt, values, NULL, true, 0) == 0)
		return;
	p->found = true;
	for (int k = 0; k < 3; k++)
	{
		Datum		d = wl_result_datum(0, k + 1, &isnull);

		p->has[k] = !isnull;
		p->span[k] = isnull ? NULL : DatumGetIntervalP(d);
	}
	p->due = DatumGetBool(wl_result_datum(0, 4, &isnull));
}

/* now - span, saturating at -infinity */
static TimestampTz
cutoff(TimestampTz now, Interval *span)
{
	Interval	back;

	back.month = -span->month;
	back.day = -span->day;
	back.time = -span->time;
	return wl_time_add(now, &back);
}

/*
 * When the purge next has something to do; see the file header.  The sum
 * of an instant and an interval saturates (wl_time_add), and the policy
 * row is updated only if nobody holds it locked (a concurrent
 * set_retention, another sweep): then that one has the last word, and the
 * sweep never waits on a tenant's transaction.
 */
static void
schedule(text *tenant, TimestampTz now, const Policy *p, bool cut_short)
{
#define OLDEST(settled) \
		"SELECT" \
		" (SELECT t.settled_at FROM worklist.task t" \
		"   WHERE t.tenant" EQ "$1 AND " settled \
		"   ORDER BY t.settled_at LIMIT 1)," \
		" (SELECT k.last_event_at FROM worklist.ticket k" \
		"   WHERE k.tenant" EQ "$1" \
		"     AND k.state" EQ "ANY ('{done,archived}'::worklist.ticket_status[])" \
		"   ORDER BY k.last_event_at LIMIT 1)," \
		" (SELECT r.latest_checkpoint_at FROM worklist.run r" \
		"   WHERE r.tenant" EQ "$1 AND r.listed" \
		"   ORDER BY r.latest_checkpoint_at LIMIT 1)"
	static WlStmt oldest_stmt WL_KEPT = {
		OLDEST("t.settled_at IS NOT NULL"),
		1, {TEXTOID}, .name = "retention.oldest",
		.sql03 = OLDEST("t.state" EQ "ANY ('{completed,expired,withdrawn}'::worklist.task_state[])")
	};
#undef OLDEST
	static WlStmt set_stmt WL_KEPT = {
		"UPDATE worklist.retention_policy p SET next_purge = $2"
		" WHERE p.tenant" EQ "$1 AND p.tenant" EQ "(SELECT l.tenant"
		"  FROM worklist.retention_policy l WHERE l.tenant" EQ "$1"
		"  FOR UPDATE SKIP LOCKED)",
		2, {TEXTOID, TIMESTAMPTZOID}, .name = "retention.schedule"
	};
	Datum		values[2];
	TimestampTz next = now;

	values[0] = PointerGetDatum(tenant);
	if (!cut_short)
	{
		next = DT_NOEND;
		/* not read-only: a fresh snapshot that no longer sees what was purged */
		if (wl_exec(&oldest_stmt, values, NULL, false, 0) != 1)
			elog(ERROR, "retention: no row for the oldest candidates");
		for (int k = 0; k < 3; k++)
		{
			bool		isnull;
			Datum		d = wl_result_datum(0, k + 1, &isnull);
			TimestampTz at;

			if (!p->has[k])
				continue;
			/* nothing of this kind yet: whatever comes, comes of age later */
			at = wl_time_add(isnull ? now : DatumGetTimestampTz(d), p->span[k]);
			if (at < next)
				next = at;
		}
		/* a candidate of age was passed over (a lease, a lock): look again soon */
		if (next <= now)
			next = now + 60 * USECS_PER_SEC;
	}
	values[1] = TimestampTzGetDatum(next);
	(void) wl_exec(&set_stmt, values, NULL, false, 0);
}

/*
 * The retention part of the sweep (declared in worklist.h): at most lim
 * items of the tenant, tasks first, then tickets, then runs.
 */
void
wl_retention_purge(text *tenant, TimestampTz now, int32 lim,
				   WlSweepResult *result)
{
	Policy		p;
	int32		left = lim;
	bool		present = (now == GetCurrentTransactionStartTimestamp());

	read_policy(tenant, now, &p);
	if (!p.found || (present && !p.due))
		return;

	for (int k = 0; k < 3 && left > 0; k++)
	{
		uint64		n;

		if (!p.has[k])
			continue;
		CHECK_FOR_INTERRUPTS();
		switch (k)
		{
			case KIND_TASKS:
				n = wl_task_purge(tenant, cutoff(now, p.span[k]), left);
				break;
			case KIND_TICKETS:
				n = wl_ticket_purge(tenant, cutoff(now, p.span[k]), left);
				break;
			default:
				n = wl_run_purge(tenant, cutoff(now, p.span[k]), now, left);
				break;
		}
		left -= (int32) n;
		result->purged += (int32) n;
	}
	if (present)
		schedule(tenant, now, &p, left <= 0);
}

/*
 * worklist.set_retention(tasks interval, tickets interval, runs interval)
 *	RETURNS void
 *
 * Sets the current tenant's policy (each NULL: that kind is kept forever).
 * Service and admin bindings only; each interval, when given, positive.
 */
Datum
wl_set_retention(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"INSERT INTO worklist.retention_policy AS p"
		" (tenant, tasks, tickets, runs, next_purge)"
		" VALUES ($1, $2, $3, $4,"
		"  CASE WHEN COALESCE($2, $3, $4) IS NOT NULL THEN pg_catalog.now() END)"
		" ON CONFLICT (tenant) DO UPDATE SET tasks = EXCLUDED.tasks,"
		"  tickets = EXCLUDED.tickets, runs = EXCLUDED.runs,"
		"  next_purge = EXCLUDED.next_purge",
		4, {TEXTOID, INTERVALOID, INTERVALOID, INTERVALOID},
		.name = "retention.set"
	};
	static const char *const argnames[] = {"tasks", "tickets", "runs"};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	WlSpi		spi;

	wl_require_binding(WL_BINDING_SERVICE, "set_retention");
	values[0] = PointerGetDatum(tenant);
	for (int k = 0; k < 3; k++)
	{
		if (PG_ARGISNULL(k))
		{
			nulls[k + 1] = 'n';
			continue;
		}
		wl_check_positive_interval(PG_GETARG_DATUM(k), argnames[k]);
		values[k + 1] = PG_GETARG_DATUM(k);
	}

	wl_spi_begin(&spi);
	(void) wl_exec(&stmt, values, nulls, false, 0);
	wl_spi_end(&spi);
	PG_RETURN_VOID();
}

/*
 * worklist.retention(OUT tasks interval, OUT tickets interval,
 *					  OUT runs interval) RETURNS record
 *
 * The current tenant's policy; all NULL (forever) when it has none.
 */
Datum
wl_retention(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		"SELECT r.tasks, r.tickets, r.runs FROM worklist.retention_policy r"
		" WHERE r.tenant" EQ "$1",
		1, {TEXTOID}, .name = "retention.get"
	};
	text	   *tenant = wl_tenant_enter();
	TupleDesc	desc;
	Datum		out[3] = {0, 0, 0};
	bool		nulls[3] = {true, true, true};
	Datum		values[1];
	WlSpi		spi;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = PointerGetDatum(tenant);
	wl_spi_begin(&spi);
	if (wl_exec(&stmt, values, NULL, true, 0) == 1)
		for (int k = 0; k < 3; k++)
			out[k] = wl_result_datum(0, k + 1, &nulls[k]);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), out, nulls)));
}

/*
 * worklist.erase_tenant() RETURNS bigint
 *
 * Deletes every row of the current tenant from every data table, children
 * before parents, and returns how many rows went.  A bound tenant needs an
 * admin binding (owner and superusers are admin everywhere); an unbound
 * one, reached while worklist.open_tenants is on, only the EXECUTE grant.
 * Bindings, the retention policy and the notification channel stay:
 * erasure removes data, not configuration.  The fence sequence is not
 * touched, so fences never rewind.
 */
Datum
wl_erase_tenant(PG_FUNCTION_ARGS)
{
	static WlStmt stmts[] WL_KEPT = {
		{"DELETE FROM worklist.ticket_event WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.ticket_event"},
		{"DELETE FROM worklist.ticket WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.ticket"},
		{"DELETE FROM worklist.task WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.task"},
		{"DELETE FROM worklist.run_checkpoint WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run_checkpoint"},
		{"DELETE FROM worklist.run_claim WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run_claim"},
		{"DELETE FROM worklist.run WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run"},
	};
	/* the tables 0.4 added: their rows go too (none on a 0.3 schema) */
	static WlStmt stmts04[] WL_KEPT = {
		{"DELETE FROM worklist.task_log WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.task_log"},
		{"DELETE FROM worklist.run_park_task WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run_park_task"},
		{"DELETE FROM worklist.run_pending_write WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run_pending_write"},
		{"DELETE FROM worklist.run_channel_value WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID}, .name = "tenant.erase.run_channel_value"},
	};
	/*
	 * The claims of the tenant's tasks, kept beside them: part of the
	 * tasks, not counted apart.
	 */
	static WlStmt claims WL_KEPT = {
		"DELETE FROM worklist.task_claim WHERE tenant OPERATOR(pg_catalog.=) $1", 1, {TEXTOID},
		.name = "tenant.erase.task_claim"
	};
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES));
	WlSpi		spi;
	Datum		values[1];
	int64		total = 0;
	bool		bound;

	(void) wl_tenant_binding(text_to_cstring(tenant), &bound);
	if (bound)
		wl_require_binding(WL_BINDING_ADMIN, "erase_tenant");

	values[0] = PointerGetDatum(tenant);
	wl_spi_begin(&spi);
	wl_erasing = true;
	PG_TRY();
	{
		for (int i = 0; i < lengthof(stmts); i++)
			total += (int64) wl_exec(&stmts[i], values, NULL, false, 0);
		for (int i = 0; wl_schema_current() && i < lengthof(stmts04); i++)
			total += (int64) wl_exec(&stmts04[i], values, NULL, false, 0);
		if (wl_schema_current())
			(void) wl_exec(&claims, values, NULL, false, 0);
	}
	PG_FINALLY();
	{
		wl_erasing = false;
	}
	PG_END_TRY();
	wl_spi_end(&spi);
	PG_RETURN_INT64(total);
}
