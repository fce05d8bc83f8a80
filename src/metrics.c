/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  What a monitoring system scrapes: worklist.metrics_tenants(),
 *	  worklist.metrics_states() and worklist.metrics_sweeper()
 *	  (doc/reference.md, section 9, "Metrics"; contrib/prometheus/ maps
 *	  them onto postgres_exporter).
 *
 * They answer with counts only: tenant names, kinds and states are the
 * labels, and no task, ticket or run id ever appears.  They cover every
 * tenant of the current database, read as the extension's owner, so a
 * monitoring role needs no tenant binding -- and for that reason they are
 * for members of pg_monitor, the owner and superusers only.  EXECUTE is
 * granted to pg_monitor and revoked from PUBLIC, and each function checks
 * its caller again, so that a grant of EXECUTE on every function of the
 * schema (which some operators make) does not open every tenant's counts
 * to a role that may reach one tenant.
 *
 * The tenants of a database are those with a binding and those that have
 * a task, a ticket or a run.  The tables' leading key column is the tenant,
 * so the tenants that have rows are found by skipping through each primary
 * key from one tenant to the next (a probe per tenant, not a read per row).
 *
 * What a call costs:
 *	 metrics_tenants	per tenant: its pending tasks (overdue, oldest), its
 *						runs and its leases, each through an index; the
 *						counters come from shared memory;
 *	 metrics_states		one sequential read of the task and ticket tables,
 *						settled rows included (every row must be counted,
 *						and walking an index would only add random reads
 *						of the same rows);
 *	 metrics_sweeper	a copy of the database's sweeper slot, no table.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "shmem.h"
#include "worker.h"

#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(wl_metrics_tenants);
PG_FUNCTION_INFO_V1(wl_metrics_states);
PG_FUNCTION_INFO_V1(wl_metrics_sweeper);

/* The tenants of one table, one primary-key probe each. */
#define TENANTS_OF(cte, table) \
	" " cte "(tenant) AS (" \
	"   (SELECT x.tenant FROM " table " x ORDER BY x.tenant LIMIT 1)" \
	"   UNION ALL" \
	"   SELECT (SELECT x.tenant FROM " table " x" \
	"            WHERE x.tenant OPERATOR(pg_catalog.>) p.tenant" \
	"            ORDER BY x.tenant LIMIT 1)" \
	"     FROM " cte " p WHERE p.tenant IS NOT NULL),"

/* Every tenant of the database: bound, or with rows (the CTE "tenants"). */
#define TENANTS_CTE \
	"WITH RECURSIVE" \
	TENANTS_OF("task_tenants", "worklist.task") \
	TENANTS_OF("ticket_tenants", "worklist.ticket") \
	TENANTS_OF("run_tenants", "worklist.run") \
	" tenants(tenant) AS (" \
	"   SELECT tenant FROM task_tenants WHERE tenant IS NOT NULL" \
	"   UNION SELECT tenant FROM ticket_tenants WHERE tenant IS NOT NULL" \
	"   UNION SELECT tenant FROM run_tenants WHERE tenant IS NOT NULL" \
	"   UNION SELECT b.tenant FROM worklist.tenant_binding b)"

/*
 * Refuse (42501) a caller that is neither a member of pg_monitor, nor the
 * extension's owner (or a member of it), nor a superuser.
 */
static void
require_monitor(const char *function)
{
	Oid			owner = wl_owner();
	Oid			user = GetUserId();

	if (superuser() || has_privs_of_role(user, owner) ||
		has_privs_of_role(user, ROLE_PG_MONITOR))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for function %s", function),
			 errdetail("The metrics of every tenant are for members of pg_monitor, the owner of extension \"worklist\" and superusers.")));
}

/* One tenant's row of metrics_tenants, read from the tables. */
typedef struct TenantGauges
{
	char	   *tenant;
	Datum		gauges[4];		/* overdue, oldest pending age, runs, leases */
} TenantGauges;

