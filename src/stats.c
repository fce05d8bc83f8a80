/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What each transaction did per tenant, the cumulative counters, and
 *	  worklist.stats().
 *
 * The counters count what an operator must see to know work was rescued
 * or a stalled writer stopped: claims, claim conflicts, take-overs, claim
 * timeouts, lease reclaims and stale-fence refusals.  They are kept per
 * database and tenant (a tenant must not learn about another's activity,
 * nor a database about another's) in a hash table in shared memory, so
 * every backend adds to the same numbers, and they start from zero with
 * the server.  The same entry holds the tenant's notifications that wait
 * for the sweeper (notify.c).  Entries are only made for tenants a verb
 * has entered (wl_tenant_enter: closed tenancy), so a caller cannot fill
 * the table with tenants it makes up; the table has a hard cap and says
 * once in the log when it is full.  Nothing of this is kept when the
 * library is not preloaded (the space is requested at startup); stats()
 * then reports the counters as NULL rather than as numbers that silently
 * miss events.
 *
 * The shared table and its locks are in shmem.c.
 *
 *-------------------------------------------------------------------------
 */
#include "stats.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* ----------
 * What the current transaction did, per tenant
 *
 * One record per tenant and (sub)transaction level, in
 * TopTransactionContext.  A subtransaction that commits hands its records
 * to its parent; one that rolls back takes them with it.  At commit the
 * records are added to shared memory (preloaded) or their events sent
 * (not preloaded, in notify.c).
 * ----------
 */
static List *xact_tenants = NIL;
static WlXactTenant *xact_last = NULL;	/* the last record used */
static bool xact_callbacks_registered = false;

static void xact_callback(XactEvent event, void *arg);
static void subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							 SubTransactionId parentSubid, void *arg);

static void
xact_forget(void)
{
	xact_tenants = NIL;
	xact_last = NULL;
}

WlXactTenant *
wl_xact_tenant(const char *tenant)
{
	int			level = GetCurrentTransactionNestLevel();
	MemoryContext old;
	WlXactTenant *rec;
	ListCell   *lc;

	if (xact_last && xact_last->nest_level == level &&
		strcmp(xact_last->tenant, tenant) == 0)
		return xact_last;
	foreach(lc, xact_tenants)
	{
		rec = (WlXactTenant *) lfirst(lc);
		if (rec->nest_level == level && strcmp(rec->tenant, tenant) == 0)
			return xact_last = rec;
	}

	if (!xact_callbacks_registered)
	{
		RegisterXactCallback(xact_callback, NULL);
		RegisterSubXactCallback(subxact_callback, NULL);
		xact_callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	rec = palloc0(sizeof(WlXactTenant));
	rec->tenant = pstrdup(tenant);
	rec->nest_level = level;
	rec->open_only = wl_tenant_open_only(tenant);
	xact_tenants = lappend(xact_tenants, rec);
	MemoryContextSwitchTo(old);
	return xact_last = rec;
}

/* Add what the records say to shared memory.  Never raises. */
static void
publish(void)
{
	bool		wake = false;
	ListCell   *lc;

	foreach(lc, xact_tenants)
	{
		WlXactTenant *rec = (WlXactTenant *) lfirst(lc);
		bool		any = false;
		WlTenantEntry *entry;

		for (int i = 0; i < WL_COUNT__N && !any; i++)
			any = rec->counts[i] != 0;
		for (int i = 0; i < WL_CHANGE__N && !any; i++)
			any = rec->events[i] != 0;
		if (!any || rec->open_only)
			continue;
		entry = wl_shm_tenant(MyDatabaseId, rec->tenant, true);
		if (entry == NULL)
			continue;			/* full: lost, and said so once */
		if (wl_shm_tenant_add(entry, rec->counts, rec->events))
			wake = true;
	}
	if (wake)
		wl_shm_notify_wake(MyDatabaseId);
}

/*
 * Preloaded, just before commit: the tenants whose notifications cannot
 * wait in shared memory -- reached only through open tenancy, or with no
 * room left in the tenant table -- are notified by this transaction
 * itself, as without preloading, so that no notification is lost to a
 * full table.  Their events are then cleared, so that publish() does not
 * count them again.
 */
static void
notify_unshared(void)
{
	List	   *direct = NIL;
	ListCell   *lc;

	foreach(lc, xact_tenants)
	{
		WlXactTenant *rec = (WlXactTenant *) lfirst(lc);
		bool		any = false;

		for (int i = 0; i < WL_CHANGE__N && !any; i++)
			any = rec->events[i] != 0;
		if (!any)
			continue;
		if (rec->open_only ||
			wl_shm_tenant(MyDatabaseId, rec->tenant, true) == NULL)
			direct = lappend(direct, rec);
	}
	if (direct == NIL)
		return;
	wl_notify_at_commit(direct);
	foreach(lc, direct)
		memset(((WlXactTenant *) lfirst(lc))->events, 0,
			   sizeof(((WlXactTenant *) NULL)->events));
	list_free(direct);
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (!wl_shm_preloaded() && xact_tenants != NIL)
				wl_notify_at_commit(xact_tenants);
			else if (xact_tenants != NIL)
				notify_unshared();
			break;
		case XACT_EVENT_COMMIT:
			if (wl_shm_preloaded())
				publish();
			xact_forget();
			break;
		case XACT_EVENT_PREPARE:
			/*
			 * Counters count a prepared claim as PostgreSQL counts a prepared
			 * transaction's work; its notifications are dropped: whether it
			 * will commit is not known here.
			 */
			if (wl_shm_preloaded())
			{
				ListCell   *lc;

				foreach(lc, xact_tenants)
					memset(((WlXactTenant *) lfirst(lc))->events, 0,
						   sizeof(((WlXactTenant *) NULL)->events));
				publish();
			}
			xact_forget();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
			xact_forget();
			break;
		default:
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	xact_last = NULL;
	foreach(lc, xact_tenants)
	{
		WlXactTenant *rec = (WlXactTenant *) lfirst(lc);
		WlXactTenant *parent = NULL;
		ListCell   *pc;

		if (rec->nest_level < level)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			xact_tenants = foreach_delete_current(xact_tenants, lc);
			continue;
		}
		/* commit: the parent's record of this tenant takes the counts */
		foreach(pc, xact_tenants)
		{
			WlXactTenant *p = (WlXactTenant *) lfirst(pc);

			if (p->nest_level == level - 1 && strcmp(p->tenant, rec->tenant) == 0)
				parent = p;
		}
		if (parent == NULL)
		{
			rec->nest_level = level - 1;
			continue;
		}
		parent->open_only |= rec->open_only;
		for (int i = 0; i < WL_COUNT__N; i++)
			parent->counts[i] += rec->counts[i];
		for (int i = 0; i < WL_CHANGE__N; i++)
			parent->events[i] += rec->events[i];
		xact_tenants = foreach_delete_current(xact_tenants, lc);
	}
}

