/*-------------------------------------------------------------------------
 *
 * control.c
 *	  The SQL-callable control of the background workers:
 *	  worklist.start_sweeper() and worklist.sweeper_status().
 *
 * Neither calls into the launcher or the sweeper: with the library
 * preloaded, start_sweeper() asks the launcher to look at the current
 * database (its mailbox in shared memory) and waits for the sweeper to
 * appear in the database's slot; without, it registers a sweeper by the
 * name of its entry point.  sweeper_status() reads the database's slot.
 *
 *-------------------------------------------------------------------------
 */
#include "shmem.h"
#include "worker.h"

#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(wl_start_sweeper);
PG_FUNCTION_INFO_V1(wl_sweeper_status);

/* A start_sweeper() sweeper that exits with an error comes back after this. */
#define SWEEPER_RESTART_SECONDS 5

/* Wait (at most timeout_ms) for a sweeper to work in this database. */
static pid_t
wait_for_sweeper(long timeout_ms)
{
	TimestampTz start = GetCurrentTimestamp();
	pid_t		pid;

	while ((pid = wl_shm_sweeper_pid(MyDatabaseId)) == 0 &&
		   !TimestampDifferenceExceeds(start, GetCurrentTimestamp(), timeout_ms))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return pid;
}

/*
 * Without preloading: start a sweeper here unless one runs or is being
 * started.  Deciding and marking "being started" happen under the lock,
 * so two callers never both register one.
 */
static pid_t
start_dynamic(void)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	BgwHandleStatus status;
	pid_t		pid = 0;

	for (;;)
	{
		WlSlotStart start = wl_shm_slot_start(MyDatabaseId, &pid);

		if (start == WL_START_FULL)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
					 errmsg("could not start the worklist sweeper"),
					 errdetail("Without shared_preload_libraries, at most %d databases can have a sweeper at once.",
							   wl_shm_slot_count()),
					 errhint("Preload the library with shared_preload_libraries = 'worklist'.")));
		if (start == WL_START_RUNNING)
			return pid;
		if (start == WL_START_MINE)
			break;
		/* somebody else is starting it: wait for it */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}

	PG_TRY();
	{
		wl_worker_fill(&worker, WL_SWEEPER_MAIN, "worklist sweeper",
					   MyDatabaseId, SWEEPER_RESTART_SECONDS);
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
		/* it is started; wait until it has taken the slot (or gone) */
		while (wl_shm_sweeper_pid(MyDatabaseId) != pid &&
			   GetBackgroundWorkerPid(handle, &pid) == BGWH_STARTED)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 10, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		pid = wl_shm_sweeper_pid(MyDatabaseId);
	}
	PG_FINALLY();
	{
		wl_shm_slot_started(MyDatabaseId);
	}
	PG_END_TRY();
	if (pid == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("the worklist sweeper did not start"),
				 errhint("See the server log for the reason.")));
	return pid;
}

/*
 * worklist.start_sweeper() RETURNS integer
 *
 * The pid of the sweeper of the current database, starting it if need be:
 * with preloading, the launcher's (asked to look at this database now);
 * without, one started here.
 */
Datum
wl_start_sweeper(PG_FUNCTION_ARGS)
{
	pid_t		pid;

	if (!wl_shm_preloaded())
		PG_RETURN_INT32(start_dynamic());

	pid = wl_shm_sweeper_pid(MyDatabaseId);
	if (pid == 0)
	{
		wl_shm_launcher_probe(MyDatabaseId);
		pid = wait_for_sweeper(30 * 1000);
	}
	if (pid == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("the worklist sweeper of database \"%s\" is not running",
						get_database_name(MyDatabaseId)),
				 errhint("See the server log for the reason; the launcher may lack a free worker process (max_worker_processes).")));
	PG_RETURN_INT32(pid);
}

/*
 * May the caller reach this tenant?  sweeper_status names only those: the
 * name of a tenant, or an error that may quote its data, is nothing a
 * role that cannot reach it may learn.  An error that came from no tenant
 * ("") is shown.
 */
