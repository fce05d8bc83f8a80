/*-------------------------------------------------------------------------
 *
 * sweeper.c
 *	  The sweeper: a background worker that runs the sweep for every
 *	  tenant of one database, so expiry policies and ticket escalations
 *	  fire without anybody calling worklist.sweep().
 *
 * With shared_preload_libraries = 'worklist' one sweeper is registered at
 * server start for worklist.database; worklist.start_sweeper() starts one
 * for the current database where the library is not preloaded.  It starts
 * only once the server accepts writes (never on a hot standby: it starts
 * when the standby is promoted), and is restarted after a crash.
 *
 * A tick:
 *	 1. lists the tenants that have tasks or tickets (a loose scan of the
 *		primary keys: one index probe per tenant);
 *	 2. in rounds, gives every tenant that may still have due work one batch
 *		of worklist.sweep_batch rows -- its overdue tasks, then its due
 *		tickets -- each batch in a transaction of its own, so no row lock is
 *		held longer than one batch and a tenant with a large backlog delays
 *		another tenant by at most one batch;
 *	 3. stops when every tenant came back with less than a full batch, or
 *		when the tick has used its budget (one sweep_interval, at least one
 *		second), in which case the next tick starts without waiting.
 * Rows a reviewer holds locked are skipped (SKIP LOCKED in the sweeps), so
 * a batch of them never blocks the rows behind.
 *
 * An error in a tick is logged, recorded in the sweeper's status, and the
 * next tick goes on.  While the extension is not installed in the database
 * the sweeper says so once and waits.
 *
 *-------------------------------------------------------------------------
 */
#include "worklist.h"
#include "stats.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PGDLLEXPORT void wl_sweeper_main(Datum main_arg);
void		wl_sweeper_init(void);

PG_FUNCTION_INFO_V1(wl_start_sweeper);
PG_FUNCTION_INFO_V1(wl_sweeper_status);

/* Seconds before the postmaster restarts a sweeper that exited with an error. */
#define SWEEPER_RESTART_SECONDS 5

/* This sweeper's slot in shared memory. */
static WlSweeperStatus *my_slot = NULL;

/* Database named by worklist.database when this sweeper connected. */
static char *connected_to = NULL;

/* Name of the database this sweeper works in (for messages). */
static char *database_name = NULL;

/* Has the "waiting for the extension" line been logged? */
static bool announced_missing = false;

static void
fill_worker(BackgroundWorker *worker, Oid database)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = SWEEPER_RESTART_SECONDS;
	strlcpy(worker->bgw_library_name, "worklist", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, "wl_sweeper_main", BGW_MAXLEN);
	strlcpy(worker->bgw_name, "worklist sweeper", BGW_MAXLEN);
	strlcpy(worker->bgw_type, "worklist sweeper", BGW_MAXLEN);
	worker->bgw_main_arg = ObjectIdGetDatum(database);
}

void
wl_sweeper_init(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		return;
	/* InvalidOid: connect to worklist.database */
	fill_worker(&worker, InvalidOid);
	RegisterBackgroundWorker(&worker);
}

/* ----------
 * Status slot
 * ----------
 */
static void
release_slot(int code, Datum arg)
{
	WlShared   *shared = wl_shared_attach();

	if (my_slot == NULL)
		return;
	SpinLockAcquire(&shared->mutex);
	if (my_slot->pid == MyProcPid)
		my_slot->pid = 0;
	SpinLockRelease(&shared->mutex);
	my_slot = NULL;
}

/*
 * Take the slot of this database (or a free one) and mark it running.
 * One sweeper per database: when another one already runs there (say the
 * preloaded one came back while start_sweeper() had started another), this
 * one leaves for good (exit code 0: the postmaster does not restart it).
 */
static void
claim_slot(Oid database)
{
	WlShared   *shared = wl_shared_attach();
	WlSweeperStatus *slot = NULL;
	pid_t		other = 0;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < WL_MAX_SWEEPERS && slot == NULL; i++)
		if (shared->sweepers[i].used && shared->sweepers[i].database == database)
			slot = &shared->sweepers[i];
	if (slot && slot->pid != 0 && slot->pid != MyProcPid)
	{
		other = slot->pid;
		slot = NULL;
	}
	else
	{
		for (int i = 0; i < WL_MAX_SWEEPERS && slot == NULL; i++)
			if (!shared->sweepers[i].used || shared->sweepers[i].pid == 0)
			{
				slot = &shared->sweepers[i];
				memset(slot, 0, sizeof(*slot));
			}
		if (slot)
		{
			slot->used = true;
			slot->pid = MyProcPid;
			slot->database = database;
			slot->started_at = GetCurrentTimestamp();
		}
	}
	SpinLockRelease(&shared->mutex);

	if (other != 0)
	{
		ereport(LOG,
				(errmsg("worklist sweeper exits: sweeper %d already works in this database",
						(int) other)));
		proc_exit(0);
	}
	if (slot == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many worklist sweepers"),
				 errdetail("At most %d sweepers can run at once.", WL_MAX_SWEEPERS)));
	my_slot = slot;
	before_shmem_exit(release_slot, (Datum) 0);
}

