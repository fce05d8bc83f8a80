/*-------------------------------------------------------------------------
 *
 * sweeper.c
 *	  The sweeper: a background worker that runs the sweep for every
 *	  tenant of one database, so expiry policies, claim timeouts, ticket
 *	  escalations and retention happen without anybody calling
 *	  worklist.sweep(), and that sends the database's notifications.
 *
 * Who starts it, by the name of its entry point (wl_sweeper_main): with
 * shared_preload_libraries = 'worklist', the launcher (launcher.c) keeps
 * one per database that has the extension; without preloading,
 * worklist.start_sweeper() (control.c) starts one for the current
 * database.  Either way there is at most one per database: it claims the
 * database's slot in shared memory, and a second one leaves.  It meets the
 * launcher only there: neither calls the other.
 *
 * It checks for the extension as soon as it has connected.  A tick, every
 * worklist.sweep_interval (the first one interval after it started):
 *	 1. checks that the extension is there at the library's version (it
 *		leaves when the extension is gone, and waits, saying so once, while
 *		it is older than the library), and lists the tenants with something
 *		due (wl_due_tenants);
 *	 2. in rounds, gives every tenant that may still have due work one batch
 *		of worklist.sweep_batch rows, each batch in a transaction of its own
 *		with worklist.tenant set to that tenant, so no row lock is held
 *		longer than one batch and a tenant with a large backlog delays
 *		another by at most one batch;
 *	 3. stops when every tenant came back with less than a full batch, or
 *		when the tick has used its budget (one sweep_interval, at least one
 *		second), in which case the next tick starts without waiting.
 *
 * One tenant cannot stop or slow the others: an error in its batch (bad
 * data, a resource limit, anything) rolls back that batch only; the tick
 * goes on; the error is kept in the status with the tenant named; the
 * tenant is retried after a pause that doubles with each failure in a row
 * (1 s up to 5 min); the log gets at most one line per failing tenant per
 * minute.  A batch of the tenant that succeeds clears it.
 *
 * Between units of work (batches, sends, and at least every 250 ms while
 * idle) the sweeper
 *	 - sends the notifications committed in its database (channel.c);
 *	 - leaves when asked to (the utility hook, utility.c, does, before DROP
 *	   DATABASE and the other commands that need the database to itself),
 *	   and, as a fallback where no hook runs (start_sweeper() without
 *	   preloading), when it sees that another transaction has held, for at
 *	   least 100 ms, a lock on its database that conflicts with a
 *	   connection's: one of those commands waiting for it to go.  (The
 *	   100 ms keep a caller that only tries such a command, and fails its
 *	   permission check at once, from stopping the sweeper.)
 *
 * Statistics: each batch reports its changes to the cumulative statistics
 * after it commits (at most once a second, pgstat_report_stat(false)) and
 * the tick forces a report at its end, so autovacuum sees the sweeper's
 * dead rows while it runs.
 *
 * Status: the sweeper writes its slot in shared memory (shmem.c);
 * worklist.sweeper_status reads the current database's slot.
 *
 *-------------------------------------------------------------------------
 */
#include "channel.h"
#include "shmem.h"
#include "sweep.h"
#include "worker.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

PGDLLEXPORT void wl_sweeper_main(Datum main_arg);

/* A start_sweeper() sweeper gives up after this many restarts that could
 * not connect (control.c starts it, restarted by the postmaster). */
#define SWEEPER_CONNECT_ATTEMPTS 3
/* Longest wait while idle before looking for a database lock. */
#define IDLE_CHECK_MS		250
/* How long a conflicting lock must be held before the sweeper leaves. */
#define LOCK_PATIENCE_MS	100

/* worklist.sweep_interval and worklist.sweep_batch */
static int	sweep_interval = 1000;
static int	batch_size = 500;
static int	sweep_budget = 500;

/* This sweeper's slot in shared memory. */
static WlSlot *my_slot = NULL;

/* Name of the database this sweeper works in (for messages). */
static char *database_name = NULL;

/* Has the extension been found here (at the right version)? */
static bool found_extension = false;
/* Has the wait for ALTER EXTENSION ... UPDATE been logged? */
static bool announced_old = false;

