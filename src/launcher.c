/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher, a background worker that keeps one sweeper per
 *	  database where the extension is installed.
 *
 * With shared_preload_libraries = 'worklist' the launcher is registered at
 * server start.  It connects to no database (it reads only the shared
 * catalog pg_database) and cannot see which databases have the extension,
 * so it starts a sweeper (a dynamic worker, named by its entry point, that
 * notifies the launcher when it stops) in every database that allows
 * connections and is not a template, unless that database is known to
 * lack the extension.  A sweeper that finds no extension records that in
 * its slot and exits; the launcher then leaves the database alone until it
 * is asked to look again.  It looks at pg_database again every few
 * seconds, whenever a sweeper stops, and when asked (its mailbox in shared
 * memory): by the utility hook (utility.c) at the commit of CREATE or
 * ALTER EXTENSION and of CREATE DATABASE, and by worklist.start_sweeper()
 * for the current database.
 *
 * A database the utility hook paused (a command needs it alone) gets no
 * sweeper while the pause lasts; once it is lifted the launcher starts the
 * sweeper again where the database still exists, once no conflicting lock
 * is held on it.  A dropped database is simply no longer in pg_database:
 * nothing is started for it, so nothing restarts forever.
 *
 * A sweeper that stops with an error is started again after a pause that
 * doubles while it keeps failing without ever finding the extension (1 s
 * up to 5 min).  worklist.database, which named the sweeper's database
 * before the launcher existed, is accepted and ignored, with one log line.
 *
 * Shared state: the launcher meets the sweepers only in their slots and
 * its mailbox in shared memory (shmem.c).  Its own bookkeeping (a hash of
 * the databases it knows) is local to it.
 *
 *-------------------------------------------------------------------------
 */
#include "shmem.h"
#include "worker.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PGDLLEXPORT void wl_launcher_main(Datum main_arg);

/* Seconds before the postmaster restarts a launcher that failed. */
#define LAUNCHER_RESTART_SECONDS 5
/* Look at pg_database at least this often. */
#define RESCAN_MS			(10 * 1000)
/* A database where a command holds a conflicting lock: look again after. */
#define LOCKED_RETRY_MS		500

/* What the launcher knows of one database. */
typedef struct KnownDatabase
{
	Oid			database;		/* hash key */
	bool		seen;			/* in pg_database at the last look */
	BackgroundWorkerHandle *handle; /* the sweeper it started, if any */
	bool		lacks_extension;
	bool		look_again;		/* asked to look while its sweeper ran */
	int			failures;		/* sweepers that failed in a row */
	TimestampTz retry_at;
} KnownDatabase;

static HTAB *known = NULL;
static char *database_setting_logged = NULL;

/* worklist.database, ignored; and what was last said of it */
static char *database_setting = NULL;

/* ----------
 * The launcher
 * ----------
 */
void
wl_launcher_init(void)
{
	DefineCustomStringVariable("worklist.database",
							   "Ignored: every database with the extension has its own sweeper.",
							   "Accepted so that configurations of version 0.2 still load; the launcher logs once that it is ignored.",
							   &database_setting,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);
}

/* Preloading: the launcher is started with the server. */
void
wl_launcher_register(void)
{
	BackgroundWorker worker;

	wl_worker_fill(&worker, WL_LAUNCHER_MAIN, "worklist launcher", InvalidOid,
				   LAUNCHER_RESTART_SECONDS);
	RegisterBackgroundWorker(&worker);
}

static void
launcher_gone(int code, Datum arg)
{
	wl_shm_launcher_unregister();
}

