/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  What each transaction did per tenant (stats.c), as the counters and
 *	  the notifications read it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_STATS_H
#define WORKLIST_STATS_H

#include "shmem.h"

/*
 * The counters of a tenant of the current database, copied into out[];
 * false when they are not kept (library not preloaded, or more tenants
 * than the table holds).
 */
extern bool wl_tenant_counters(const char *tenant, uint64 *out);

/*
 * What the current transaction did, per tenant and (sub)transaction level:
 * counts for the counters and events for notifications.  Added to shared
 * memory when the transaction commits (the events: sent at commit when
 * not preloaded); dropped with a (sub)transaction that rolls back.
 */
typedef struct WlXactTenant
{
	char	   *tenant;
	int			nest_level;
	bool		open_only;		/* reached only through worklist.open_tenants:
								 * takes no place in shared memory */
	uint32		counts[WL_COUNT__N];
	uint32		events[WL_CHANGE__N];
} WlXactTenant;

/* The record of a tenant at the current level (TopTransactionContext). */
extern WlXactTenant *wl_xact_tenant(const char *tenant);

/* notify.c: send the events of the records given (not preloaded), at commit. */
extern void wl_notify_at_commit(List *records);

#endif							/* WORKLIST_STATS_H */
