/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  Plumbing every background worker of the extension shares: how one is
 *	  described to the postmaster, how its loop recovers from an error,
 *	  the transaction around a unit of its work, the rate limit of its log
 *	  lines, the pause after failures in a row, and whose locks on a
 *	  database a worker must leave it alone for.
 *
 * Nothing here knows the launcher, the sweeper or the sender: each of
 * them calls these and nothing of the others.
 *
 *-------------------------------------------------------------------------
 */
#include "worker.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/sinvaladt.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

void
wl_worker_fill(BackgroundWorker *worker, const char *function,
			   const char *name, Oid database, int restart_time)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = restart_time;
	strlcpy(worker->bgw_library_name, "worklist", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker->bgw_name, name, BGW_MAXLEN);
	strlcpy(worker->bgw_type, name, BGW_MAXLEN);
	worker->bgw_main_arg = ObjectIdGetDatum(database);
}

ErrorData *
wl_worker_recover(MemoryContext cxt)
{
	ErrorData  *edata;

	HOLD_INTERRUPTS();
	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	AbortCurrentTransaction();
	pgstat_report_activity(STATE_IDLE, NULL);
	RESUME_INTERRUPTS();
	return edata;
}

void
wl_worker_xact_begin(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

void
wl_worker_xact_end(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

bool
wl_log_due(TimestampTz *last)
{
	TimestampTz now = GetCurrentTimestamp();

	if (*last != 0 && !TimestampDifferenceExceeds(*last, now, WL_LOG_EVERY_MS))
		return false;
	*last = now;
	return true;
}

int64
wl_backoff_ms(int failures)
{
	int64		ms = (int64) WL_BACKOFF_FIRST_MS << Min(Max(failures - 1, 0), 20);

	return Min(ms, WL_BACKOFF_MAX_MS);
}

bool
wl_pid_alive(pid_t pid)
{
	return pid != 0 && BackendPidGetProc(pid) != NULL;
}

/*
 * The transactions that hold a lock on the database that a connection's
 * RowExclusiveLock conflicts with, and whose role could run a command that
 * needs the database to itself: DROP DATABASE, ALTER DATABASE ... RENAME /
 * SET TABLESPACE and CREATE DATABASE ... TEMPLATE take such a lock first
 * and then wait for every other session to leave, but only the database's
 * owner (a role with its privileges) and superusers get past the check
 * that follows.  Anybody else's lock is a command about to fail -- perhaps
 * retried in a loop to keep the sweeper out -- and is not counted.  A
 * prepared transaction's lock is not counted either (no such command can
 * be prepared).  Returns how many of holders[] (palloc'd, reordered) count.
 */
int
wl_owner_lock_holders(Oid database, VirtualTransactionId **holders_out)
{
	LOCKTAG		tag;
	VirtualTransactionId *holders;
	int			n;
	int			kept = 0;
	bool		own_xact = false;
	HeapTuple	tuple;
	Oid			owner = InvalidOid;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, database, 0);
	holders = GetLockConflicts(&tag, RowExclusiveLock, &n);
	*holders_out = holders;
	if (n == 0)
		return 0;

	if (!IsTransactionState())
	{
		StartTransactionCommand();
		own_xact = true;
	}
	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(database));
	if (HeapTupleIsValid(tuple))
	{
		owner = ((Form_pg_database) GETSTRUCT(tuple))->datdba;
		ReleaseSysCache(tuple);
	}
	for (int i = 0; i < n; i++)
	{
		PGPROC	   *proc = BackendIdGetProc(holders[i].backendId);
		Oid			role = proc ? proc->roleId : InvalidOid;

		if (!OidIsValid(role))
			continue;
		if (superuser_arg(role) ||
			(OidIsValid(owner) && has_privs_of_role(role, owner)))
			holders[kept++] = holders[i];
	}
	if (own_xact)
		CommitTransactionCommand();
	return kept;
}