/* worklist.database is ignored: say so once each time it is set. */
static void
log_database_setting(void)
{
	const char *value = database_setting ? database_setting : "";

	if (value[0] == '\0')
	{
		if (database_setting_logged)
			pfree(database_setting_logged);
		database_setting_logged = NULL;
		return;
	}
	if (database_setting_logged && strcmp(database_setting_logged, value) == 0)
		return;
	ereport(LOG,
			(errmsg("worklist.database = \"%s\" is ignored: every database with the extension has its own sweeper",
					value)));
	if (database_setting_logged)
		pfree(database_setting_logged);
	database_setting_logged = MemoryContextStrdup(TopMemoryContext, value);
}

static void
init_known(KnownDatabase *db)
{
	db->seen = false;
	db->handle = NULL;
	db->lacks_extension = false;
	db->look_again = false;
	db->failures = 0;
	db->retry_at = 0;
}

/* Take the requests made since the last look. */
static void
drain_probes(void)
{
	Oid			probe[WL_PROBE_MAX];
	bool		all;
	int			n = wl_shm_launcher_take_probes(probe, &all);

	for (int i = 0; i < n || all; i++)
	{
		HASH_SEQ_STATUS seq;
		KnownDatabase *db;
		bool		found;

		if (all)
		{
			hash_seq_init(&seq, known);
			while ((db = hash_seq_search(&seq)) != NULL)
			{
				db->lacks_extension = false;
				db->look_again = true;
				if (db->failures == 0)
					db->retry_at = 0;
			}
			break;
		}
		db = hash_search(known, &probe[i], HASH_ENTER, &found);
		if (!found)
			init_known(db);
		db->lacks_extension = false;
		db->look_again = true;
		/* a sweeper that keeps failing keeps its pause */
		if (db->failures == 0)
			db->retry_at = 0;
	}
}