static bool
reachable(const char *tenant)
{
	if (tenant[0] == '\0')
		return true;
	return wl_tenant_binding(tenant, NULL) != WL_BINDING_NONE;
}

/*
 * worklist.sweeper_status(): the row of the worklist.sweeper_status view,
 * for the current database (no row when it never had a sweeper since the
 * server started).  Columns are filled by name, so the function serves the
 * view of every version of the extension.
 */
Datum
wl_sweeper_status(PG_FUNCTION_ARGS)
{
	static const struct
	{
		const char *name;
		size_t		offset;
	}			totals[] = {
		{"ticks", offsetof(WlSweeperStatus, ticks)},
#define TOTAL(name) {#name, offsetof(WlSweeperStatus, totals.name)},
		WL_SWEEP_COUNTS(TOTAL)
#undef TOTAL
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WlSweeperStatus *s = palloc(sizeof(WlSweeperStatus));
	TupleDesc	desc;
	Datum	   *values;
	bool	   *nulls;
	pid_t		pid;
	bool		running;

	InitMaterializedSRF(fcinfo, 0);
	desc = rsinfo->setDesc;

	if (!wl_shm_slot_status(MyDatabaseId, &pid, s))
		return (Datum) 0;

	running = wl_pid_alive(pid);
	values = palloc0(sizeof(Datum) * desc->natts);
	nulls = palloc0(sizeof(bool) * desc->natts);
	for (int i = 0; i < desc->natts; i++)
	{
		const char *col = NameStr(TupleDescAttr(desc, i)->attname);
		char	   *dbname;
		int			total;

		for (total = 0; total < lengthof(totals); total++)
			if (strcmp(col, totals[total].name) == 0)
				break;
		if (total < lengthof(totals))
			values[i] = Int64GetDatum(*(int64 *) ((char *) s + totals[total].offset));
		else if (strcmp(col, "pid") == 0)
		{
			nulls[i] = !running;
			values[i] = Int32GetDatum(pid);
		}
		else if (strcmp(col, "database") == 0)
		{
			dbname = get_database_name(MyDatabaseId);
			nulls[i] = (dbname == NULL);
			if (dbname)
				values[i] = CStringGetTextDatum(dbname);
		}
		else if (strcmp(col, "started_at") == 0)
		{
			nulls[i] = (s->started_at == 0);
			values[i] = TimestampTzGetDatum(s->started_at);
		}
		else if (strcmp(col, "last_tick") == 0)
		{
			nulls[i] = (s->ticks == 0);
			values[i] = TimestampTzGetDatum(s->last_tick);
		}
		else if (strcmp(col, "last_duration_ms") == 0)
		{
			nulls[i] = (s->ticks == 0);
			values[i] = Float8GetDatum(s->last_duration_ms);
		}
		else if (strcmp(col, "tenants_in_error") == 0)
		{
			Datum	   *elems = palloc(sizeof(Datum) * Max(s->n_error_tenants, 1));
			int			n = 0;

			for (int j = 0; j < s->n_error_tenants; j++)
				if (reachable(s->error_tenants[j]))
					elems[n++] = CStringGetTextDatum(s->error_tenants[j]);
			values[i] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
														TYPALIGN_INT));
		}
		else if (strcmp(col, "last_error") == 0)
		{
			nulls[i] = (s->last_error_at == 0 || !reachable(s->last_error_tenant));
			values[i] = CStringGetTextDatum(s->last_error);
		}
		else if (strcmp(col, "last_error_tenant") == 0)
		{
			nulls[i] = (s->last_error_at == 0 || s->last_error_tenant[0] == '\0' ||
						!reachable(s->last_error_tenant));
			values[i] = CStringGetTextDatum(s->last_error_tenant);
		}
		else if (strcmp(col, "last_error_at") == 0)
		{
			nulls[i] = (s->last_error_at == 0);
			values[i] = TimestampTzGetDatum(s->last_error_at);
		}
		else
			nulls[i] = true;
	}
	tuplestore_putvalues(rsinfo->setResult, desc, values, nulls);
	return (Datum) 0;
}
