/*-------------------------------------------------------------------------
 *
 * sweeper.h
 *	  What the sweeper (sweeper.c) asks of the notification sender
 *	  (notify.c).  The slots the background workers share are in shmem.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_SWEEPER_H
#define WORKLIST_SWEEPER_H

#include "shmem.h"
#include "worker.h"

/*
 * notify.c, the sender's side: milliseconds until the notifications
 * waiting for this database are due (0: now; -1: none wait), and the send
 * itself, in a transaction of its own.
 */
extern long wl_notify_due(void);
extern void wl_notify_send(void);

#endif							/* WORKLIST_SWEEPER_H */
