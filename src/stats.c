/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Shared memory for per-server state, what each transaction did per
 *	  tenant, the cumulative counters, and worklist.stats().
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
 * Locking: see stats.h.
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

bool		wl_preloaded = false;

/* Sweeper slots without preloading: a few databases can use start_sweeper(). */
#define WL_SLOTS_DYNAMIC	4
/* With preloading: one per worker process, and a few for paused databases. */
#define WL_SLOTS_SPARE		8

static WlShared *wl_shared = NULL;
static HTAB *tenant_hash = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static int
slot_count(void)
{
	return wl_preloaded ? max_worker_processes + WL_SLOTS_SPARE : WL_SLOTS_DYNAMIC;
}

static Size
shared_size(void)
{
	return add_size(offsetof(WlShared, slots),
					mul_size(slot_count(), sizeof(WlSweeperSlot)));
}

static void
wl_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(shared_size()));
	RequestAddinShmemSpace(hash_estimate_size(wl_max_tenant_counters,
											  sizeof(WlTenantEntry)));
}

/* The tenant hash compares the database and the name up to its NUL. */
static uint32
tenant_key_hash(const void *key, Size keysize)
{
	const WlTenantKey *k = (const WlTenantKey *) key;

	return hash_bytes((const unsigned char *) k->tenant, strlen(k->tenant)) ^
		hash_uint32((uint32) k->database);
}

static int
tenant_key_match(const void *key1, const void *key2, Size keysize)
{
	const WlTenantKey *a = (const WlTenantKey *) key1;
	const WlTenantKey *b = (const WlTenantKey *) key2;

	if (a->database != b->database)
		return 1;
	return strcmp(a->tenant, b->tenant);
}

WlShared *
wl_shared_attach(void)
{
	bool		found;

	if (wl_shared)
		return wl_shared;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wl_shared = ShmemInitStruct("worklist", shared_size(), &found);
	if (!found)
	{
		memset(wl_shared, 0, shared_size());
		wl_shared->tranche_id = LWLockNewTrancheId();
		LWLockInitialize(&wl_shared->lock, wl_shared->tranche_id);
		LWLockInitialize(&wl_shared->tenants_lock, wl_shared->tranche_id);
		wl_shared->launcher_procno = -1;
		wl_shared->nslots = slot_count();
		for (int i = 0; i < wl_shared->nslots; i++)
			wl_shared->slots[i].pgprocno = -1;
	}
	if (wl_preloaded)
	{
		HASHCTL		info;

		info.keysize = sizeof(WlTenantKey);
		info.entrysize = sizeof(WlTenantEntry);
		info.hash = tenant_key_hash;
		info.match = tenant_key_match;
		tenant_hash = ShmemInitHash("worklist tenants",
									wl_max_tenant_counters,
									wl_max_tenant_counters,
									&info,
									HASH_ELEM | HASH_FUNCTION | HASH_COMPARE);
	}
	LWLockRelease(AddinShmemInitLock);
	LWLockRegisterTranche(wl_shared->tranche_id, "worklist");
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

static void
make_key(WlTenantKey *key, Oid database, const char *tenant)
{
	memset(key, 0, sizeof(*key));
	key->database = database;
	strlcpy(key->tenant, tenant, sizeof(key->tenant));
}

WlTenantEntry *
wl_tenant_entry(Oid database, const char *tenant, bool create)
{
	WlShared   *shared;
	WlTenantEntry *entry;
	WlTenantKey key;
	bool		found;
	bool		became_full = false;

	if (!wl_preloaded)
		return NULL;
	shared = wl_shared_attach();
	make_key(&key, database, tenant);

	LWLockAcquire(&shared->tenants_lock, LW_SHARED);
	entry = hash_search(tenant_hash, &key, HASH_FIND, NULL);
	LWLockRelease(&shared->tenants_lock);
	if (entry != NULL || !create)
		return entry;

	LWLockAcquire(&shared->tenants_lock, LW_EXCLUSIVE);
	/* a hard cap: the table must not eat shared memory others need */
	if (hash_get_num_entries(tenant_hash) < wl_max_tenant_counters)
		entry = hash_search(tenant_hash, &key, HASH_ENTER_NULL, &found);
	else
		entry = hash_search(tenant_hash, &key, HASH_FIND, &found);
	if (entry == NULL)
	{
		became_full = !shared->tenants_full;
		shared->tenants_full = true;
	}
	else if (!found)
	{
		for (int i = 0; i < WL_COUNT__N; i++)
			pg_atomic_init_u64(&entry->counters[i], 0);
		for (int i = 0; i < WL_CHANGE__N; i++)
			pg_atomic_init_u32(&entry->events[i], 0);
		pg_atomic_init_u32(&entry->queued, 0);
		entry->next_dirty = NULL;
	}
	LWLockRelease(&shared->tenants_lock);

	if (became_full)
		ereport(LOG,
				(errmsg("worklist tenant table is full: counters and notifications of further tenants are not kept"),
				 errdetail("Shared memory holds %d tenants (of all databases).",
						   wl_max_tenant_counters),
				 errhint("Raise worklist.max_tenant_counters (needs a restart).")));
	return entry;
}

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
		entry = wl_tenant_entry(MyDatabaseId, rec->tenant, true);
		if (entry == NULL)
			continue;			/* full: lost, and said so once */

		for (int i = 0; i < WL_COUNT__N; i++)
			if (rec->counts[i] != 0)
				pg_atomic_fetch_add_u64(&entry->counters[i], rec->counts[i]);
		any = false;
		for (int i = 0; i < WL_CHANGE__N; i++)
			if (rec->events[i] != 0)
			{
				pg_atomic_fetch_add_u32(&entry->events[i], rec->events[i]);
				any = true;
			}
		if (any && wl_tenant_queue(entry))
			wake = true;
	}
	if (wake)
		wl_notify_wake_sweeper();
}

