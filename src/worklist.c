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

char	   *wl_tenant_setting = NULL;
bool		wl_open_tenants = false;
int			wl_max_document_size = 1024 * 1024;
static char *wl_max_clock_skew_setting = NULL;
bool		wl_notify_enabled = true;
char	   *wl_database = NULL;
int			wl_sweep_interval = 1000;
int			wl_sweep_batch = 500;
int			wl_sweep_budget = 500;
int			wl_max_tenant_counters = 4096;


void
_PG_init(void)
{
	DefineCustomStringVariable("worklist.tenant",
							   "Tenant whose rows worklist verbs read and write.",
							   NULL,
							   &wl_tenant_setting,
							   "default",
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomBoolVariable("worklist.open_tenants",
							 "Let every role reach a tenant that has no binding, acting as service.",
							 "Off: a tenant is reachable only through a binding, by its owner and by superusers.",
							 &wl_open_tenants,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("worklist.max_clock_skew",
							   "How far from now() a member's write verbs may set their clock.",
							   "An interval; the bound is inclusive.",
							   &wl_max_clock_skew_setting,
							   "5 seconds",
							   PGC_SUSET,
							   0,
							   wl_check_clock_skew, wl_assign_clock_skew, NULL);

	DefineCustomIntVariable("worklist.max_document_size",
							"Largest jsonb document a verb stores (payload, decision, body).",
							NULL,
							&wl_max_document_size,
							1024 * 1024, 1, INT_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);

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

	DefineCustomIntVariable("worklist.sweep_budget",
							"Longest time one tenant's batch of the sweeper may run.",
							"A batch still running then is rolled back and tried again with half as many rows, so that one tenant delays the others by at most this much.",
							&wl_sweep_budget,
							500, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
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
