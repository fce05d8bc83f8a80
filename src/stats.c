/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  worklist.stats(): what the current tenant has, and the cumulative
 *	  counters its verbs left (change.c).
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_stats);

/*
 * worklist.stats() RETURNS jsonb
 *
 * For the current tenant: tasks per state, the oldest pending task's age,
 * overdue tasks, tickets per state, runs, live leases, and the cumulative
 * counters of this tenant since server start (NULL when not kept).
 */
Datum
wl_stats(PG_FUNCTION_ARGS)
{
#define STATS_SQL(pending, due) \
		"SELECT pg_catalog.jsonb_build_object(" \
		" 'tenant', $1," \
		" 'tasks', (SELECT pg_catalog.jsonb_object_agg(s.state, COALESCE(c.n, 0))" \
		"             FROM pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.task_state)) s(state)" \
		"             LEFT JOIN (SELECT t.state, pg_catalog.count(*) AS n FROM worklist.task t" \
		"                         WHERE t.tenant OPERATOR(pg_catalog.=) $1 GROUP BY t.state) c" \
		"               ON c.state OPERATOR(pg_catalog.=) s.state)," \
		" 'oldest_pending_age'," \
		"   (SELECT pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(t.created_at)" \
		"      FROM worklist.task t WHERE t.tenant OPERATOR(pg_catalog.=) $1" \
		"       AND " pending ")," \
		" 'overdue_tasks'," \
		"   (SELECT pg_catalog.count(*) FROM worklist.task t WHERE t.tenant OPERATOR(pg_catalog.=) $1" \
		"       AND " due "" \
		"       AND t.due_at OPERATOR(pg_catalog.<=) pg_catalog.now())," \
		" 'tickets', (SELECT pg_catalog.jsonb_object_agg(s.state, COALESCE(c.n, 0))" \
		"             FROM pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.ticket_status)) s(state)" \
		"             LEFT JOIN (SELECT k.state, pg_catalog.count(*) AS n FROM worklist.ticket k" \
		"                         WHERE k.tenant OPERATOR(pg_catalog.=) $1 GROUP BY k.state) c" \
		"               ON c.state OPERATOR(pg_catalog.=) s.state)," \
		" 'runs', (SELECT pg_catalog.count(*) FROM worklist.run r" \
		"           WHERE r.tenant OPERATOR(pg_catalog.=) $1)," \
		" 'live_leases', (SELECT pg_catalog.count(*) FROM worklist.run_claim l" \
		"                  WHERE l.tenant OPERATOR(pg_catalog.=) $1" \
		"                    AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.now())," \
		" 'counters', pg_catalog.jsonb_build_object(" \
		"    'claims', $2, 'claim_conflicts', $3, 'take_overs', $4," \
		"    'lease_reclaims', $5, 'stale_fence_refusals', $6, 'claim_timeouts', $7))"
	static WlStmt stmt WL_KEPT = {
		STATS_SQL("t.settled_at IS NULL", "t.settled_at IS NULL AND t.escalated_at IS NULL"),
		7, {TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID},
		.name = "stats.stats",
		.sql03 = STATS_SQL("t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[])", "t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])")
	};
#undef STATS_SQL
	text	   *tenant = wl_tenant_enter();
	uint64		counters[WL_COUNT__N];
	bool		kept = wl_change_counters(text_to_cstring(tenant), counters);
	Datum		values[7];
	char		nulls[7];
	WlSpi		spi;
	bool		isnull;
	Datum		result;

	values[0] = PointerGetDatum(tenant);
	nulls[0] = ' ';
	for (int i = 0; i < WL_COUNT__N; i++)
	{
		values[i + 1] = Int64GetDatum((int64) (kept ? counters[i] : 0));
		nulls[i + 1] = kept ? ' ' : 'n';
	}

	wl_spi_begin(&spi);
	wl_exec(&stmt, values, nulls, true, 0);
	result = wl_result_datum(0, 1, &isnull);
	wl_spi_end(&spi);
	PG_RETURN_DATUM(result);
}