bool
wl_tenant_queue(WlTenantEntry *entry)
{
	uint32		expected = 0;
	WlShared   *shared;

	if (!pg_atomic_compare_exchange_u32(&entry->queued, &expected, 1))
		return false;
	shared = wl_shared_attach();
	LWLockAcquire(&shared->tenants_lock, LW_EXCLUSIVE);
	entry->next_dirty = shared->dirty_head;
	shared->dirty_head = entry;
	LWLockRelease(&shared->tenants_lock);
	return true;
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
			wl_tenant_entry(MyDatabaseId, rec->tenant, true) == NULL)
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
			if (!wl_preloaded && xact_tenants != NIL)
				wl_notify_at_commit(xact_tenants);
			else if (xact_tenants != NIL)
				notify_unshared();
			break;
		case XACT_EVENT_COMMIT:
			if (wl_preloaded)
				publish();
			xact_forget();
			break;
		case XACT_EVENT_PREPARE:
			/*
			 * Counters count a prepared claim as PostgreSQL counts a prepared
			 * transaction's work; its notifications are dropped: whether it
			 * will commit is not known here.
			 */
			if (wl_preloaded)
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

	if (!wl_preloaded || tenant == NULL || n == 0)
		return;
	if (counter == WL_COUNT_CLAIM_CONFLICTS || counter == WL_COUNT_STALE_FENCES)
	{
		WlTenantEntry *entry = NULL;

		if (!wl_tenant_open_only(tenant))
			entry = wl_tenant_entry(MyDatabaseId, tenant, true);
		if (entry)
			pg_atomic_fetch_add_u64(&entry->counters[counter], n);
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
	WlShared   *shared;
	WlTenantEntry *entry;
	bool		full;

	if (!wl_preloaded || wl_tenant_open_only(tenant))
		return false;
	shared = wl_shared_attach();
	entry = wl_tenant_entry(MyDatabaseId, tenant, false);
	if (entry)
	{
		for (int i = 0; i < WL_COUNT__N; i++)
			out[i] = pg_atomic_read_u64(&entry->counters[i]);
		return true;
	}
	memset(out, 0, sizeof(uint64) * WL_COUNT__N);
	/* a tenant without an entry may have counted when there was no room */
	LWLockAcquire(&shared->tenants_lock, LW_SHARED);
	full = shared->tenants_full;
	LWLockRelease(&shared->tenants_lock);
	return !full;
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
