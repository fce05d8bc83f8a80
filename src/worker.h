/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  Background-worker plumbing shared by the launcher, the sweeper and
 *	  the notification sender (worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_WORKER_H
#define WORKLIST_WORKER_H

#include "worklist.h"

#include "postmaster/bgworker.h"
#include "storage/lock.h"

/*
 * The entry points of the background workers, by name: a worker is
 * started by naming its function, never by calling into its code.
 */
#define WL_LAUNCHER_MAIN	"wl_launcher_main"
#define WL_SWEEPER_MAIN		"wl_sweeper_main"

/* At most one log line a minute for a repeated failure (wl_log_due). */
#define WL_LOG_EVERY_MS		(60 * 1000)

/* Pauses after failures in a row (wl_backoff_ms): 1 s doubling to 5 min. */
#define WL_BACKOFF_FIRST_MS	1000
#define WL_BACKOFF_MAX_MS	(300 * 1000)

/*
 * Describe a worker of this library that connects to a database
 * (InvalidOid: to none), started by the function named, after recovery.
 */
extern void wl_worker_fill(BackgroundWorker *worker, const char *function,
						   const char *name, Oid database, int restart_time);

/*
 * After an error caught in a background worker's loop: copy it (into cxt),
 * abort the transaction, and return the copy.
 */
extern ErrorData *wl_worker_recover(MemoryContext cxt);

/* A unit of a worker's work: a transaction, a snapshot, its activity. */
extern void wl_worker_xact_begin(const char *activity);
extern void wl_worker_xact_end(void);

/* Is a rate-limited log line due (at most one a minute)?  Updates *last. */
extern bool wl_log_due(TimestampTz *last);

/* The pause after the given number of failures in a row (at least one). */
extern int64 wl_backoff_ms(int failures);

/* Is the process still there?  (A pid read from shared memory may be stale.) */
extern bool wl_pid_alive(pid_t pid);

/*
 * How many transactions hold a conflicting lock on the database that could
 * run a command needing it alone (its owner's, superusers'); *holders is
 * palloc'd and starts with them.
 */
extern int	wl_owner_lock_holders(Oid database, VirtualTransactionId **holders);

#endif							/* WORKLIST_WORKER_H */