/*
 * worklist.metrics_tenants(): for every tenant of the database, the gauges
 * of stats() that need no per-state count, whether the sweeper lists it in
 * error, and the counters of stats() (NULL when not kept).
 */
Datum
wl_metrics_tenants(PG_FUNCTION_ARGS)
{
#define TENANTS_SQL(pending, due) \
		TENANTS_CTE \
		" SELECT n.tenant," \
		"  (SELECT pg_catalog.count(*) FROM worklist.task t" \
		"    WHERE t.tenant OPERATOR(pg_catalog.=) n.tenant" \
		"      AND " due "" \
		"      AND t.due_at OPERATOR(pg_catalog.<=) pg_catalog.now())," \
		"  COALESCE((SELECT pg_catalog.date_part('epoch'," \
		"                   pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(t.created_at))" \
		"              FROM worklist.task t" \
		"             WHERE t.tenant OPERATOR(pg_catalog.=) n.tenant" \
		"               AND " pending ")," \
		"           0)," \
		"  (SELECT pg_catalog.count(*) FROM worklist.run r" \
		"    WHERE r.tenant OPERATOR(pg_catalog.=) n.tenant)," \
		"  (SELECT pg_catalog.count(*) FROM worklist.run_claim l" \
		"    WHERE l.tenant OPERATOR(pg_catalog.=) n.tenant" \
		"      AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.now())" \
		"  FROM tenants n ORDER BY n.tenant"
	static WlStmt stmt WL_KEPT = {
		TENANTS_SQL("t.settled_at IS NULL", "t.settled_at IS NULL AND t.escalated_at IS NULL"),
		0, {0},
		.name = "metrics.tenants",
		.sql03 = TENANTS_SQL("t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[])", "t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])")
	};
#undef TENANTS_SQL
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlSweeperStatus *slot = palloc0(sizeof(WlSweeperStatus));
	pid_t		pid;
	bool		has_slot;
	TenantGauges *rows;
	uint64		n;
	WlSpi		spi;

	require_monitor("metrics_tenants");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	wl_spi_begin(&spi);
	n = wl_exec(&stmt, NULL, NULL, true, 0);
	rows = SPI_palloc(sizeof(TenantGauges) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		rows[i].tenant = wl_result_cstring(i, 1);
		for (int g = 0; g < 4; g++)
			rows[i].gauges[g] = wl_result_datum(i, g + 2, &isnull);
	}
	wl_spi_end(&spi);

	has_slot = wl_shm_slot_status(MyDatabaseId, &pid, slot);
	for (uint64 i = 0; i < n; i++)
	{
		Datum		values[12];
		bool		nulls[12] = {false};
		uint64		counters[WL_COUNT__N];
		bool		kept = wl_change_counters(rows[i].tenant, counters);
		bool		in_error = false;
		/* the columns of the counters, in the order of WlCounter */
		static const int column[WL_COUNT__N] = {
			[WL_COUNT_CLAIMS] = 6,
			[WL_COUNT_CLAIM_CONFLICTS] = 7,
			[WL_COUNT_TAKE_OVERS] = 8,
			[WL_COUNT_CLAIM_TIMEOUTS] = 9,
			[WL_COUNT_LEASE_RECLAIMS] = 10,
			[WL_COUNT_STALE_FENCES] = 11,
		};

		for (int e = 0; has_slot && e < slot->n_error_tenants && !in_error; e++)
			in_error = strcmp(slot->error_tenants[e], rows[i].tenant) == 0;

		values[0] = CStringGetTextDatum(rows[i].tenant);
		for (int g = 0; g < 4; g++)
			values[g + 1] = rows[i].gauges[g];
		values[5] = BoolGetDatum(in_error);
		for (int c = 0; c < WL_COUNT__N; c++)
		{
			values[column[c]] = Int64GetDatum((int64) (kept ? counters[c] : 0));
			nulls[column[c]] = !kept;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * worklist.metrics_states(): for every tenant of the database, a count of
 * its tasks in each task state and of its tickets in each ticket status,
 * zero counts included, in the order of the states.
 */
Datum
wl_metrics_states(PG_FUNCTION_ARGS)
{
	static WlStmt stmt WL_KEPT = {
		TENANTS_CTE ","
		" tasks AS (SELECT t.tenant, t.state, pg_catalog.count(*) AS n"
		"             FROM worklist.task t GROUP BY t.tenant, t.state),"
		" tickets AS (SELECT k.tenant, k.state, pg_catalog.count(*) AS n"
		"               FROM worklist.ticket k GROUP BY k.tenant, k.state)"
		" SELECT n.tenant, 'task'::pg_catalog.text, s.state::pg_catalog.text,"
		"        COALESCE(c.n, 0), 1, s.ord"
		"   FROM tenants n"
		"  CROSS JOIN pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.task_state))"
		"        WITH ORDINALITY s(state, ord)"
		"   LEFT JOIN tasks c ON c.tenant OPERATOR(pg_catalog.=) n.tenant"
		"                    AND c.state OPERATOR(pg_catalog.=) s.state"
		" UNION ALL"
		" SELECT n.tenant, 'ticket', s.state::pg_catalog.text, COALESCE(c.n, 0), 2, s.ord"
		"   FROM tenants n"
		"  CROSS JOIN pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.ticket_status))"
		"        WITH ORDINALITY s(state, ord)"
		"   LEFT JOIN tickets c ON c.tenant OPERATOR(pg_catalog.=) n.tenant"
		"                      AND c.state OPERATOR(pg_catalog.=) s.state"
		" ORDER BY 1, 5, 6",
		0, {0},
		.name = "metrics.states"
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64		n;
	WlSpi		spi;

	require_monitor("metrics_states");
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	wl_spi_begin(&spi);
	/* every row is counted: read the tables, not their indexes */
	(void) set_config_option("enable_seqscan", "on", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	n = wl_exec(&stmt, NULL, NULL, true, 0);
	for (uint64 i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4];

		for (int c = 0; c < 4; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
									  c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	wl_spi_end(&spi);
	return (Datum) 0;
}

/*
 * worklist.metrics_sweeper(): the sweeper of the current database as
 * numbers -- whether one runs, the age of its last tick and how long that
 * took (NULL before the first tick), the totals of sweeper_status and how
 * many tenants it names in error.  Always one row: a database that has had
 * no sweeper since the server started reads as not running, zero totals.
 */
Datum
wl_metrics_sweeper(PG_FUNCTION_ARGS)
{
	WlSweeperStatus *s = palloc0(sizeof(WlSweeperStatus));
	pid_t		pid = 0;
	bool		has_slot;
	TupleDesc	desc;
	Datum		values[12];
	bool		nulls[12] = {false};
	int64		total[8];

	require_monitor("metrics_sweeper");
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "metrics_sweeper must return a row");
	desc = BlessTupleDesc(desc);

	has_slot = wl_shm_slot_status(MyDatabaseId, &pid, s);
	total[0] = s->ticks;
	total[1] = s->totals.denied;
	total[2] = s->totals.proceeded;
	total[3] = s->totals.escalated;
	total[4] = s->totals.tickets_escalated;
	total[5] = s->totals.tickets_confirmed;
	total[6] = s->totals.claims_released;
	total[7] = s->totals.purged;

	values[0] = BoolGetDatum(has_slot && wl_pid_alive(pid));
	nulls[1] = nulls[2] = (s->ticks == 0);
	values[1] = Float8GetDatum((double) (GetCurrentTimestamp() - s->last_tick) / USECS_PER_SEC);
	values[2] = Float8GetDatum(s->last_duration_ms / 1000.0);
	for (int i = 0; i < lengthof(total); i++)
		values[3 + i] = Int64GetDatum(total[i]);
	values[11] = Int32GetDatum(s->n_error_tenants);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
