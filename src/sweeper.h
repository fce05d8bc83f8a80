/*-------------------------------------------------------------------------
 *
 * sweeper.h
 *	  What the sweeper (sweeper.c), the launcher and its utility hook
 *	  (launcher.c) and the notification sender (notify.c) ask of each
 *	  other.  The slots they share are described in stats.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_SWEEPER_H
#define WORKLIST_SWEEPER_H

#include "stats.h"

#include "postmaster/bgworker.h"
#include "storage/lock.h"

/* The slot of a database, or NULL; the caller holds WlShared.lock. */
extern WlSweeperSlot *wl_slot_find(WlShared *shared, Oid database);
/*
 * The slot of a database, taking a free one (or the one unused longest)
 * when it has none; NULL when every slot is busy.  The caller holds
 * WlShared.lock exclusively.
 */
extern WlSweeperSlot *wl_slot_take(WlShared *shared, Oid database);
/*
 * How many transactions hold a conflicting lock on the database that could
 * run a command needing it alone (its owner's, superusers'); *holders is
 * palloc'd and starts with them.
 */
extern int	wl_owner_lock_holders(Oid database, VirtualTransactionId **holders);
/* Is the process still there?  (A pid read from a slot may be stale.) */
extern bool wl_pid_alive(pid_t pid);
/*
 * A copy of the slot of a database, taken under WlShared.lock; false when
 * the database has had no sweeper since the server started.
 */
extern bool wl_slot_copy(Oid database, WlSweeperSlot *out);

/*
 * After an error caught in a background worker's loop: copy it (into cxt),
 * abort the transaction, and return the copy.
 */
extern ErrorData *wl_worker_recover(MemoryContext cxt);
/* Is a rate-limited log line due (at most one a minute)?  Updates *last. */
extern bool wl_log_due(TimestampTz *last);

/* Fill in a sweeper for a database (launcher.c and start_sweeper). */
extern void wl_sweeper_worker(BackgroundWorker *worker, Oid database,
							  int restart_time);

/* launcher.c: look at a database again (after CREATE EXTENSION, say). */
extern void wl_launcher_probe(Oid database);
/* launcher.c: wake the launcher (a database came or went). */
extern void wl_launcher_wake(void);

/*
 * notify.c, the sender's side: milliseconds until the notifications
 * waiting for this database are due (0: now; -1: none wait), and the send
 * itself, in a transaction of its own.
 */
extern long wl_notify_due(void);
extern void wl_notify_send(void);

#endif							/* WORKLIST_SWEEPER_H */