static void
record_tick(TimestampTz start, const WlSweepResult *done)
{
	WlShared   *shared = wl_shared_attach();
	TimestampTz end = GetCurrentTimestamp();

	SpinLockAcquire(&shared->mutex);
	my_slot->last_tick = end;
	my_slot->last_duration_ms = (double) (end - start) / 1000.0;
	my_slot->ticks++;
	my_slot->denied += done->denied;
	my_slot->proceeded += done->proceeded;
	my_slot->escalated += done->escalated;
	my_slot->tickets_escalated += done->tickets_escalated;
	my_slot->tickets_confirmed += done->tickets_confirmed;
	SpinLockRelease(&shared->mutex);
}

static void
record_error(const char *message)
{
	WlShared   *shared = wl_shared_attach();
	TimestampTz at = GetCurrentTimestamp();
	/* cut at a character boundary: half a character is not valid text */
	int			len = pg_mbcliplen(message, strlen(message), WL_ERROR_LEN - 1);

	SpinLockAcquire(&shared->mutex);
	my_slot->last_error_at = at;
	memcpy(my_slot->last_error, message, len);
	my_slot->last_error[len] = '\0';
	SpinLockRelease(&shared->mutex);
}

/* ----------
 * One tick
 * ----------
 */
static void
begin_xact(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
end_xact(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The tenants with something due, in a transaction of their own.  Returns
 * a list of text datums allocated in cxt; NIL when the extension is not
 * installed.
 */
static List *
list_tenants(MemoryContext cxt, bool *installed)
{
	List	   *tenants = NIL;
	WlSpi		spi;

	begin_xact("worklist sweeper: listing tenants");
	*installed = OidIsValid(get_extension_oid("worklist", true));
	if (*installed)
	{
		wl_spi_begin(&spi);
		tenants = wl_due_tenants(GetCurrentTransactionStartTimestamp(), cxt);
		wl_spi_end(&spi);
	}
	end_xact();
	return tenants;
}

/*
 * One batch for one tenant, in a transaction of its own.  Returns whether
 * the batch came back full, i.e. whether more may be due.
 */
static bool
sweep_batch(text *tenant, int batch, WlSweepResult *total)
{
	WlSweepResult r = {0};
	WlSpi		spi;
	TimestampTz now;
	bool		full;

	begin_xact("worklist sweeper: sweeping");
	if (!OidIsValid(get_extension_oid("worklist", true)))
	{
		end_xact();
		return false;
	}
	now = GetCurrentTransactionStartTimestamp();
	wl_spi_begin(&spi);
	wl_sweep_tenant(tenant, now, batch, &r);
	wl_spi_end(&spi);
	end_xact();

	full = wl_sweep_full(&r, batch);
	wl_sweep_add(total, &r);
	return full;
}

/*
 * Run one tick.  Returns true when it stopped on its budget with work
 * left, so the caller starts the next one without waiting.
 */
static bool
tick(MemoryContext cxt)
{
	TimestampTz start = GetCurrentTimestamp();
	long		budget_ms = Max(wl_sweep_interval, 1000);
	WlSweepResult done = {0};
	bool		installed;
	List	   *busy;
	bool		more = false;

	busy = list_tenants(cxt, &installed);
	if (!installed)
	{
		if (!announced_missing)
			ereport(LOG,
					(errmsg("worklist sweeper is waiting for the extension to be created in database \"%s\"",
							database_name)));
		announced_missing = true;
		return false;
	}
	if (announced_missing)
		ereport(LOG,
				(errmsg("worklist sweeper found the extension in database \"%s\"",
						database_name)));
	announced_missing = false;

	/* Rounds: one batch per tenant that may still have due work. */
	while (busy != NIL)
	{
		List	   *still = NIL;
		ListCell   *lc;

		foreach(lc, busy)
		{
			text	   *tenant = (text *) lfirst(lc);

			CHECK_FOR_INTERRUPTS();
			if (sweep_batch(tenant, wl_sweep_batch, &done))
			{
				MemoryContext old = MemoryContextSwitchTo(cxt);

				still = lappend(still, tenant);
				MemoryContextSwitchTo(old);
			}
		}
		busy = still;
		if (busy != NIL &&
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), budget_ms))
		{
			more = true;
			break;
		}
	}

	record_tick(start, &done);
	return more;
}

/* ----------
 * Main loop
 * ----------
 */
