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
#include "worker.h"

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
