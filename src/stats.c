/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Shared memory for per-server state, the cumulative counters, and
 *	  worklist.stats().
 *
 * The counters count what an operator must see to know work was rescued
 * or a stalled writer stopped: claims, claim conflicts, take-overs, lease
 * reclaims and stale-fence refusals.  They live in shared memory, so every
 * backend adds to the same numbers and they start from zero with the
 * server.  They are only kept when the library is preloaded (the space is
 * requested at startup); otherwise stats() reports them as NULL rather
 * than as numbers that would silently miss events.
 *
 *-------------------------------------------------------------------------
 */
#include "stats.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

bool		wl_preloaded = false;

static WlShared *wl_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
wl_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(WlShared)));
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
		for (int i = 0; i < WL_COUNT__N; i++)
			pg_atomic_init_u64(&wl_shared->counters[i], 0);
		SpinLockInit(&wl_shared->mutex);
		memset(&wl_shared->sweeper, 0, sizeof(wl_shared->sweeper));
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

void
wl_count(WlCounter counter)
{
	if (!wl_preloaded)
		return;
	pg_atomic_fetch_add_u64(&wl_shared_attach()->counters[counter], 1);
}
