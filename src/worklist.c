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
#include "stats.h"

#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

bool		wl_notify_enabled = true;
char	   *wl_database = NULL;
int			wl_sweep_interval = 1000;
int			wl_sweep_batch = 500;
int			wl_max_tenant_counters = 4096;


void
_PG_init(void)
{
	wl_tenant_init();
	wl_trust_init();
	wl_args_init();

	DefineCustomBoolVariable("worklist.notify",
							 "Notify the tenant's channel of the changes of tasks, tickets and runs.",
							 "Off: changes made while it is off are not notified.",
							 &wl_notify_enabled,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("worklist.database",
							   "Ignored: every database with the extension has its own sweeper.",
							   "Accepted so that configurations of version 0.2 still load; the launcher logs once that it is ignored.",
							   &wl_database,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("worklist.sweep_interval",
							"Time between two ticks of the sweeper.",
							NULL,
							&wl_sweep_interval,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("worklist.sweep_batch",
							"Rows the sweeper settles per transaction.",
							NULL,
							&wl_sweep_batch,
							500, 1, WL_SWEEP_LIMIT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	/* sizes shared memory: only when preloaded (counters need that anyway) */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("worklist.max_tenant_counters",
								"Tenants whose cumulative counters shared memory holds.",
								"Counters of further tenants are not kept (stats() shows them as NULL).",
								&wl_max_tenant_counters,
								4096, 16, 1000000,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

	MarkGUCPrefixReserved("worklist");

	/* pg_upgrade loads libraries only to check them; start nothing then */
	if (IsBinaryUpgrade)
		return;

	wl_stats_shmem_init();
	wl_hint_shmem_init();
	wl_launcher_init();
}
