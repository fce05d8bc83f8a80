/*-------------------------------------------------------------------------
 *
 * channel.h
 *	  Each tenant's channel and the sending of its notifications
 *	  (channel.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef WORKLIST_CHANNEL_H
#define WORKLIST_CHANNEL_H

#include "worklist.h"

/* worklist.notify: while off, nothing is recorded nor sent. */
extern bool wl_notify_enabled;

/* Defines worklist.notify. */
extern void wl_channel_init(void);

/*
 * Notify tenants[i] of the counts events[i] (WL_CHANGE__N each) from this
 * transaction, just before it commits: the send of the changes that cannot
 * wait in shared memory for the sweeper.  Tenants without counts or
 * without a channel are passed over.
 */
extern void wl_channel_send_now(int n, char **tenants, uint32 **events);

/*
 * The sweeper's side: milliseconds until the notifications waiting for
 * this database are due (0: now; -1: none wait), and the send itself, in a
 * transaction of its own.
 */
extern long wl_channel_due(void);
extern void wl_channel_send(void);

#endif							/* WORKLIST_CHANNEL_H */
