/*-------------------------------------------------------------------------
 *
 * change.c
 *	  What each transaction changed, per tenant: the counts its
 *	  notifications carry and the cumulative counters of stats().  Beneath
 *	  every verb: a verb records here what it changed, and nothing here
 *	  knows any verb.
 *
 * One record per tenant and (sub)transaction level, in
 * TopTransactionContext.  A subtransaction that commits hands its records
 * to its parent; one that rolls back takes them with it.  When the
 * transaction commits, the records are added to the tenant's entry in
 * shared memory, where the database's sweeper finds the notifications
 * (shmem.c, channel.c); without the library preloaded, the transaction
 * sends its notifications itself at its commit (channel.c).
 *
 * The counters count what an operator must see to know work was rescued
 * or a stalled writer stopped: claims, claim conflicts, take-overs, claim
 * timeouts, lease reclaims and stale-fence refusals.  They are kept per
 * database and tenant (a tenant must not learn about another's activity,
 * nor a database about another's) in the tenant table in shared memory, so
 * every backend adds to the same numbers, and they start from zero with
 * the server.  Entries are only made for tenants a verb has entered
 * (wl_tenant_enter: closed tenancy), so a caller cannot fill the table
 * with tenants it makes up; the table has a hard cap and says once in the
 * log when it is full.  Nothing of this is kept when the library is not
 * preloaded (the space is requested at startup); stats() then reports the
 * counters as NULL rather than as numbers that silently miss events.
 *
 *-------------------------------------------------------------------------
 */
#include "change.h"
#include "channel.h"
#include "shmem.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* What the current transaction did in one tenant, at one level. */
typedef struct XactTenant
{
	char	   *tenant;
	int			nest_level;
	bool		open_only;		/* reached only through worklist.open_tenants:
								 * takes no place in shared memory */
	uint32		counts[WL_COUNT__N];
	uint32		events[WL_CHANGE__N];
} XactTenant;

static List *xact_tenants = NIL;
static XactTenant *xact_last = NULL;	/* the last record used */
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

/* The record of a tenant at the current level (TopTransactionContext). */
static XactTenant *
xact_tenant(const char *tenant)
{
	int			level = GetCurrentTransactionNestLevel();
	MemoryContext old;
	XactTenant *rec;
	ListCell   *lc;

	if (xact_last && xact_last->nest_level == level &&
		strcmp(xact_last->tenant, tenant) == 0)
		return xact_last;
	foreach(lc, xact_tenants)
	{
		rec = (XactTenant *) lfirst(lc);
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
	rec = palloc0(sizeof(XactTenant));
	rec->tenant = pstrdup(tenant);
	rec->nest_level = level;
	rec->open_only = wl_tenant_open_only(tenant);
	xact_tenants = lappend(xact_tenants, rec);
	MemoryContextSwitchTo(old);
	return xact_last = rec;
}

/* Send the events of the records given, in this transaction (at its commit). */
static void
send_now(List *records)
{
	int			n = list_length(records);
	char	  **tenants = palloc(sizeof(char *) * n);
	uint32	  **events = palloc(sizeof(uint32 *) * n);
	int			i = 0;
	ListCell   *lc;

	foreach(lc, records)
	{
		XactTenant *rec = (XactTenant *) lfirst(lc);

		tenants[i] = rec->tenant;
		events[i++] = rec->events;
	}
	wl_channel_send_now(n, tenants, events);
}

/* Add what the records say to shared memory.  Never raises. */
static void
publish(void)
{
	bool		wake = false;
	ListCell   *lc;

	foreach(lc, xact_tenants)
	{
		XactTenant *rec = (XactTenant *) lfirst(lc);
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
		XactTenant *rec = (XactTenant *) lfirst(lc);
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
	send_now(direct);
	foreach(lc, direct)
		memset(((XactTenant *) lfirst(lc))->events, 0,
			   sizeof(((XactTenant *) NULL)->events));
	list_free(direct);
}

static void
xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (!wl_shm_preloaded() && xact_tenants != NIL)
				send_now(xact_tenants);
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
					memset(((XactTenant *) lfirst(lc))->events, 0,
						   sizeof(((XactTenant *) NULL)->events));
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
		XactTenant *rec = (XactTenant *) lfirst(lc);
		XactTenant *parent = NULL;
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
			XactTenant *p = (XactTenant *) lfirst(pc);

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
 * Recording
 * ----------
 */
void
wl_change_record(const char *tenant, WlChange change)
{
	if (!wl_notify_enabled)
		return;
	xact_tenant(tenant)->events[change]++;
}

void
wl_change_record_text(text *tenant, WlChange change)
{
	wl_change_record_text_n(tenant, change, 1);
}

void
wl_change_record_text_n(text *tenant, WlChange change, uint32 n)
{
	if (!wl_notify_enabled || n == 0)
		return;
	xact_tenant(text_to_cstring(tenant))->events[change] += n;
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
	xact_tenant(tenant)->counts[counter] += n;
}

void
wl_count(WlCounter counter)
{
	wl_count_n(counter, 1);
}

bool
wl_change_counters(const char *tenant, uint64 *out)
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
