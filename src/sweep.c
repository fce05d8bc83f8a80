/*-------------------------------------------------------------------------
 *
 * sweep.c
 *	  worklist.sweep(now, lim): one sweep of the current tenant -- expiry
 *	  policies, claim timeouts, the ticket watchdog, retention -- and the
 *	  list of tenants that have something due.
 *
 * The parts live with their data (task_sweep.c, ticket.c, retention.c);
 * wl_sweep_tenant() runs them in the documented order, and both this verb
 * and the sweeper call it, so a batch of the sweeper does exactly what a
 * call of the verb would.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "hint.h"
#include "sweep.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_sweep);

void
wl_sweep_tenant(text *tenant, TimestampTz now, int32 lim, WlSweepResult *result)
{
	int32		released = result->claims_released;

	wl_task_sweep(tenant, now, lim, result);
	wl_task_claim_timeouts(tenant, now, lim, result);
	/* the counter of stats(): a claim timeout counts when the sweep commits */
	if (result->claims_released > released)
		wl_count_n(WL_COUNT_CLAIM_TIMEOUTS,
				   (uint32) (result->claims_released - released));
	wl_ticket_watchdog(tenant, now, lim, result);
	wl_retention_purge(tenant, now, lim, result);
}

bool
wl_sweep_full(const WlSweepResult *r, int32 lim)
{
	return r->denied + r->proceeded + r->escalated >= lim ||
		r->claims_released >= lim ||
		r->tickets_escalated + r->tickets_confirmed >= lim ||
		r->purged >= lim;
}

void
wl_sweep_add(WlSweepResult *total, const WlSweepResult *one)
{
#define ADD(name) total->name += one->name;
	WL_SWEEP_COUNTS(ADD)
#undef ADD
}

/*
 * The tenants with something due at now: an overdue open or claimed task,
 * a claim past its timeout, a ticket the watchdog must look at, a
 * retention policy with something to purge.  Each comes from an index
 * over all tenants ordered by the instant things fall due (task_due,
 * task_claim_due, ticket_due, retention_policy_due), read only up to now:
 * the cost follows what is due, never the number of tenants.  Called by
 * the sweeper once a tick, which is also when the claim hints of the
 * database are unpinned (wl_hint_tick).
 */
List *
wl_due_tenants(TimestampTz now, MemoryContext cxt)
{
#define DUE_TENANTS(due, claims) \
		"SELECT DISTINCT d.tenant FROM (" \
		" SELECT t.tenant FROM worklist.task t" \
		"  WHERE " due \
		"    AND t.due_at IS NOT NULL AND t.due_at OPERATOR(pg_catalog.<=) $1" \
		" UNION ALL" \
		" SELECT t.tenant FROM " claims " t" \
		"  WHERE t.claim_expires_at IS NOT NULL" \
		"    AND t.claim_expires_at OPERATOR(pg_catalog.<=) $1" \
		" UNION ALL" \
		" SELECT k.tenant FROM worklist.ticket k" \
		"  WHERE k.next_check IS NOT NULL AND k.next_check OPERATOR(pg_catalog.<=) $1" \
		" UNION ALL" \
		" SELECT r.tenant FROM worklist.retention_policy r" \
		"  WHERE r.next_purge IS NOT NULL AND r.next_purge OPERATOR(pg_catalog.<=) $1" \
		") d ORDER BY 1"
	static WlStmt stmt WL_KEPT = {
		DUE_TENANTS("t.settled_at IS NULL AND t.escalated_at IS NULL", "worklist.task_claim"),
		1, {TIMESTAMPTZOID}, .generic = true, .name = "sweep.due_tenants",
		.sql03 = DUE_TENANTS("t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])",
							 "worklist.task")
	};
#undef DUE_TENANTS
	Datum		values[1];
	List	   *tenants = NIL;
	uint64		n;

	wl_hint_tick();
	values[0] = TimestampTzGetDatum(now);
	n = wl_exec(&stmt, values, NULL, true, 0);

	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext old = MemoryContextSwitchTo(cxt);

		tenants = lappend(tenants, DatumGetTextPCopy(d));
		MemoryContextSwitchTo(old);
	}
	return tenants;
}

/* The sweep_result composite of a sweep. */
static Datum
sweep_result_datum(FunctionCallInfo fcinfo, const WlSweepResult *r)
{
	TupleDesc	desc;
	Datum		values[sizeof(WlSweepResult) / sizeof(int32)];
	bool		nulls[lengthof(values)];
	int			n = 0;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
#define VALUE(name) values[n++] = Int32GetDatum(r->name);
	WL_SWEEP_COUNTS(VALUE)
#undef VALUE
	memset(nulls, false, sizeof(nulls));
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

/* worklist.sweep(now timestamptz, lim int) RETURNS worklist.sweep_result */
Datum
wl_sweep(PG_FUNCTION_ARGS)
{
	text	   *tenant = wl_tenant_enter_as(fcinfo, WL_TRUST(WL_WRITES, WL_CLOCK(0, "now")));
	TimestampTz now = wl_arg_time(fcinfo, 0, "now");
	int32		lim = wl_arg_limit(fcinfo, 1, 1000, WL_SWEEP_LIMIT_MAX);
	WlSweepResult result = {0};
	WlSpi		spi;

	/* what the sweep writes (settled_at, watchdog events) is stamped with now */
	wl_check_finite(now, "now");

	wl_spi_begin(&spi);
	wl_sweep_tenant(tenant, now, lim, &result);
	wl_spi_end(&spi);

	PG_RETURN_DATUM(sweep_result_datum(fcinfo, &result));
}
