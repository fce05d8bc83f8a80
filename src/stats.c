/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Shared memory for per-server state, the cumulative counters, and
 *	  worklist.stats().
 *
 * The counters count what an operator must see to know work was rescued
 * or a stalled writer stopped: claims, claim conflicts, take-overs, lease
 * reclaims and stale-fence refusals.  They are kept per tenant (a tenant
 * must not learn about another's activity) in a hash table in shared
 * memory, so every backend adds to the same numbers, and they start from
 * zero with the server.  They are only kept when the library is preloaded
 * (the space is requested at startup); otherwise stats() reports them as
 * NULL rather than as numbers that silently miss events.
 *
 *-------------------------------------------------------------------------
 */
#include "stats.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

bool		wl_preloaded = false;

static WlShared *wl_shared = NULL;
static HTAB *tenant_counters = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
wl_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(WlShared)));
	RequestAddinShmemSpace(hash_estimate_size(wl_max_tenant_counters,
											  sizeof(WlTenantCounters)));
	RequestNamedLWLockTranche("worklist", 1);
}

WlShared *
wl_shared_attach(void)
{
	bool		found;

	if (wl_shared)
		return wl_shared;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wl_shared = ShmemInitStruct("worklist", sizeof(WlShared), &found);
	if (!found)
	{
		SpinLockInit(&wl_shared->mutex);
		memset(wl_shared->sweepers, 0, sizeof(wl_shared->sweepers));
		wl_shared->counters_lock = NULL;
		wl_shared->counters_full = false;
		if (wl_preloaded)
			wl_shared->counters_lock = &(GetNamedLWLockTranche("worklist"))->lock;
	}
	if (wl_preloaded)
	{
		HASHCTL		info;

		info.keysize = WL_TENANT_KEY_LEN;
		info.entrysize = sizeof(WlTenantCounters);
		tenant_counters = ShmemInitHash("worklist tenant counters",
										wl_max_tenant_counters,
										wl_max_tenant_counters,
										&info,
										HASH_ELEM | HASH_STRINGS);
	}
	LWLockRelease(AddinShmemInitLock);
	return wl_shared;
}

static void
wl_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	wl_shared = NULL;
	(void) wl_shared_attach();
}

void
wl_stats_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	wl_preloaded = true;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wl_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wl_shmem_startup;
}

/* Add n to a counter of tenant in shared memory. */
static void
count_now(const char *tenant, WlCounter counter, uint64 n)
{
	WlShared   *shared = wl_shared_attach();
	WlTenantCounters *entry;
	char		key[WL_TENANT_KEY_LEN];
	bool		found;
	bool		became_full = false;

	strlcpy(key, tenant, sizeof(key));

	LWLockAcquire(shared->counters_lock, LW_SHARED);
	entry = hash_search(tenant_counters, key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		LWLockRelease(shared->counters_lock);
		LWLockAcquire(shared->counters_lock, LW_EXCLUSIVE);
		/* a hard cap: the table must not eat shared memory others need */
		if (hash_get_num_entries(tenant_counters) < wl_max_tenant_counters)
			entry = hash_search(tenant_counters, key, HASH_ENTER_NULL, &found);
		else
			entry = hash_search(tenant_counters, key, HASH_FIND, &found);
		if (entry == NULL)
		{
			became_full = !shared->counters_full;
			shared->counters_full = true;
		}
		else if (!found)
			for (int i = 0; i < WL_COUNT__N; i++)
				pg_atomic_init_u64(&entry->counters[i], 0);
	}
	if (entry)
		pg_atomic_fetch_add_u64(&entry->counters[counter], n);
	LWLockRelease(shared->counters_lock);

	if (became_full)
		ereport(LOG,
				(errmsg("worklist counters are full: counters of further tenants are not kept"),
				 errdetail("Shared memory holds the counters of %d tenants.",
						   wl_max_tenant_counters),
				 errhint("Raise worklist.max_tenant_counters (needs a restart).")));
}

/*
 * Counts of this transaction not yet added to shared memory: a claim,
 * take-over or lease reclaim counts when its transaction commits, so a
 * rolled-back one is not counted.  Each entry remembers the
 * (sub)transaction level it was made at, so a rolled-back subtransaction
 * takes its counts with it.  Allocated in TopTransactionContext.
 */
typedef struct PendingCount
{
	int			nest_level;
	WlCounter	counter;
	char	   *tenant;
} PendingCount;

static List *pending_counts = NIL;
static bool xact_callbacks_registered = false;

static void
counts_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			foreach(lc, pending_counts)
			{
				PendingCount *pc = (PendingCount *) lfirst(lc);

				count_now(pc->tenant, pc->counter, 1);
			}
			pending_counts = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			pending_counts = NIL;
			break;
		default:
			break;
	}
}

static void
counts_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		foreach(lc, pending_counts)
		{
			PendingCount *pc = (PendingCount *) lfirst(lc);

			if (pc->nest_level >= level)
				pending_counts = foreach_delete_current(pending_counts, lc);
		}
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, pending_counts)
		{
			PendingCount *pc = (PendingCount *) lfirst(lc);

			if (pc->nest_level >= level)
				pc->nest_level = level - 1;
		}
	}
}

/*
 * Count an event of a tenant.  Claims, take-overs, lease reclaims and claim
 * timeouts count at commit; claim conflicts and stale-fence refusals are
 * refusals, which end their transaction in an error, so they count at
 * once.
 */
void
wl_count_tenant(const char *tenant, WlCounter counter)
{
	MemoryContext old;
	PendingCount *pc;

	if (!wl_preloaded || tenant == NULL)
		return;
	if (counter == WL_COUNT_CLAIM_CONFLICTS || counter == WL_COUNT_STALE_FENCES)
	{
		count_now(tenant, counter, 1);
		return;
	}

	if (!xact_callbacks_registered)
	{
		RegisterXactCallback(counts_xact_callback, NULL);
		RegisterSubXactCallback(counts_subxact_callback, NULL);
		xact_callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	pc = palloc(sizeof(PendingCount));
	pc->nest_level = GetCurrentTransactionNestLevel();
	pc->counter = counter;
	pc->tenant = pstrdup(tenant);
	pending_counts = lappend(pending_counts, pc);
	MemoryContextSwitchTo(old);
}

/* Count an event of the current tenant (the worklist.tenant setting). */
void
wl_count(WlCounter counter)
{
	wl_count_tenant(wl_tenant_setting, counter);
}

bool
wl_tenant_counters(const char *tenant, uint64 *out)
{
	WlShared   *shared;
	WlTenantCounters *entry;
	char		key[WL_TENANT_KEY_LEN];
	bool		kept = true;

	if (!wl_preloaded)
		return false;
	shared = wl_shared_attach();
	strlcpy(key, tenant, sizeof(key));

	LWLockAcquire(shared->counters_lock, LW_SHARED);
	entry = hash_search(tenant_counters, key, HASH_FIND, NULL);
	if (entry)
		for (int i = 0; i < WL_COUNT__N; i++)
			out[i] = pg_atomic_read_u64(&entry->counters[i]);
	else if (shared->counters_full)
		kept = false;			/* it may have counted and had no room */
	else
		memset(out, 0, sizeof(uint64) * WL_COUNT__N);
	LWLockRelease(shared->counters_lock);
	return kept;
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
		7, {TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID}, .name = "stats.tenant"
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
