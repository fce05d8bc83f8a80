/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Per-server state in shared memory: cumulative counters and the
 *	  status of each sweeper.
 *
 * Locking: counters are kept per tenant in a shared hash table guarded by
 * counters_lock (shared to find an entry, exclusive to add one); the
 * counters themselves are atomics, incremented under the shared lock.  A sweeper slot is
 * written by the sweeper that owns it (and claimed or released under the
 * spinlock); readers copy a slot out under the spinlock.  Nothing that can
 * fail runs while the spinlock is held.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_STATS_H
#define WORKLIST_STATS_H

#include "worklist.h"

#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#define WL_ERROR_LEN		512
#define WL_MAX_SWEEPERS		8

/* Tenants whose counters shared memory holds (worklist.max_tenant_counters). */
extern int	wl_max_tenant_counters;
/* A tenant name: 256 characters of at most 4 bytes, and the NUL. */
#define WL_TENANT_KEY_LEN	(WL_IDENT_MAX * 4 + 1)

/* Cumulative counters of one tenant (an entry of the shared hash). */
typedef struct WlTenantCounters
{
	char		tenant[WL_TENANT_KEY_LEN];	/* hash key */
	pg_atomic_uint64 counters[WL_COUNT__N];
} WlTenantCounters;

typedef struct WlSweeperStatus
{
	bool		used;			/* slot ever taken since server start */
	pid_t		pid;			/* 0 when its sweeper is not running */
	Oid			database;
	TimestampTz started_at;
	TimestampTz last_tick;
	double		last_duration_ms;
	int64		ticks;
	int64		denied;
	int64		proceeded;
	int64		escalated;
	int64		tickets_escalated;
	int64		tickets_confirmed;
	TimestampTz last_error_at;
	char		last_error[WL_ERROR_LEN];
} WlSweeperStatus;

typedef struct WlShared
{
	slock_t		mutex;			/* protects sweepers[] */
	WlSweeperStatus sweepers[WL_MAX_SWEEPERS];
	LWLock	   *counters_lock;	/* protects the tenant counter hash */
	bool		counters_full;	/* an entry could not be added */
} WlShared;

/*
 * The counters of the current tenant, copied into out[]; false when they
 * are not kept (library not preloaded, or more tenants than the table
 * holds).
 */
extern bool wl_tenant_counters(const char *tenant, uint64 *out);

/* True when loaded through shared_preload_libraries. */
extern bool wl_preloaded;

/*
 * The shared block: created at startup when preloaded; otherwise attached
 * on first use (a dynamically started sweeper still needs somewhere to
 * report to).  Never returns NULL.
 */
extern WlShared *wl_shared_attach(void);

#endif							/* WORKLIST_STATS_H */
