/*-------------------------------------------------------------------------
 *
 * worklist.c
 *	  Module entry point: _PG_init hands off to each part's init (each
 *	  defines the settings it reads), and this file owns the one pair of
 *	  shared-memory hooks (shmem.c makes every structure).
 *
 * Where things live.  The layers, top first.  A file calls into its own
 * layer and the layers below it, never into one above; within a layer,
 * calls run one way only, so no two files call each other.  The section
 * numbers are those of doc/reference.md.  test/tools/layers reads this
 * list (a layer is a line "NAME: ...", its files the indented lines below
 * it) and checks it against the symbols of the built objects.
 *
 * entry: what the server calls
 *	  worklist.c	_PG_init, and the shared-memory hooks
 * control: what SQL and DDL ask of the background workers, sent as
 * messages through shared memory
 *	  control.c		start_sweeper(), sweeper_status() (9)
 *	  utility.c		the ProcessUtility hook: pauses a database's sweeper
 *					for a command that needs the database alone, and tells
 *					the launcher of new databases and extensions (9)
 * workers: the background workers, siblings that meet only in shared
 * memory (each is started by the name of its entry point)
 *	  launcher.c	keeps one sweeper per database with the extension (9)
 *	  sweeper.c		sweeps every tenant of one database and sends its
 *					notifications (9)
 * sweep: one sweep of one tenant, what the verb and the sweeper run
 *	  sweep.c		worklist.sweep(), the parts in order, the due tenants (7)
 * verbs: the concepts, each with its data; a file calls only the files of
 * its own concept and, for retention, each kind's purge
 *	  retention.c	the policy and the schedule of the purge (8), and
 *					erase_tenant(), which removes every kind's rows (2)
 *	  metrics.c		the counts monitoring reads, for pg_monitor (9)
 *	  stats.c		worklist.stats() (9)
 *	  task.c		the verbs that change tasks, and the one place every
 *					change of a task passes (4)
 *	  task_list.c	the reads of tasks (4)
 *	  task_sweep.c	the task parts of the sweep and the task purge (4, 7)
 *	  ticket.c		tickets: the append-only log, its verbs, the watchdog,
 *					the ticket purge (5)
 *	  fold_sql.c	the ticket fold as SQL sees it, and worklist.fold (5)
 *	  fold_store.c	the fold state as stored on the ticket row (5)
 *	  fold.c		the fold's rules (5)
 *	  run_queue.c	runs as a queue of work: park_run, claim_next_run,
 *					conclude_run (6)
 *	  run_state.c	what an agent framework keeps beside a run's
 *					checkpoints: the newest checkpoints, pending writes,
 *					channel values (6)
 *	  run.c			checkpoints, leases and fences, the run purge (6)
 *	  runlist.c		list_durable_runs and its cursor (6)
 * change: what a transaction changed, recorded beneath every verb (what
 * the verbs of two concepts both need done when something changes -- runs
 * parked on tasks, say -- belongs here, so that no concept calls another)
 *	  settle.c		what every change of a task leaves beside its row: its
 *					history, and for a settlement the parks of runs that
 *					await it (4, 6)
 *	  change.c		per tenant: the counts notifications carry, and the
 *					counters of stats() (9)
 *	  hint.c		where claim_next starts, and what lowers it (4)
 * sending: notifications on their way out
 *	  channel.c		each tenant's channel, payloads, the send at commit and
 *					the sweeper's send; channel(), rotate_channel() (9)
 * tenancy: who may reach a tenant, and as what
 *	  binding.c		bindings: grant_tenant, revoke_tenant, role_ref (2)
 *	  trust.c		what a member binding may say (2)
 *	  tenant.c		the tenant setting, reach (2)
 * ground: what every layer above stands on
 *	  spi.c			statements kept and run as the extension's owner
 *	  args.c		argument checks, instants and intervals (1)
 *	  errors.c		the documented refusals (3)
 *	  shmem.c		every structure in shared memory, and its locks
 *	  worker.c		the plumbing every background worker shares
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
