/*-------------------------------------------------------------------------
 *
 * worklist.c
 *	  Module entry point: the settings, then hand-off to each subsystem.
 *
 * Where things live:
 *	  tenant.c		tenant setting, bindings, erasure
 *	  args.c		argument validation;  errors.c  documented refusals
 *	  spi.c			prepared statements run as the extension owner
 *	  task.c		tasks (doc/reference.md, section 4)
 *	  ticket.c		tickets: the append-only log and its verbs (section 2)
 *	  fold.c		the ticket fold (section 2, rules 1-7); fold_store.c
 *					its stored form; fold_sql.c  its SQL face
 *	  run.c			checkpoints, leases and fences (section 3)
 *	  runlist.c		list_durable_runs and its cursor (section 3)
 *	  sweep.c		the sweep verb (section 4)
 *	  sweeper.c		the sweeper, one background worker per database (4)
 *	  launcher.c	the launcher that keeps them, and its utility hook (4)
 *	  stats.c		shared memory, counters, stats() (5)
 *	  notify.c		notifications: channels, payloads, sending (5)
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"
#include "channel.h"
#include "shmem.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The one pair of shared-memory hooks: shmem.c makes every structure. */
static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	wl_shmem_request();
}

static void
shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	wl_shmem_startup();
}

void
_PG_init(void)
{
	wl_tenant_init();
	wl_trust_init();
	wl_args_init();

	wl_channel_init();
	wl_launcher_init();
	wl_sweeper_init();
	wl_shmem_init();

	MarkGUCPrefixReserved("worklist");

	/* pg_upgrade loads libraries only to check them; start nothing then */
	if (IsBinaryUpgrade)
		return;

	if (!process_shared_preload_libraries_in_progress)
		return;

	/* preloaded: shared memory made at server start, the launcher, the hook */
	wl_shmem_preload();
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;
	wl_launcher_register();
	wl_utility_init();
}