void
wl_sweeper_main(Datum main_arg)
{
	Oid			database = DatumGetObjectId(main_arg);
	MemoryContext tick_cxt;
	volatile bool more = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (OidIsValid(database))
		BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	else
	{
		connected_to = pstrdup(wl_database);
		BackgroundWorkerInitializeConnection(connected_to, NULL, 0);
	}
	claim_slot(MyDatabaseId);

	StartTransactionCommand();
	database_name = MemoryContextStrdup(TopMemoryContext,
										get_database_name(MyDatabaseId));
	CommitTransactionCommand();

	tick_cxt = AllocSetContextCreate(TopMemoryContext, "worklist sweeper tick",
									 ALLOCSET_DEFAULT_SIZES);
	ereport(LOG,
			(errmsg("worklist sweeper started in database \"%s\"",
					database_name),
			 errdetail("Sweeping every %d ms in batches of %d.",
					   wl_sweep_interval, wl_sweep_batch)));

	for (;;)
	{
		if (!more)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 wl_sweep_interval,
							 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (connected_to && strcmp(connected_to, wl_database) != 0)
			{
				ereport(LOG,
						(errmsg("worklist sweeper restarting to connect to database \"%s\"",
								wl_database)));
				proc_exit(1);
			}
		}

		MemoryContextReset(tick_cxt);
		PG_TRY();
		{
			more = tick(tick_cxt);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			HOLD_INTERRUPTS();
			MemoryContextSwitchTo(tick_cxt);
			edata = CopyErrorData();
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			pgstat_report_activity(STATE_IDLE, NULL);
			record_error(edata->message ? edata->message : "unknown error");
			RESUME_INTERRUPTS();
			more = false;
		}
		PG_END_TRY();
	}
}

/* ----------
 * SQL interface
 * ----------
 */

/*
 * worklist.start_sweeper() RETURNS integer
 *
 * Start a sweeper for the current database and return its pid; if one
 * already runs for this database, return that one's pid.
 */
Datum
wl_start_sweeper(PG_FUNCTION_ARGS)
{
	WlShared   *shared = wl_shared_attach();
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	BgwHandleStatus status;
	pid_t		pid = 0;

	SpinLockAcquire(&shared->mutex);
	for (int i = 0; i < WL_MAX_SWEEPERS; i++)
		if (shared->sweepers[i].used && shared->sweepers[i].pid != 0 &&
			shared->sweepers[i].database == MyDatabaseId)
			pid = shared->sweepers[i].pid;
	SpinLockRelease(&shared->mutex);
	if (pid != 0)
		PG_RETURN_INT32(pid);

	fill_worker(&worker, MyDatabaseId);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start the worklist sweeper"),
				 errhint("Raise max_worker_processes, or preload the library with shared_preload_libraries = 'worklist'.")));

	status = WaitForBackgroundWorkerStartup(handle, &pid);
	if (status != BGWH_STARTED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("the worklist sweeper did not start"),
				 errhint("See the server log for the reason.")));
	PG_RETURN_INT32(pid);
}

/* worklist.sweeper_status(): the rows of the worklist.sweeper_status view */
Datum
wl_sweeper_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlShared   *shared = wl_shared_attach();
	WlSweeperStatus slots[WL_MAX_SWEEPERS];

	InitMaterializedSRF(fcinfo, 0);

	SpinLockAcquire(&shared->mutex);
	memcpy(slots, shared->sweepers, sizeof(slots));
	SpinLockRelease(&shared->mutex);

	for (int i = 0; i < WL_MAX_SWEEPERS; i++)
	{
		WlSweeperStatus *s = &slots[i];
		Datum		values[13];
		bool		nulls[13] = {0};
		char	   *dbname;

		if (!s->used)
			continue;
		dbname = get_database_name(s->database);

		values[0] = Int32GetDatum(s->pid);
		nulls[0] = (s->pid == 0);
		values[1] = dbname ? CStringGetTextDatum(dbname) : (Datum) 0;
		nulls[1] = (dbname == NULL);
		values[2] = TimestampTzGetDatum(s->started_at);
		values[3] = TimestampTzGetDatum(s->last_tick);
		nulls[3] = (s->ticks == 0);
		values[4] = Float8GetDatum(s->last_duration_ms);
		nulls[4] = (s->ticks == 0);
		values[5] = Int64GetDatum(s->ticks);
		values[6] = Int64GetDatum(s->denied);
		values[7] = Int64GetDatum(s->proceeded);
		values[8] = Int64GetDatum(s->escalated);
		values[9] = Int64GetDatum(s->tickets_escalated);
		values[10] = Int64GetDatum(s->tickets_confirmed);
		values[11] = CStringGetTextDatum(s->last_error);
		nulls[11] = (s->last_error[0] == '\0');
		values[12] = TimestampTzGetDatum(s->last_error_at);
		nulls[12] = (s->last_error[0] == '\0');
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