/* Holders of a conflicting lock on this database, as last seen. */
#define LOCK_SEEN_MAX 4
static VirtualTransactionId lock_seen[LOCK_SEEN_MAX];
static int	lock_seen_n = 0;
static TimestampTz lock_seen_at = 0;

/* A failing tenant (local to the sweeper). */
typedef struct TenantFailure
{
	char		tenant[WL_TENANT_KEY_LEN];	/* hash key */
	int			failures;		/* in a row; 0 once it recovered */
	TimestampTz retry_at;
	TimestampTz logged_at;		/* 0: never logged */
	int			unlogged;		/* failures since the last line */
	uint64		due_tick;		/* the last tick that listed it as due */
	int			batch;			/* its batch, when smaller than sweep_batch */
} TenantFailure;

static HTAB *failures = NULL;
static int	failing = 0;		/* entries with failures > 0 */

/*
 * The budget of one tenant's batch (worklist.sweep_budget): a batch still
 * running when it expires is cancelled, rolled back, and tried again in
 * the next round with half as many rows, so that whatever one tenant
 * stores, the tenants after it in the round wait at most that long.  A
 * batch of one row that overruns it is the tenant's failure.
 */
static TimeoutId budget_timeout;
static volatile sig_atomic_t budget_expired = false;

static void
budget_handler(void)
{
	budget_expired = true;
	InterruptPending = true;
	QueryCancelPending = true;
	SetLatch(MyLatch);
}

/* Errors outside any tenant's batch, logged at most once a minute too. */
static TimestampTz general_logged_at = 0;

