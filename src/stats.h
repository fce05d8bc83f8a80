/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Per-server state in shared memory: cumulative counters and the
 *	  sweeper's status.
 *
 * Locking: the counters are atomics and need no lock.  The sweeper block
 * is written by the sweeper only and read by anybody; both sides hold its
 * spinlock for the (short, non-erroring) copy in or out.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_STATS_H
#define WORKLIST_STATS_H

#include "worklist.h"

#include "port/atomics.h"
#include "storage/spin.h"

#define WL_ERROR_LEN 512

typedef struct WlSweeperStatus
{
	pid_t		pid;			/* 0 when no sweeper runs */
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
	pg_atomic_uint64 counters[WL_COUNT__N];
	slock_t		mutex;			/* protects sweeper */
	WlSweeperStatus sweeper;
} WlShared;

/* True when loaded through shared_preload_libraries. */
extern bool wl_preloaded;

/*
 * The shared block: set at startup when preloaded; otherwise attached on
 * first use (a dynamically started sweeper still needs somewhere to report
 * to).  Never NULL after the call.
 */
extern WlShared *wl_shared_attach(void);

#endif							/* WORKLIST_STATS_H */