/* The databases a sweeper may work in, as of now. */
static List *
eligible_databases(void)
{
	List	   *result = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	MemoryContext cxt = CurrentMemoryContext;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database d = (Form_pg_database) GETSTRUCT(tup);
		MemoryContext old;

		if (d->datistemplate || !d->datallowconn || database_is_invalid_form(d))
			continue;
		old = MemoryContextSwitchTo(cxt);
		result = lappend_oid(result, d->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return result;
}

/*
 * Does a transaction that could need the database alone (its owner's, a
 * superuser's) hold a lock on it that a sweeper would conflict with?
 */
static bool
database_locked(Oid database)
{
	VirtualTransactionId *holders;
	int			n = wl_owner_lock_holders(database, &holders);

	pfree(holders);
	return n > 0;
}

/*
 * A sweeper this launcher started has stopped: learn why from its slot.
 */
static void
sweeper_stopped(KnownDatabase *db, TimestampTz now)
{
	WlSweeperExit reason;
	bool		ran;

	wl_shm_slot_exit_status(db->database, &reason, &ran);

	pfree(db->handle);
	db->handle = NULL;
	switch (reason)
	{
		case WL_EXIT_NO_EXTENSION:
			/* unless somebody asked to look again while it checked */
			db->lacks_extension = !db->look_again;
			db->failures = 0;
			break;
		case WL_EXIT_STOPPED:
		case WL_EXIT_DUPLICATE:
			db->failures = 0;
			break;
		default:
			/* an error, a signal, or it could not even connect */
			if (ran)
				db->failures = 0;
			db->failures++;
			db->retry_at = TimestampTzPlusMilliseconds(now, wl_backoff_ms(db->failures));
			break;
	}
}

/* Why launch_sweeper() could not start a sweeper. */
typedef enum StartFailure
{
	STARTED,
	NO_SLOT,					/* every sweeper slot is in use */
	NO_WORKER					/* no background worker could be had */
} StartFailure;

/* Start the sweeper of a database, by the name of its entry point. */
static StartFailure
launch_sweeper(KnownDatabase *db)
{
	BackgroundWorker worker;

	/* its slot, so that it can say why it stops */
	if (!wl_shm_slot_prepare(db->database))
		return NO_SLOT;

	wl_worker_fill(&worker, WL_SWEEPER_MAIN, "worklist sweeper", db->database,
				   BGW_NEVER_RESTART);
	worker.bgw_notify_pid = MyProcPid;
	db->look_again = false;
	if (!RegisterDynamicBackgroundWorker(&worker, &db->handle))
	{
		db->handle = NULL;
		return NO_WORKER;
	}
	return STARTED;
}

/* Look at every database and start the sweepers that are missing. */
static long
look(void)
{
	TimestampTz now = GetCurrentTimestamp();
	List	   *databases = eligible_databases();
	HASH_SEQ_STATUS seq;
	KnownDatabase *db;
	ListCell   *lc;
	long		next_ms = RESCAN_MS;
	static StartFailure said = STARTED;
	StartFailure failure = STARTED;
	StartFailure started;

	hash_seq_init(&seq, known);
	while ((db = hash_seq_search(&seq)) != NULL)
		db->seen = false;
	foreach(lc, databases)
	{
		Oid			oid = lfirst_oid(lc);
		bool		found;

		db = hash_search(known, &oid, HASH_ENTER, &found);
		if (!found)
			init_known(db);
		db->seen = true;
	}

	hash_seq_init(&seq, known);
	while ((db = hash_seq_search(&seq)) != NULL)
	{
		pid_t		pid;
		bool		running;
		bool		paused;

		if (db->handle != NULL)
		{
			if (GetBackgroundWorkerPid(db->handle, &pid) != BGWH_STOPPED)
				continue;		/* running, or about to */
			sweeper_stopped(db, now);
		}
		if (!db->seen)
		{
			/* the database is gone: forget it, and free its slot */
			wl_shm_slot_forget(db->database);
			hash_search(known, &db->database, HASH_REMOVE, NULL);
			continue;
		}
		if (db->lacks_extension)
			continue;
		if (db->retry_at > now)
		{
			next_ms = Min(next_ms, (db->retry_at - now) / 1000 + 1);
			continue;
		}

		wl_shm_slot_state(db->database, &running, &paused);
		if (running)
			continue;			/* one this launcher did not start */
		if (paused || database_locked(db->database))
		{
			next_ms = Min(next_ms, LOCKED_RETRY_MS);
			continue;
		}
		started = launch_sweeper(db);
		if (started != STARTED)
		{
			failure = Max(failure, started);
			db->retry_at = TimestampTzPlusMilliseconds(now, WL_BACKOFF_FIRST_MS);
			next_ms = Min(next_ms, WL_BACKOFF_FIRST_MS);
		}
	}
	if (failure != STARTED && failure != said)
		ereport(LOG,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 failure == NO_WORKER ?
				 errmsg("worklist launcher could not start a sweeper: no background worker slot is free") :
				 errmsg("worklist launcher could not start a sweeper: every sweeper slot is in use"),
				 errhint("Raise max_worker_processes (it also bounds the sweepers, one per database).")));
	said = failure;
	list_free(databases);
	return next_ms;
}

void
wl_launcher_main(Datum main_arg)
{
	MemoryContext loop_cxt;
	HASHCTL		info;
	TimestampTz next_look = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	wl_shm_launcher_register();
	before_shmem_exit(launcher_gone, (Datum) 0);

	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(KnownDatabase);
	known = hash_create("worklist launcher databases", 64, &info,
						HASH_ELEM | HASH_BLOBS);
	loop_cxt = AllocSetContextCreate(TopMemoryContext, "worklist launcher loop",
									 ALLOCSET_DEFAULT_SIZES);
	log_database_setting();

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();

		if (now < next_look)
		{
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 (next_look - now + 999) / 1000, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			log_database_setting();
		}

		/*
		 * Every wake-up (a request, a sweeper that started or stopped, the
		 * timer) is a reason to look.
		 */
		MemoryContextReset(loop_cxt);
		MemoryContextSwitchTo(loop_cxt);
		drain_probes();
		next_look = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), look());
		MemoryContextSwitchTo(TopMemoryContext);
	}
}