/* ----------
 * Counters
 * ----------
 */
void
wl_count_n(WlCounter counter, uint32 n)
{
	const char *tenant = wl_tenant_setting;

	if (!wl_shm_preloaded() || tenant == NULL || n == 0)
		return;
	if (counter == WL_COUNT_CLAIM_CONFLICTS || counter == WL_COUNT_STALE_FENCES)
	{
		WlTenantEntry *entry = NULL;

		if (!wl_tenant_open_only(tenant))
			entry = wl_shm_tenant(MyDatabaseId, tenant, true);
		if (entry)
			wl_shm_tenant_count(entry, counter, n);
		return;
	}
	wl_xact_tenant(tenant)->counts[counter] += n;
}

void
wl_count(WlCounter counter)
{
	wl_count_n(counter, 1);
}

bool
wl_tenant_counters(const char *tenant, uint64 *out)
{
	WlTenantEntry *entry;

	if (!wl_shm_preloaded() || wl_tenant_open_only(tenant))
		return false;
	entry = wl_shm_tenant(MyDatabaseId, tenant, false);
	if (entry)
	{
		wl_shm_tenant_counters(entry, out);
		return true;
	}
	memset(out, 0, sizeof(uint64) * WL_COUNT__N);
	/* a tenant without an entry may have counted when there was no room */
	return !wl_shm_tenants_full();
}

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
	static WlStmt stmt WL_KEPT = {
		"SELECT pg_catalog.jsonb_build_object("
		" 'tenant', $1,"
		" 'tasks', (SELECT pg_catalog.jsonb_object_agg(s.state, COALESCE(c.n, 0))"
		"             FROM pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.task_state)) s(state)"
		"             LEFT JOIN (SELECT t.state, pg_catalog.count(*) AS n FROM worklist.task t"
		"                         WHERE t.tenant OPERATOR(pg_catalog.=) $1 GROUP BY t.state) c"
		"               ON c.state OPERATOR(pg_catalog.=) s.state),"
		" 'oldest_pending_age',"
		"   (SELECT pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(t.created_at)"
		"      FROM worklist.task t WHERE t.tenant OPERATOR(pg_catalog.=) $1"
		"       AND t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[])),"
		" 'overdue_tasks',"
		"   (SELECT pg_catalog.count(*) FROM worklist.task t WHERE t.tenant OPERATOR(pg_catalog.=) $1"
		"       AND t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])"
		"       AND t.due_at OPERATOR(pg_catalog.<=) pg_catalog.now()),"
		" 'tickets', (SELECT pg_catalog.jsonb_object_agg(s.state, COALESCE(c.n, 0))"
		"             FROM pg_catalog.unnest(pg_catalog.enum_range(NULL::worklist.ticket_status)) s(state)"
		"             LEFT JOIN (SELECT k.state, pg_catalog.count(*) AS n FROM worklist.ticket k"
		"                         WHERE k.tenant OPERATOR(pg_catalog.=) $1 GROUP BY k.state) c"
		"               ON c.state OPERATOR(pg_catalog.=) s.state),"
		" 'runs', (SELECT pg_catalog.count(*) FROM worklist.run r"
		"           WHERE r.tenant OPERATOR(pg_catalog.=) $1),"
		" 'live_leases', (SELECT pg_catalog.count(*) FROM worklist.run_claim l"
		"                  WHERE l.tenant OPERATOR(pg_catalog.=) $1"
		"                    AND l.expires_at OPERATOR(pg_catalog.>) pg_catalog.now()),"
		" 'counters', pg_catalog.jsonb_build_object("
		"    'claims', $2, 'claim_conflicts', $3, 'take_overs', $4,"
		"    'lease_reclaims', $5, 'stale_fence_refusals', $6, 'claim_timeouts', $7))",
		7, {TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID},
		.name = "stats.stats"
	};
	text	   *tenant = wl_tenant_enter();
	uint64		counters[WL_COUNT__N];
	bool		kept = wl_tenant_counters(text_to_cstring(tenant), counters);
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