void
wl_sweeper_init(void)
{
	DefineCustomIntVariable("worklist.sweep_interval",
							"Time between two ticks of the sweeper.",
							NULL,
							&sweep_interval,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("worklist.sweep_batch",
							"Rows the sweeper settles per transaction.",
							NULL,
							&batch_size,
							500, 1, WL_SWEEP_LIMIT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("worklist.sweep_budget",
							"Longest time one tenant's batch of the sweeper may run.",
							"A batch still running then is rolled back and tried again with half as many rows, so that one tenant delays the others by at most this much.",
							&sweep_budget,
							500, 10, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/* ----------
 * The slot
 * ----------
 */
static void
release_slot(int code, Datum arg)
{
	if (my_slot == NULL)
		return;
	wl_shm_slot_release(my_slot, code != 0);
	my_slot = NULL;
}

/*
 * Leave for good (exit code 0: the postmaster does not restart it), saying
 * why in the slot.  The launcher reads the reason and starts another
 * sweeper when one is due; without preloading nobody does, until
 * start_sweeper() is called again.
 */
static void
leave(WlSweeperExit reason)
{
	wl_shm_slot_exit(my_slot, reason);
	proc_exit(0);
}

/*
 * Without preloading, a sweeper restarted by the postmaster for a database
 * that it could not connect to the last few times (it was dropped) gives
 * up before trying again.  Called before connecting.
 */
static void
count_connect_attempt(Oid database)
{
	if (wl_shm_preloaded())
		return;					/* the launcher decides */
	if (wl_shm_slot_give_up(database, SWEEPER_CONNECT_ATTEMPTS))
	{
		ereport(LOG,
				(errmsg("worklist sweeper for database %u gives up: it could not connect %d times",
						database, SWEEPER_CONNECT_ATTEMPTS)));
		proc_exit(0);
	}
}

/*
 * Take the slot of this database and mark it running.  One sweeper per
 * database: when another one already works here, this one leaves for good.
 */
static void
claim_slot(void)
{
	pid_t		other;

	switch (wl_shm_slot_claim(MyDatabaseId, &my_slot, &other))
	{
		case WL_SLOT_CLAIMED:
			break;
		case WL_SLOT_TAKEN:
			ereport(LOG,
					(errmsg("worklist sweeper exits: sweeper %d already works in this database",
							(int) other)));
			proc_exit(0);
			break;
		case WL_SLOT_PAUSED:
			proc_exit(0);		/* the launcher starts it once the pause ends */
			break;
		case WL_SLOT_FULL:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many worklist sweepers"),
					 errdetail("Shared memory holds the status of %d sweepers.",
							   wl_shm_slot_count())));
			break;
	}
	before_shmem_exit(release_slot, (Datum) 0);
}

/* ----------
 * Status
 * ----------
 */
static void
record_tick(TimestampTz start, const WlSweepResult *done)
{
	wl_shm_slot_tick(my_slot, start, GetCurrentTimestamp(), done);
}

/* ----------
 * Failing tenants
 * ----------
 */

/* One log line may not become several: control characters become '?'. */
static char *
one_line(const char *s)
{
	char	   *copy = pstrdup(s);

	for (char *p = copy; *p; p++)
		if ((unsigned char) *p < 0x20 || *p == 0x7f)
			*p = '?';
	return copy;
}

static TenantFailure *
failure_of(const char *tenant, bool create)
{
	char		key[WL_TENANT_KEY_LEN];

	if (failures == NULL)
	{
		HASHCTL		info;

		if (!create)
			return NULL;
		info.keysize = WL_TENANT_KEY_LEN;
		info.entrysize = sizeof(TenantFailure);
		failures = hash_create("worklist sweeper failing tenants", 64, &info,
							   HASH_ELEM | HASH_STRINGS);
	}
	memset(key, 0, sizeof(key));
	strlcpy(key, tenant, sizeof(key));
	if (create)
	{
		bool		found;
		TenantFailure *f = hash_search(failures, key, HASH_ENTER, &found);

		if (!found)
		{
			f->failures = 0;
			f->retry_at = 0;
			f->logged_at = 0;
			f->unlogged = 0;
			f->due_tick = 0;
			f->batch = 0;
		}
		return f;
	}
	return hash_search(failures, key, HASH_FIND, NULL);
}

/* Is the tenant pausing after failures? */
static bool
tenant_pausing(const char *tenant, TimestampTz now)
{
	TenantFailure *f;

	if (failing == 0)
		return false;
	f = failure_of(tenant, false);
	return f && f->failures > 0 && now < f->retry_at;
}

static void
tenant_failed(const char *tenant, const char *message)
{
	TenantFailure *f = failure_of(tenant, true);
	TimestampTz now = GetCurrentTimestamp();
	int64		pause_ms;

	if (f->failures++ == 0)
		failing++;
	pause_ms = wl_backoff_ms(f->failures);
	f->retry_at = TimestampTzPlusMilliseconds(now, pause_ms);
	f->unlogged++;
	wl_shm_slot_error(my_slot, tenant, message);

	if (wl_log_due(&f->logged_at))
	{
		ereport(LOG,
				(errmsg("worklist sweeper: the sweep of tenant \"%s\" in database \"%s\" failed (%d time(s) since the last report, %d in a row; next try in %d s): %s",
						one_line(tenant), database_name, f->unlogged,
						f->failures, (int) (pause_ms / 1000), one_line(message))));
		f->unlogged = 0;
	}
}

static void
tenant_succeeded(const char *tenant)
{
	TenantFailure *f;

	if (failing == 0)
		return;
	f = failure_of(tenant, false);
	if (f == NULL || f->failures == 0)
		return;
	f->failures = 0;
	failing--;
	wl_shm_slot_unlist_error(my_slot, tenant);
}

/*
 * A failing tenant that has nothing due any more (its work was erased or
 * settled by the verbs) is no longer failing: it leaves tenants_in_error
 * as if a batch had succeeded.  due lists the tenants due this tick; costs
 * what is due when something is failing, nothing otherwise.
 */
static void
forget_not_due(List *due)
{
	static uint64 tick_no = 0;
	HASH_SEQ_STATUS seq;
	TenantFailure *f;
	ListCell   *lc;

	if (failing == 0)
		return;
	tick_no++;
	foreach(lc, due)
	{
		char	   *tenant = text_to_cstring((text *) lfirst(lc));

		if ((f = failure_of(tenant, false)) != NULL)
			f->due_tick = tick_no;
		pfree(tenant);
	}
	hash_seq_init(&seq, failures);
	while ((f = hash_seq_search(&seq)) != NULL)
		if (f->failures > 0 && f->due_tick != tick_no)
		{
			f->failures = 0;
			failing--;
			wl_shm_slot_unlist_error(my_slot, f->tenant);
		}
}

/*
 * Forget recovered tenants whose last log line is older than a minute (so
 * a tenant that recovers and fails again within the minute logs nothing
 * more).  Costs what is failing, not what exists.
 */
static void
forget_recovered(void)
{
	HASH_SEQ_STATUS seq;
	TenantFailure *f;
	TimestampTz now = GetCurrentTimestamp();

	if (failures == NULL || hash_get_num_entries(failures) == failing)
		return;
	hash_seq_init(&seq, failures);
	while ((f = hash_seq_search(&seq)) != NULL)
		if (f->failures == 0 && f->batch == 0 &&
			TimestampDifferenceExceeds(f->logged_at, now, WL_LOG_EVERY_MS))
			hash_search(failures, f->tenant, HASH_REMOVE, NULL);
}

/* ----------
 * Leaving the database alone when asked
 * ----------
 */

/*
 * Has a transaction that could run such a command (wl_owner_lock_holders)
 * held its lock on this database for LOCK_PATIENCE_MS or more?
 */
static bool
database_lock_wanted(void)
{
	VirtualTransactionId *holders;
	int			n;
	bool		persisted = false;
	TimestampTz now = GetCurrentTimestamp();

	n = wl_owner_lock_holders(MyDatabaseId, &holders);
	for (int i = 0; i < n && !persisted; i++)
		for (int j = 0; j < lock_seen_n && !persisted; j++)
			persisted = VirtualTransactionIdEquals(holders[i], lock_seen[j]);
	if (persisted)
		persisted = TimestampDifferenceExceeds(lock_seen_at, now, LOCK_PATIENCE_MS);
	else
	{
		lock_seen_n = Min(n, LOCK_SEEN_MAX);
		for (int i = 0; i < lock_seen_n; i++)
			lock_seen[i] = holders[i];
		lock_seen_at = now;
	}
	pfree(holders);
	return persisted;
}

/* Leave if the hook asked, or if a database command waits for us. */
static void
check_stop(void)
{
	if (wl_shm_slot_stop_requested(my_slot) || database_lock_wanted())
	{
		ereport(LOG,
				(errmsg("worklist sweeper leaves database \"%s\" for a command that needs it alone",
						database_name)));
		leave(WL_EXIT_STOPPED);
	}
}

/* ----------
 * One tick
 * ----------
 */
/*
 * Is the extension here at a version the library serves (its own or the
 * previous release's)?  Leaves when it is gone; says once that it waits
 * while the version is another.  Runs in a transaction.
 */
static bool
extension_ready(void)
{
	char	   *version = wl_installed_version(NULL);

	if (version == NULL)
	{
		if (found_extension)
			ereport(LOG,
					(errmsg("worklist sweeper leaves database \"%s\": the extension was dropped",
							database_name)));
		AbortCurrentTransaction();
		leave(WL_EXIT_NO_EXTENSION);
	}
	if (!wl_schema_served(version, NULL))
	{
		if (!announced_old)
			ereport(LOG,
					(errmsg("worklist sweeper is waiting in database \"%s\": the extension is at version %s, the library at %s",
							database_name, version, WL_EXTVERSION),
					 errhint("Run ALTER EXTENSION worklist UPDATE in that database.")));
		announced_old = true;
		return false;
	}
	if (!found_extension || announced_old)
	{
		ereport(LOG,
				(errmsg("worklist sweeper started in database \"%s\"", database_name),
				 errdetail("Sweeping every %d ms in batches of %d.",
						   sweep_interval, batch_size)));
		wl_shm_slot_ran(my_slot);
	}
	found_extension = true;
	announced_old = false;
	return true;
}

/*
 * After an error: if the extension was dropped meanwhile (a statement then
 * fails on a relation that no longer exists), that was the error; leave.
 */
static void
leave_if_dropped(void)
{
	bool		gone;

	StartTransactionCommand();
	gone = !OidIsValid(get_extension_oid("worklist", true));
	CommitTransactionCommand();
	if (gone)
	{
		ereport(LOG,
				(errmsg("worklist sweeper leaves database \"%s\": the extension was dropped",
						database_name)));
		leave(WL_EXIT_NO_EXTENSION);
	}
}

/* The extension check on its own, when a change of extensions committed. */
static void
check_extension_if_asked(void)
{
	if (!wl_shm_slot_take_recheck(my_slot))
		return;
	wl_worker_xact_begin("worklist sweeper: checking the extension");
	(void) extension_ready();
	wl_worker_xact_end();
}

/*
 * The tenants with something due, in a transaction of their own.  Returns
 * a list of text datums allocated in cxt; *ready is false (and the list
 * NIL) while the extension waits for an update.
 */
static List *
list_tenants(MemoryContext cxt, bool *ready)
{
	List	   *tenants = NIL;
	WlSpi		spi;

	wl_worker_xact_begin("worklist sweeper: listing tenants");
	*ready = extension_ready();
	if (*ready)
	{
		wl_spi_begin(&spi);
		tenants = wl_due_tenants(GetCurrentTransactionStartTimestamp(), cxt);
		wl_spi_end(&spi);
	}
	wl_worker_xact_end();
	return tenants;
}

/* Send the notifications waiting for this database if they are due. */
static void
send_if_due(void)
{
	if (wl_channel_due() == 0)
		wl_channel_send();
}

/* What runs between two units of work. */
static void
between_units(void)
{
	CHECK_FOR_INTERRUPTS();
	check_stop();
	send_if_due();
}

/*
 * One batch for one tenant, in a transaction of its own.  Returns whether
 * the batch came back full, i.e. whether more may be due.  An error rolls
 * back this batch only and is charged to the tenant; a batch that runs out
 * of its budget is tried again, smaller (see budget_handler).
 */
static bool
sweep_batch(text *tenant, WlSweepResult *total, MemoryContext cxt)
{
	WlSweepResult r = {0};
	char	   *tenant_c = text_to_cstring(tenant);
	TenantFailure *shrunk = failure_of(tenant_c, false);
	int			batch = (shrunk && shrunk->batch > 0) ? shrunk->batch : batch_size;
	volatile bool ok = false;

	PG_TRY();
	{
		WlSpi		spi;

		budget_expired = false;
		enable_timeout_after(budget_timeout, sweep_budget);
		wl_worker_xact_begin("worklist sweeper: sweeping");
		if (OidIsValid(get_extension_oid("worklist", true)))
		{
			/* what the parts count (wl_count) is counted for this tenant */
			(void) set_config_option("worklist.tenant", tenant_c, PGC_USERSET,
									 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0,
									 false);
			wl_spi_begin(&spi);
			wl_sweep_tenant(tenant, GetCurrentTransactionStartTimestamp(),
							batch, &r);
			wl_spi_end(&spi);
		}
		wl_worker_xact_end();
		disable_timeout(budget_timeout, false);
		ok = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		bool		overran;

		disable_timeout(budget_timeout, false);
		edata = wl_worker_recover(cxt);
		overran = budget_expired && edata->sqlerrcode == ERRCODE_QUERY_CANCELED;
		budget_expired = false;
		/* cancelled because the hook asked us to leave: not the tenant's fault */
		check_stop();
		leave_if_dropped();
		if (overran && batch > 1)
		{
			/* not a failure: the next round tries half as many rows */
			failure_of(tenant_c, true)->batch = batch / 2;
			FreeErrorData(edata);
			return true;
		}
		tenant_failed(tenant_c, overran ?
					  psprintf("one row took longer than worklist.sweep_budget (%d ms)",
							   sweep_budget) :
					  edata->message ? edata->message : "unknown error");
		FreeErrorData(edata);
	}
	PG_END_TRY();

	if (!ok)
		return false;
	/* a shrunk batch that fitted grows back */
	if (batch < batch_size && (shrunk = failure_of(tenant_c, false)) != NULL)
		shrunk->batch = batch * 2 >= batch_size ? 0 : batch * 2;
	pgstat_report_stat(false);
	tenant_succeeded(tenant_c);
	wl_sweep_add(total, &r);
	return wl_sweep_full(&r, batch);
}

/*
 * Run one tick.  Returns true when it stopped on its budget with work
 * left, so the caller starts the next one without waiting.
 */
static bool
tick(MemoryContext cxt)
{
	TimestampTz start = GetCurrentTimestamp();
	long		budget_ms = Max(sweep_interval, 1000);
	WlSweepResult done = {0};
	bool		ready;
	List	   *busy;
	bool		more = false;

	busy = list_tenants(cxt, &ready);
	if (!ready)
		return false;
	forget_not_due(busy);

	/* Rounds: one batch per tenant that may still have due work. */
	while (busy != NIL)
	{
		List	   *still = NIL;
		ListCell   *lc;
		TimestampTz round = GetCurrentTimestamp();

		foreach(lc, busy)
		{
			text	   *tenant = (text *) lfirst(lc);

			if (failing > 0 && tenant_pausing(text_to_cstring(tenant), round))
				continue;
			between_units();
			if (sweep_batch(tenant, &done, cxt))
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
	forget_recovered();
	pgstat_report_stat(true);
	return more;
}

/* An error outside any tenant's batch: kept, and logged once a minute. */
static void
general_error(MemoryContext cxt)
{
	ErrorData  *edata = wl_worker_recover(cxt);

	/* cancelled because the hook asked us to leave: go */
	check_stop();
	leave_if_dropped();
	wl_shm_slot_error(my_slot, NULL, edata->message ? edata->message : "unknown error");
	if (wl_log_due(&general_logged_at))
		ereport(LOG,
				(errmsg("worklist sweeper: a tick in database \"%s\" failed: %s",
						database_name,
						one_line(edata->message ? edata->message : "unknown error"))));
	FreeErrorData(edata);
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
	volatile TimestampTz last_start;
	volatile bool more = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	budget_timeout = RegisterTimeout(USER_TIMEOUT, budget_handler);
	BackgroundWorkerUnblockSignals();

	count_connect_attempt(database);
	BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	claim_slot();

	StartTransactionCommand();
	database_name = MemoryContextStrdup(TopMemoryContext,
										get_database_name(MyDatabaseId));
	CommitTransactionCommand();

	tick_cxt = AllocSetContextCreate(TopMemoryContext, "worklist sweeper tick",
									 ALLOCSET_DEFAULT_SIZES);

	/* leave at once where the extension is missing; sweep after an interval */
	wl_worker_xact_begin("worklist sweeper: checking the extension");
	(void) extension_ready();
	wl_worker_xact_end();
	last_start = GetCurrentTimestamp();

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		/* from the interval in force now: a reload applies at once */
		TimestampTz next_tick = TimestampTzPlusMilliseconds(last_start,
															sweep_interval);
		long		timeout;

		if (!more && now < next_tick)
		{
			long		notify_ms = wl_channel_due();

			timeout = Min((next_tick - now + 999) / 1000, IDLE_CHECK_MS);
			if (notify_ms >= 0)
				timeout = Min(timeout, notify_ms);
			/* a conflicting lock seen: look again once it could count */
			if (lock_seen_n > 0)
				timeout = Min(timeout, LOCK_PATIENCE_MS);
			if (timeout > 0)
				(void) WaitLatch(MyLatch,
								 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 timeout, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		MemoryContextReset(tick_cxt);
		PG_TRY();
		{
			MemoryContext old = MemoryContextSwitchTo(tick_cxt);

			between_units();
			check_extension_if_asked();
			now = GetCurrentTimestamp();
			if (more ||
				now >= TimestampTzPlusMilliseconds(last_start, sweep_interval))
			{
				last_start = now;
				more = tick(tick_cxt);
			}
			MemoryContextSwitchTo(old);
		}
		PG_CATCH();
		{
			general_error(tick_cxt);
			more = false;
		}
		PG_END_TRY();
	}
}
