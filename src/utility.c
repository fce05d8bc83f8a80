/*-------------------------------------------------------------------------
 *
 * utility.c
 *	  The utility hook (every backend, when preloaded): it tells the
 *	  launcher when databases and extensions change, and makes a
 *	  database's sweeper leave before a command that needs the database to
 *	  itself.
 *
 *	 - At the commit of CREATE EXTENSION or ALTER EXTENSION (of any
 *	   extension: worklist may come with another one's CASCADE) the hook
 *	   asks the launcher to look at that database again, and tells a
 *	   running sweeper there to check its extension (so DROP EXTENSION
 *	   ends it at once); at the commit of CREATE DATABASE it wakes the
 *	   launcher (the new database may have the extension from its
 *	   template).
 *	 - DROP DATABASE, ALTER DATABASE ... RENAME and ... SET TABLESPACE, and
 *	   CREATE DATABASE ... TEMPLATE fail while another session is connected
 *	   to the database.  Before any of them runs (and only for a caller that
 *	   owns the database, so nobody else can stop a sweeper by trying), the
 *	   hook pauses the database's slot (the launcher starts nothing there
 *	   while the pausing backend's transaction lasts), asks its sweeper to
 *	   leave, and waits until it has gone (after a second it also cancels
 *	   the sweeper's current batch).  When the transaction ends the pause
 *	   is lifted and the launcher woken.
 *
 * It sends messages only, through shared memory (shmem.c): it calls
 * nothing of the launcher or the sweeper.
 *
 *-------------------------------------------------------------------------
 */
#include "shmem.h"
#include "worker.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* How long the hook waits for a sweeper to leave, and when it cancels. */
#define LEAVE_WAIT_MS		(10 * 1000)
#define LEAVE_CANCEL_MS		1000

static ProcessUtility_hook_type prev_utility_hook = NULL;

/* Databases this backend paused, and whether to wake the launcher at commit. */
static List *paused_databases = NIL;	/* of Oid, in TopMemoryContext */
static bool probe_at_commit = false;
static bool recheck_at_commit = false;
static bool rescan_at_commit = false;
static bool xact_callback_registered = false;

static void utility_hook(PlannedStmt *pstmt, const char *queryString,
						 bool readOnlyTree, ProcessUtilityContext context,
						 ParamListInfo params, QueryEnvironment *queryEnv,
						 DestReceiver *dest, QueryCompletion *qc);

/* Preloading: inherited by every backend the postmaster starts. */
void
wl_utility_init(void)
{
	prev_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = utility_hook;
}

/* At the end of the transaction: lift pauses, wake the launcher. */
static void
launcher_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;
	bool		committed;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PREPARE)
		return;
	if (paused_databases == NIL && !probe_at_commit && !recheck_at_commit &&
		!rescan_at_commit)
		return;
	committed = (event == XACT_EVENT_COMMIT);
	foreach(lc, paused_databases)
		wl_shm_slot_unpause(lfirst_oid(lc));
	list_free(paused_databases);
	paused_databases = NIL;

	if (committed && recheck_at_commit)
		wl_shm_slot_recheck(MyDatabaseId);
	if (committed && probe_at_commit)
		wl_shm_launcher_probe(MyDatabaseId);
	else
		wl_shm_launcher_wake();
	probe_at_commit = false;
	recheck_at_commit = false;
	rescan_at_commit = false;
}

static void
register_xact_callback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(launcher_xact_callback, NULL);
		xact_callback_registered = true;
	}
}

/*
 * Pause the database's slot for this transaction and wait until its
 * sweeper has gone.
 */
static void
pause_database(Oid database)
{
	pid_t		pid;
	MemoryContext old;
	TimestampTz start;
	bool		cancelled = false;

	register_xact_callback();
	/*
	 * Only a database whose sweeper runs is paused (see wl_shm_slot_pause).
	 * The launcher starts no sweeper while the command holds its lock on
	 * the database anyway; the pause spares the time between the sweeper's
	 * leaving and the command's taking that lock.
	 */
	pid = wl_shm_slot_pause(database);
	if (pid == 0)
		return;

	old = MemoryContextSwitchTo(TopMemoryContext);
	paused_databases = lappend_oid(paused_databases, database);
	MemoryContextSwitchTo(old);

	start = GetCurrentTimestamp();
	for (;;)
	{
		if (wl_shm_slot_left(database, pid) || !wl_pid_alive(pid))
			break;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), LEAVE_WAIT_MS))
			break;				/* the command will wait and decide itself */
		if (!cancelled &&
			TimestampDifferenceExceeds(start, GetCurrentTimestamp(), LEAVE_CANCEL_MS))
		{
			/* a long batch: cancel it (the sweeper then leaves) */
			kill(pid, SIGINT);
			cancelled = true;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The value of a CREATE/ALTER DATABASE option, or NULL. */
static const char *
database_option(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *opt = (DefElem *) lfirst(lc);

		if (strcmp(opt->defname, name) == 0 && opt->arg != NULL)
			return defGetString(opt);
	}
	return NULL;
}

/*
 * The database a command needs to itself (a sweeper connected to it would
 * make the command fail), or NULL.
 */
static const char *
database_needed_alone(Node *parsetree, bool *create)
{
	*create = false;
	switch (nodeTag(parsetree))
	{
		case T_DropdbStmt:
			return ((DropdbStmt *) parsetree)->dbname;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
				return ((RenameStmt *) parsetree)->subname;
			return NULL;
		case T_AlterDatabaseStmt:
			if (database_option(((AlterDatabaseStmt *) parsetree)->options,
								"tablespace"))
				return ((AlterDatabaseStmt *) parsetree)->dbname;
			return NULL;
		case T_CreatedbStmt:
			*create = true;
			return database_option(((CreatedbStmt *) parsetree)->options,
								   "template");
		default:
			return NULL;
	}
}

/* Could the current role run the command on the database at all? */
static bool
may_run(Oid database, bool create)
{
	if (create && !have_createdb_privilege())
		return false;
	return pg_database_ownercheck(database, GetUserId());
}

static void
utility_hook(PlannedStmt *pstmt, const char *queryString,
				bool readOnlyTree, ProcessUtilityContext context,
				ParamListInfo params, QueryEnvironment *queryEnv,
				DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		create;
	const char *dbname = database_needed_alone(parsetree, &create);

	if (dbname != NULL)
	{
		Oid			database = get_database_oid(dbname, true);

		if (OidIsValid(database) && database != MyDatabaseId &&
			may_run(database, create))
			pause_database(database);
	}

	if (prev_utility_hook)
		prev_utility_hook(pstmt, queryString, readOnlyTree, context, params,
						  queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	switch (nodeTag(parsetree))
	{
		case T_CreateExtensionStmt:
		case T_AlterExtensionStmt:
			/*
			 * Only when worklist is there now (it may have come with another
			 * extension's CASCADE): anybody may run CREATE EXTENSION IF NOT
			 * EXISTS of an extension that exists, and must not make the
			 * launcher start sweepers in a database without worklist.
			 */
			if (OidIsValid(get_extension_oid("worklist", true)))
			{
				probe_at_commit = true;
				recheck_at_commit = true;
				register_xact_callback();
			}
			break;
		case T_DropStmt:
			if (((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION)
			{
				recheck_at_commit = true;
				register_xact_callback();
			}
			break;
		case T_CreatedbStmt:
			rescan_at_commit = true;
			register_xact_callback();
			break;
		default:
			break;
	}
}

